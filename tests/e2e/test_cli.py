"""The people-facing commands: ``status``, ``stale`` and ``project`` attach to a running server
through its endpoint file and print readable text (``--json`` for machines); ``demo`` runs the
whole job; without a server they say what to do."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fresh_ls.client import SyncClient

from ._support import Listening, make_workspace, replace_in, short_socket_path

pytestmark = pytest.mark.timeout(120)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fresh_ls", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Path]:
    root = make_workspace(tmp_path / "ws")
    server = Listening(root, f"unix:{short_socket_path()}")
    try:
        with SyncClient.attach(root) as client:
            client.observe("agent-1", "cart.py", view_id="call_7", first_line=9, last_line=9)
            client.observe("agent-1", "util.py", view_id="call_8")
        replace_in(root / "cart.py", "quantity * RATE", "quantity * RATE * 2")
        yield root
    finally:
        server.stop()


def test_status_prints_a_table_and_json(served: Path) -> None:
    text = cli(served, "status")
    assert text.returncode == 0, text.stderr
    assert f"serving {served}" in text.stdout
    assert "agent-1  2 views  1 stale" in text.stdout
    data = json.loads(cli(served, "status", "--json").stdout)
    assert data["sessions"] == [{"session": "agent-1", "views": 2, "stale": 1}]


def test_stale_prints_statuses_and_the_diff(served: Path) -> None:
    text = cli(served, "stale", "--session", "agent-1")
    assert text.returncode == 0, text.stderr
    assert "call_7  CHANGED  cart.py lines 9-9" in text.stdout
    assert "call_8  fresh" in text.stdout
    assert "+        subtotal = quantity * RATE * 2" in text.stdout
    data = json.loads(cli(served, "stale", "--session", "agent-1", "--json").stdout)
    assert {v["viewId"]: v["status"] for v in data["views"]} == {
        "call_7": "changed",
        "call_8": "fresh",
    }


def test_project_prints_markers_and_the_rendered_projection(served: Path) -> None:
    text = cli(served, "project", "--session", "agent-1", "--budget-bytes", "4096")
    assert text.returncode == 0, text.stderr
    assert "marker for call_7: [fresh-ls] call_7 showed cart.py lines 9-9" in text.stdout
    assert "subtotal = quantity * RATE * 2" in text.stdout
    data = json.loads(cli(served, "project", "--session", "agent-1", "--json").stdout)
    assert data["usedBytes"] == len(data["rendered"].encode())
    assert [m["viewId"] for m in data["markers"]] == ["call_7"]


def test_without_a_server_the_commands_say_what_to_do(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    out = cli(root, "status")
    assert out.returncode == 1
    assert "no running server" in out.stderr
    assert "fresh-ls serve --root" in out.stderr


def test_demo_runs_the_whole_job(tmp_path: Path) -> None:
    out = cli(tmp_path, "demo", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    statuses = {v["viewId"]: v["status"] for v in data["stale"]["views"]}
    assert statuses == {
        "call_1": "changed",
        "call_2": "changed",
        "call_3": "changed",
        "call_4": "fresh",
    }
    by = {
        v["viewId"]: [u["changedBy"] for u in v["units"] if u["status"] != "fresh"]
        for v in data["stale"]["views"]
    }
    assert by["call_3"] == ["self"]  # the agent's own fresh/didWrite
    assert by["call_2"] == ["outside"]  # a write nobody reported
    assert by["call_1"] == ["editor"]  # saved from an editor buffer (didSave)
    assert data["commit"] == {"ok": True, "changed": []}
    assert "replaced by the current code" in data["project"]["markers"][0]["text"]
    # the two-request exchange under placement anchored: the second reuses the first's
    # refresh byte for byte, after the same tool result
    first, second = data["anchored"]["requests"]
    assert first["markers"] >= 3 and first["refresh"] == "R1" and first["after"] == "call_4"
    assert second["refresh"] == "R1" and second["texts"] == first["texts"]
    assert data["anchored"]["reused"] is True
    assert data["anchored"]["prefixBytes"] > first["bytes"] - 100
