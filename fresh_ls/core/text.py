"""Line arithmetic exactly as the wire contract defines it.

A line ends at LF; a CR before the LF belongs to the line and a lone CR never ends one.
Lines are 1-based and inclusive. An empty file has no lines. Keeping this in one module
means every layer agrees on what "lines 12-30" means.
"""

from __future__ import annotations

import hashlib


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
