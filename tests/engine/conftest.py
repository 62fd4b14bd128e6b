"""In-process engine tests: a real Engine over real files and the real SQLite store, with a
clock the test moves by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fresh_ls.engine.engine import Engine

from ._support import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


@pytest.fixture
async def engine(root: Path, tmp_path: Path, clock: FakeClock) -> AsyncIterator[Engine]:
    engine = await Engine.open(root, tmp_path / "state", clock=clock)
    try:
        yield engine
    finally:
        await engine.close()
