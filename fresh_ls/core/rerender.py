"""Re-rendering a tool result from current code, the way the tool would print it now.

A view's first change is cheapest patched in place: the tool result stays where it is, and
only its lines from the first changed one on differ, so a prompt cache still serves the
conversation up to there, and the view's unchanged lines need no second copy. A read of
lines A-B printed again shows the current lines A-B under the same decoration (a line
number, a tab, an arrow: whatever the tool puts before each line), so re-rendering needs no
knowledge of the tool: find where each observed line's text stands in the result, and put
the current text of the same line there.

``align`` finds those places or gives up (None): a result that does not hold the observed
lines in order, one line per line, or holds them more than once, is never patched; the
view is then replaced by a marker as before. No guessing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from fresh_ls.core.text import split_lines

#: What a tool may print before a line: nothing, or a line number and one separator (cat -n
#: puts a tab, SWE-agent a colon, Claude Code an arrow), with spaces around.
_NUMBERED = re.compile(r"\s*(\d+)(?:\t|:|\u2192|\|| )?")

Span = tuple[int, int]  # [start, end) of one line's text in the result, line ending excluded


def _body(line: str) -> str:
    """A line without its line ending (LF, and a CR before it)."""
    if line.endswith("\n"):
        line = line[:-1]
    return line.removesuffix("\r")


def align(result: str, observed: list[str]) -> list[Span] | None:
    """Where each observed line's text stands in ``result``: one span per observed line,
    on consecutive lines of ``result``, each line ending with that text; None when there is
    no such place, or more than one, or nothing to anchor on (only blank lines)."""
    if not observed or not any(_body(t).strip() for t in observed):
        return None
    lines = split_lines(result)
    starts = []
    at = 0
    for line in lines:
        starts.append(at)
        at += len(line)
    bodies = [_body(t) for t in observed]
    n = len(bodies)
    found: list[Span] | None = None
    for j in range(len(lines) - n + 1):
        if not _body(lines[j]).endswith(bodies[0]):
            continue
        spans = []
        for i, body in enumerate(bodies):
            text = _body(lines[j + i])
            if not text.endswith(body):
                break
            end = starts[j + i] + len(text)
            spans.append((end - len(body), end))
        else:
            if not _decorations(result, starts[j : j + n], spans):
                continue
            if found is not None:
                return None  # the observed lines stand twice: which one the model read is unknown
            found = spans
    return found


def _decorations(result: str, starts: list[int], spans: list[Span]) -> bool:
    """Whether what stands before each line's text is decoration, not code: nothing on
    every line, or a line number that counts up by one from line to line."""
    prefixes = [result[a:s] for a, (s, _) in zip(starts, spans, strict=True)]
    if all(p == "" for p in prefixes):
        return True
    numbers = []
    for p in prefixes:
        m = _NUMBERED.fullmatch(p)
        if m is None:
            return False
        numbers.append(int(m.group(1)))
    return all(b == a + 1 for a, b in itertools.pairwise(numbers))


def rerender(result: str, spans: Sequence[Span], current: list[str]) -> str:
    """``result`` with each aligned line's text replaced by the current text of the same
    line (``current``: the lines the view's range holds now, as many as ``spans``)."""
    assert len(current) == len(spans)
    out = []
    at = 0
    for (start, end), line in zip(spans, current, strict=True):
        out.append(result[at:start])
        out.append(_body(line))
        at = end
    out.append(result[at:])
    return "".join(out)
