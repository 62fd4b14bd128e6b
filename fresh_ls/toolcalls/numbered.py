"""Read line numbers back out of what a tool printed.

Transcripts rarely say which lines a tool showed in a structured field: the truth is in the
printed text (``cat -n`` output, a SWE-agent window). Taking the numbers from the output rather
than from the request arguments also handles ranges the tool clipped or refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CAT_N = re.compile(r"^ *(\d+)\t(.*)$")
_WINDOW_LINE = re.compile(r"^(\d+):(.*)$")
_WINDOW_HEADER = re.compile(r"^\[File: (.+?) \((\d+) lines total\)\]\s*$", re.M)
_CAT_N_HEADER = re.compile(r"Here's the result of running `cat -n` on (a snippet of )?(.+?):\r?\n")


@dataclass
class Listing:
    """Consecutive numbered lines a tool printed: ``first..last`` with their text."""

    first: int
    last: int
    lines: dict[int, str]


def _first_block(pairs: list[tuple[int, str]]) -> Listing | None:
    """The first run of consecutive line numbers.

    Anything after a gap is not trusted: it is usually the agent's own text or a clipped tail.
    """
    if not pairs:
        return None
    first = pairs[0][0]
    lines: dict[int, str] = {}
    expected = first
    for number, text in pairs:
        if number != expected:
            break
        lines[number] = text
        expected += 1
    return Listing(first, expected - 1, lines)


def parse_cat_n(text: str, start_at: int | None = None) -> Listing | None:
    """Lines of a ``cat -n`` style listing (``<spaces>N<TAB>text``), from ``start_at`` on."""
    body = text.replace("\r\n", "\n")
    if start_at is not None:
        body = body[start_at:]
    pairs: list[tuple[int, str]] = []
    for raw in body.split("\n"):
        match = _CAT_N.match(raw)
        if match:
            pairs.append((int(match.group(1)), match.group(2)))
        elif pairs:
            break
    return _first_block(pairs)


def cat_n_header(text: str) -> tuple[str, bool, int] | None:
    """``(path, is_snippet, offset after header)`` of an editor listing, if there is one."""
    match = _CAT_N_HEADER.search(text)
    if not match:
        return None
    return match.group(2), bool(match.group(1)), match.end()


@dataclass
class Window:
    """A SWE-agent 0.x editor window: the file, its length and the lines shown."""

    path: str
    total: int
    listing: Listing | None


def parse_window(text: str) -> Window | None:
    """The first ``[File: PATH (N lines total)]`` window in ``text``."""
    body = text.replace("\r\n", "\n")
    header = _WINDOW_HEADER.search(body)
    if not header:
        return None
    pairs: list[tuple[int, str]] = []
    for raw in body[header.end() :].lstrip("\n").split("\n"):
        if raw.startswith("(") and raw.endswith(("more lines above)", "more lines below)")):
            if pairs:
                break
            continue
        match = _WINDOW_LINE.match(raw)
        if not match:
            break
        pairs.append((int(match.group(1)), match.group(2)))
    return Window(header.group(1), int(header.group(2)), _first_block(pairs))


def plain_lines(text: str) -> list[str]:
    """Split tool output into lines the way a file splits (a final newline ends a line)."""
    body = text.replace("\r\n", "\n")
    if not body:
        return []
    lines = body.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
