"""Turn a text edit (``old_str`` → ``new_str``) into a line edit.

``str_replace`` names no line numbers, so we find them from the evidence a transcript holds,
best first: the numbered snippet the tool printed after the edit (it shows ``new_str`` in
place), a unified diff when the format records one, and the lines of the file seen so far.
Then the lines that ``old_str`` and ``new_str`` share at both ends are trimmed off: a line the
edit did not change does not make a view stale.
"""

from __future__ import annotations

import re

from fresh_ls.toolcalls.lines import LineEdit
from fresh_ls.toolcalls.numbered import Listing

# Lines of context the str_replace_editor prints before an edit (OpenHands, SWE-agent 1.x).
SNIPPET_CONTEXT = 4

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


def _norm(text: str) -> str:
    return text.expandtabs().rstrip()


def _matches_at(lines: dict[int, str], at: int, parts: list[str]) -> bool:
    """Whether ``parts`` (a text split on newlines) sits in ``lines`` starting at ``at``."""
    if len(parts) == 1:
        line = lines.get(at)
        return line is not None and _norm(parts[0]) in _norm(line)
    for offset, part in enumerate(parts):
        line = lines.get(at + offset)
        if line is None:
            return False
        if offset == 0:
            if not _norm(line).endswith(_norm(part)):
                return False
        elif offset == len(parts) - 1:
            if not _norm(line).startswith(_norm(part).rstrip()) and part.strip():
                return False
        elif _norm(line) != _norm(part):
            return False
    return True


def _candidates(lines: dict[int, str], parts: list[str]) -> list[int]:
    return [n for n in sorted(lines) if _matches_at(lines, n, parts)]


def start_from_snippet(listing: Listing, new_str: str) -> int | None:
    """Where the replacement starts, from the snippet printed after a ``str_replace``."""
    parts = new_str.split("\n")
    found = _candidates(listing.lines, parts) if new_str.strip() else []
    if listing.first > 1:
        # The snippet opens SNIPPET_CONTEXT lines before the edit unless the edit is near the top.
        expected = listing.first + SNIPPET_CONTEXT
        if expected in found or (not found and expected <= listing.last):
            return expected
    if len(found) == 1:
        return found[0]
    return None


def start_from_diff(diff: str, old_str: str, new_str: str) -> int | None:
    """Where the replacement starts, from the first hunk of a ``-U0`` style diff."""
    match = _HUNK.search(diff)
    if not match:
        return None
    old_start, old_len = int(match.group(1)), match.group(2)
    first_changed = old_start + 1 if old_len == "0" else old_start
    lead, _ = _shared_ends(old_str.split("\n"), new_str.split("\n"))
    return first_changed - lead


def start_from_known(known: dict[int, str], old_str: str) -> int | None:
    """Where ``old_str`` is, in the lines of the file seen so far (only if it is there once)."""
    if not old_str.strip():
        return None
    found = _candidates(known, old_str.split("\n"))
    return found[0] if len(found) == 1 else None


def _shared_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many lines ``old`` and ``new`` share at the start and at the end."""
    lead = 0
    while lead < min(len(old), len(new)) and old[lead] == new[lead]:
        lead += 1
    tail = 0
    limit = min(len(old), len(new)) - lead
    while tail < limit and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return lead, tail


# Stand-ins for the unknown text before old_str on its first line and after it on its last.
_PREFIX, _SUFFIX = "\0prefix\0", "\0suffix\0"


def _whole_lines(parts: list[str], prefix: str | None, suffix: str | None) -> list[str]:
    """The full lines a text occupies once the rest of its first and last line is added."""
    lines = list(parts)
    lines[0] = (_PREFIX if prefix is None else prefix) + lines[0]
    lines[-1] = lines[-1] + (_SUFFIX if suffix is None else suffix)
    return lines


def _around(
    old: list[str], first_line: str | None, last_line: str | None
) -> tuple[str | None, str | None]:
    """The text before ``old_str`` on its first line and after it on its last, if known."""
    if len(old) == 1:
        if first_line is None or first_line.count(old[0]) != 1 or not old[0]:
            return None, None
        at = first_line.index(old[0])
        return first_line[:at], first_line[at + len(old[0]) :]
    prefix = None
    if first_line is not None and first_line.endswith(old[0]):
        prefix = first_line[: len(first_line) - len(old[0])]
    suffix = None
    if last_line is not None and last_line.startswith(old[-1]):
        suffix = last_line[len(old[-1]) :]
    return prefix, suffix


def trimmed_edit(
    start: int,
    old_str: str,
    new_str: str,
    known: dict[int, str],
    how: str,
) -> LineEdit:
    """The line edit of replacing ``old_str`` (starting on line ``start``) by ``new_str``.

    ``old_str`` may start and end inside a line; the rest of those lines (known when the line
    was seen, otherwise a stand-in that only equals itself) is added before comparing, and the
    whole lines the two texts share at either end are left out: they did not change.
    """
    old, new = old_str.split("\n"), new_str.split("\n")
    prefix, suffix = _around(old, known.get(start), known.get(start + len(old) - 1))
    old_lines = _whole_lines(old, prefix, suffix)
    new_lines = _whole_lines(new, prefix, suffix)
    lead, tail = _shared_ends(old_lines, new_lines)
    changed = new_lines[lead : len(new_lines) - tail]
    texts: list[str | None] = [None if "\0" in t else t for t in changed]
    return LineEdit(start + lead, len(old) - lead - tail, texts, how)


def trimmed_lines(first: int, old_texts: list[str | None], new: list[str], how: str) -> LineEdit:
    """Replacing whole lines ``first..`` (``old_texts``, None when unknown) by ``new``."""
    if any(t is None for t in old_texts):
        return LineEdit(first, len(old_texts), list(new), how)
    old = [str(t) for t in old_texts]
    lead, tail = _shared_ends(old, new)
    return LineEdit(first + lead, len(old) - lead - tail, list(new[lead : len(new) - tail]), how)
