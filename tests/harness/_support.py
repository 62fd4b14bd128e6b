"""Shared by the harness tests: the scratch repository's files and small helpers."""

from __future__ import annotations

from pathlib import Path

CART = """RATE = 10


class Cart:
    def __init__(self):
        self.items = []

    def total(self, quantity):
        subtotal = quantity * RATE
        return subtotal


def helper():
    return 1
"""


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))
