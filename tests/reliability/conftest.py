"""The reliability suite: quick by default (``make test``), full with ``FRESH_LS_SOAK=1``
(``make soak``). Each test records one line of figures; they are printed at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ._support import FIGURES, FULL, make_workspace, remove_scratch


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section(f"reliability figures ({'full' if FULL else 'quick'} mode)")
    for line in FIGURES:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session", autouse=True)
def _scratch() -> Iterator[None]:
    yield
    remove_scratch()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")

