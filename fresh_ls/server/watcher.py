"""Watch the root for writes no client reports: git checkout, formatters, other processes.

Requests re-check the disk anyway, so the watcher is about promptness (editors refresh
their panels on ``fresh/didInvalidate``), not correctness.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchfiles import DefaultFilter, awatch

from fresh_ls.statedir import STATE_DIR_NAME

log = logging.getLogger(__name__)

#: Directories whose churn never concerns an agent's views of source files.
IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
        ".venv",
        "venv",
        STATE_DIR_NAME,
        ".hypothesis",
    }
)


class RootFilter(DefaultFilter):
    def __init__(self, state_dir: Path) -> None:
        super().__init__(ignore_dirs=tuple(IGNORED_DIRS))
        self._state = str(state_dir)

    def __call__(self, change: object, path: str) -> bool:
        if path.startswith(self._state):
            return False
        return super().__call__(change, path)  # type: ignore[arg-type]


async def watch_root(
    root: Path,
    state_dir: Path,
    on_paths: Callable[[list[str]], None],
    stop: asyncio.Event,
    prepare: Callable[[list[str]], Awaitable[None]] | None = None,
) -> None:
    """Call ``on_paths`` with root-relative paths of changed files until ``stop`` is set,
    after awaiting ``prepare`` with them (parsing them off the event loop)."""
    try:
        async for changes in awatch(
            root,
            watch_filter=RootFilter(state_dir),
            stop_event=stop,
            debounce=50,
            step=20,
            recursive=True,
        ):
            rels = set()
            for _, path in changes:
                try:
                    rels.add(Path(path).relative_to(root).as_posix())
                except ValueError:
                    continue
            if rels:
                if prepare is not None:
                    await prepare(sorted(rels))
                on_paths(sorted(rels))
    except Exception:  # the watcher is an optimisation: requests still check the disk
        log.exception("file watcher stopped")
