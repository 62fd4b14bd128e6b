"""Which lines a view covers, and what the agent saw there: the contract's range rules.

Pure functions: no pygls, no disk. A missing ``firstLine``/``lastLine`` means the whole
file; ``lastLine`` past the end is clamped; an empty file's whole view is 1..0; a ``text``
a tool returned is aligned to the range (its stripped final newline restored).
"""

from __future__ import annotations

from fresh_ls.core.sources import Source
from fresh_ls.core.text import common_ends
from fresh_ls.errors import InvalidParams


def observed_range(
    first_line: int | None, last_line: int | None, n: int, given: list[str] | None
) -> tuple[int, int, bool]:
    """Resolve the observed range per the contract; (first, last, is_whole_file)."""
    if first_line is None and last_line is None:
        return 1, n, True
    first = 1 if first_line is None else first_line
    last = last_line if last_line is not None else (first + len(given) - 1 if given else n)
    if first < 1:
        raise InvalidParams(f"firstLine: must be 1 or more, got {first}")
    if n == 0 and first == 1:
        return 1, 0, True  # an empty file has no lines: any range from line 1 is all of it
    # firstLine past the end first: without a lastLine, ``last`` is the file's last line
    # and the complaint must name the field the client sent.
    if first > n:
        raise InvalidParams(
            f"firstLine: {first} is past the end of the file ({n} lines); "
            "observe a range inside the file"
        )
    if last < first:
        raise InvalidParams(f"lastLine: {last} is before firstLine {first}")
    last = min(last, n)
    return first, last, first == 1 and last == n


def observed_lines(source: Source, first: int, last: int, given: list[str] | None) -> list[str]:
    """What the agent saw for ``first..last``: the given text aligned to the range (the
    final newline that tools strip is restored), else the current lines."""
    current = source.lines[first - 1 : last]
    if given is None:
        return list(current)
    count = last - first + 1
    seen = list(given[:count]) + [""] * max(0, count - len(given))
    if seen and current:
        tail, disk = seen[-1], current[-1]
        if tail and not tail.endswith("\n") and disk.endswith("\n"):
            seen[-1] = tail + (
                "\r\n" if disk.endswith("\r\n") and not tail.endswith("\r") else "\n"
            )
        elif tail.endswith("\n") and not disk.endswith("\n") and tail[:-1] == disk:
            seen[-1] = disk
    return seen


def changed_span(before: Source | None, after: Source) -> tuple[int, int, int]:
    """Where a write took ``before`` to ``after``: ``(start, end_before, end_after)``, the
    lines ``start + 1 ..= end_after`` of ``after`` replaced lines ``start + 1 ..= end_before``
    of ``before`` (the common head and tail left out). No ``before``: all of ``after``."""
    if before is None:
        return 0, 0, after.line_count
    a, b = before.lines, after.lines
    start, tail = common_ends(a, b)
    return start, len(a) - tail, len(b) - tail


def changed_lines(before: Source | None, after: Source | None) -> tuple[int, int]:
    """The line span of ``after`` that differs from ``before`` (common prefix/suffix)."""
    if after is None or before is None:
        return 1, max(1, after.line_count if after else 1)
    start, _, end_b = changed_span(before, after)
    return start + 1, max(start + 1, end_b)


def observed_spans(ranges: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """The ranges of a sparse view (``fresh/observe`` ``ranges``, v1.3) checked against a
    file of ``n`` lines: each as a range view's ``firstLine``/``lastLine`` (a first line
    past the end is refused, a last line past it clamped). The params already hold them
    ascending, not overlapping and not reversed."""
    spans = []
    for i, (first, last) in enumerate(ranges):
        if first > n:
            raise InvalidParams(
                f"ranges[{i}]: firstLine {first} is past the end of the file ({n} lines); "
                "observe lines inside the file"
            )
        spans.append((first, min(last, n)))
    return spans


def split_given(spans: list[tuple[int, int]], given: list[str]) -> list[list[str]]:
    """A sparse view's ``text`` (the shown lines joined in order) cut into one list of
    lines per range; missing lines are empty, so they differ from any line on disk."""
    out = []
    at = 0
    for first, last in spans:
        count = last - first + 1
        out.append(list(given[at : at + count]))
        at += count
    return out
