"""Line arithmetic exactly as the wire contract defines it.

A line ends at LF; a CR before the LF belongs to the line and a lone CR never ends one.
Lines are 1-based and inclusive. An empty file has no lines. Keeping this in one module
means every layer agrees on what "lines 12-30" means.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def split_lines(text: str) -> list[str]:
    """Split into lines that keep their LF (the last line may lack one).

    ``str.splitlines`` is wrong for this contract: it also breaks on CR, form feed,
    U+2028 and friends, which would shift every line number after them.
    """
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def line_count(text: str) -> int:
    return len(split_lines(text))


def common_ends(a: Sequence[object], b: Sequence[object]) -> tuple[int, int]:
    """How long a head and then a tail ``a`` and ``b`` share (lists of lines, or bytes):
    ``a[:head] == b[:head]`` and ``a[len(a) - tail:] == b[len(b) - tail:]``, the tail within
    what the head left. By bisection over slice comparisons, each one a loop in C: after a
    one-line edit of a 5,000-line file, 2 x 13 compares instead of 10,000 in Python."""
    most = min(len(a), len(b))
    lo, hi = 0, most  # a[:lo] == b[:lo]; the head is at most ``hi`` long
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    head = lo
    lo, hi = 0, most - head  # the tail's length, within what the head left
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return head, lo


def split_lines_after(old_text: str, old_lines: list[str], text: str) -> list[str]:
    """``split_lines(text)``, given that ``old_lines`` is ``split_lines(old_text)``: the
    lines inside the common head and tail are the old line objects, and only the lines
    between them are split again (a one-line edit of a 5,000-line file splits one line,
    not 5,000, on the first request after it)."""
    head, tail = common_ends(old_text, text)
    # Whole lines inside the head: up to the last LF in it (a LF both texts hold there).
    start = old_text.rfind("\n", 0, head) + 1
    kept_head = old_text.count("\n", 0, start)
    # Whole lines inside the tail: from the first line start after a LF inside it.
    lf = old_text.find("\n", len(old_text) - tail)
    if lf < 0:
        stop_old, kept_from = len(old_text), len(old_lines)
    else:
        stop_old = lf + 1
        kept_from = old_text.count("\n", 0, stop_old)
    stop = stop_old + len(text) - len(old_text)
    return old_lines[:kept_head] + split_lines(text[start:stop]) + old_lines[kept_from:]

