"""One rig (a root, its server, socket clients and MCP processes) for the whole model suite:
the examples keep apart by name, and a mutant test only restarts the server through the
mutant launcher."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._rig import Rig


@pytest.fixture(scope="session")
def rig() -> Iterator[Rig]:
    rig = Rig()
    try:
        yield rig
    finally:
        rig.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from ._run import FIGURES, FULL

    if FIGURES:
        terminalreporter.section(f"protocol model figures ({'full' if FULL else 'quick'} mode)")
        for line in FIGURES:
            terminalreporter.write_line(line)
