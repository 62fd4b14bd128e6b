"""Fixtures: a small workspace per test and pytest-lsp clients of real server processes."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from ._support import SCRATCH, Lsp, make_workspace, start_lsp, stop_lsp

StartLsp = Callable[..., Awaitable[Lsp]]


@pytest.fixture(scope="session", autouse=True)
def _remove_scratch_dirs() -> Iterator[None]:
    yield
    for path in SCRATCH:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The default workspace: cart.py, util.py, notes.md, web/price.ts, svc/stock.go."""
    return make_workspace(tmp_path / "ws")


@pytest_asyncio.fixture
async def start() -> AsyncIterator[StartLsp]:
    """Start more servers (other roots, flags, initializationOptions); all are stopped."""
    started: list[Lsp] = []

    async def _start(root: Path, *args: str, **options: Any) -> Lsp:
        conn = await start_lsp(root, *args, **options)
        started.append(conn)
        return conn

    yield _start
    for conn in reversed(started):
        await stop_lsp(conn)


@pytest_asyncio.fixture
async def fresh(ws: Path, start: StartLsp) -> Lsp:
    """A server on ``ws`` over stdio, its watcher on (the default configuration)."""
    return await start(ws)


@pytest_asyncio.fixture
async def quiet(ws: Path, start: StartLsp) -> Lsp:
    """A server on ``ws`` without the watcher: only requests and notifications sync it."""
    return await start(ws, "--no-watch")
