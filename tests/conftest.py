"""Shared fixtures: the real agent runs under ../shared are optional."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

# The server `run`, `proxy` and the proxies' client start is shared and idles out
# (fresh_ls.autostart): in tests it goes 2 s after its last client left, not a minute after,
# so a suite of short runs leaves no crowd of idle servers behind.
os.environ.setdefault("FRESH_LS_SERVER_IDLE_S", "2")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared_fixtures() -> Path:
    path = SHARED / "fixtures"
    if not path.is_dir():
        pytest.skip(f"{path} is absent: the real agent runs are not available on this machine")
    return path


# -- in-process tests and tests that start processes ------------------------------------
#
# Every test is marked ``process`` (it may start processes: a server over stdio, an agent
# CLI, code-server, a helper interpreter) except those of ``IN_PROCESS``, which run in
# this process only: ``make unit-fast`` runs them alone (``-m "not process"``, about
# 500 tests in well under a minute). The list cannot claim too much: a test in it that
# starts a process fails (``_in_process_only``). A new test file is ``process`` until it
# is added here.

IN_PROCESS = (
    "core/",
    "engine/test_attribution.py",
    "engine/test_guard.py",
    "engine/test_ledger.py",
    "engine/test_moment.py",
    "engine/test_plans.py",
    "engine/test_session.py",
    "audit/test_audit_cli.py",
    "audit/test_audit_fixtures.py",
    "audit/test_audit_interpret.py",
    "audit/test_audit_malformed.py",
    "audit/test_audit_rule.py",
    "audit/test_audit_searches.py",
    "audit/test_audit_shared_runs.py",
    "conformance/test_ranges_properties.py",
    "server/test_encoded_results.py",
    "server/test_handler_table.py",
    "server/test_handshake.py",
    "server/test_lsp_converter.py",
    "server/test_project_leaves_out.py",
    "server/test_pygls_adapter.py",
    "server/test_write_all.py",
    "toolcalls/test_searches.py",
    "client/test_client_core.py",
    "engine/test_store.py",
)
TESTS = Path(__file__).resolve().parent


def _in_process(path: Path) -> bool:
    rel = path.resolve().relative_to(TESTS).as_posix()
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in IN_PROCESS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not _in_process(Path(str(item.path))):
            item.add_marker(pytest.mark.process)


@pytest.fixture(autouse=True)
def _in_process_only(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A test not marked ``process`` may not start one: the attempt fails where it is
    made, and the test fails at its end even when the code under test caught that."""
    if request.node.get_closest_marker("process") is not None:
        yield
        return
    tried: list[str] = []

    def refuse(*args: object, **kwargs: object) -> None:
        tried.append(repr(args[:2])[:200])
        raise AssertionError(
            "this test starts a process but its file is in IN_PROCESS (tests/conftest.py)"
        )

    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)
    monkeypatch.setattr(os, "fork", refuse)
    monkeypatch.setattr(os, "posix_spawn", refuse)
    yield
    assert not tried, f"started a process while not marked `process`: {tried}"
