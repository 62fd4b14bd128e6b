"""A scratch repository and a real ``fresh-ls serve --stdio`` on it for each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fresh_ls.client import SyncClient

from ._support import CART


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "cart.py").write_text(CART)
    (root / "notes.md").write_text("# notes\n\nnothing yet\n")
    return root


@pytest.fixture
def fresh(repo: Path) -> Iterator[SyncClient]:
    with SyncClient.spawn(repo) as client:
        yield client
