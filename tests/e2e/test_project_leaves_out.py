"""Over stdio, a client that declared ``freshLs.projectLeavesOut`` in its experimental
capabilities gets ``fresh/project`` answers without those keys; one that did not gets the
contract's whole answer, on the same server build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ._support import make_workspace
from .test_startup import answers_to, frame

pytestmark = pytest.mark.timeout(120)


def _project(root: Path, experimental: Any) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "fresh_ls", "serve", "--root", str(root), "--stdio",
         "--no-watch", "--state-dir", str(root.parent / f"state-{id(experimental)}")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    caps = {} if experimental is None else {"experimental": experimental}
    try:
        proc.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"capabilities": caps}})
            + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            + frame({"jsonrpc": "2.0", "id": 2, "method": "fresh/observe",
                     "params": {"session": "s", "path": "cart.py", "viewId": "v1"}})
            + frame({"jsonrpc": "2.0", "id": 3, "method": "fresh/project",
                     "params": {"session": "s", "policy": "all"}})
        )  # fmt: skip
        proc.stdin.flush()
        got = answers_to(proc.stdout, {1, 2, 3})
        assert "result" in got[3], got
        result: dict[str, Any] = got[3]["result"]
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 4, "method": "shutdown", "params": None}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        return result
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_client_gets_the_keys_it_reads(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    whole = _project(root, None)
    assert set(whole) == {
        "planId", "entries", "omitted", "markers", "usedBytes", "budgetBytes", "rendered"
    }  # fmt: skip
    lean = _project(root, {"freshLs": {"projectLeavesOut": ["rendered"]}})
    assert "rendered" not in lean
    assert lean["entries"] == whole["entries"] and lean["markers"] == whole["markers"]
    rebuilt = "".join(
        e["header"] + "\n" + e["text"] + ("" if e["text"].endswith("\n") else "\n")
        for e in lean["entries"]
    )
    assert rebuilt == whole["rendered"] and len(rebuilt.encode()) == lean["usedBytes"]
    # Another client's experimental capabilities change nothing.
    other = _project(root, {"someoneElse": {"projectLeavesOut": ["rendered"]}})
    assert set(other) == set(whole)


def test_the_python_client_gets_the_whole_answer(tmp_path: Path) -> None:
    """The Python client declares ``projectLeavesOut: ["rendered"]`` and rebuilds it: what
    its callers get is a bare client's whole answer, key for key and in the same order."""
    from fresh_ls.client import SyncClient

    root = make_workspace(tmp_path / "ws")
    whole = _project(root, None)
    with SyncClient.spawn(root, extra_args=["--no-watch"]) as client:
        client.observe("s", "cart.py", view_id="v1")
        got = client.project("s", policy="all")
    assert list(got) == list(whole)
    assert {k: v for k, v in got.items() if k != "planId"} == {
        k: v for k, v in whole.items() if k != "planId"
    }
