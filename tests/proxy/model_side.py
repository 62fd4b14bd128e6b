"""Checks made where the model sees the request: every piece of current code that
fresh-ls put in it is, byte for byte, what the disk held when the request arrived.

An independent reading of the refresh format (``fresh_ls.core.ledger``): each entry is one
header line naming the path, the lines and the byte count, then exactly that many bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tests.proxy.scripted_model import Record

_ENTRY = re.compile(r"\[(R\d+\.\d+)\] (\S+) lines (\d+)-(\d+), (\d+) bytes[^\n]*\n")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def refresh_entries(record: Record) -> list[tuple[str, str, int, int, str]]:
    """(label, path, first line, last line, text) of every refresh entry in the request."""
    found = []
    for text in _strings(record.body):
        for m in _ENTRY.finditer(text):
            raw = text[m.end() :].encode("utf-8")[: int(m.group(5))]
            found.append(
                (m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), raw.decode("utf-8"))
            )
    return found


def refresh_problems(record: Record) -> list[str]:
    """Refresh entries whose text is not the disk's lines on arrival."""
    problems = []
    for label, path, first, last, text in refresh_entries(record):
        disk = record.files.get(path)
        lines = disk.splitlines(keepends=True) if disk is not None else []
        if "".join(lines[first - 1 : last]) != text:
            problems.append(f"{label} {path} lines {first}-{last} is not the disk's text")
    return problems


def shown_part(text: str) -> str:
    """What a tool result still shows of the tool's own output: everything before the
    first fresh-ls text (a marker, or a refresh placed after it)."""
    return text.split("[fresh-ls]", 1)[0]
