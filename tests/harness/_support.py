"""Shared by the harness tests: the scratch repository's files and small helpers."""

from __future__ import annotations

from pathlib import Path

#: A small module: a constant, a class with two methods, a function.
CART = (Path(__file__).resolve().parents[2] / "fixtures" / "code" / "cart.py").read_text()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))
