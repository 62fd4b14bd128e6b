"""`status`, `stale` and `project` answer from the stored views when no server runs (after
`fresh-ls run` or the proxy ended), and `--session` takes the id an agent prints (issue 22,
item 4; both failed before: "no running server")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fresh_ls.client import SyncClient


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", *args, "--root", str(root)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_stored_views_answer_without_a_running_server(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    with SyncClient.spawn(root) as client:  # a server that ends, like run's
        client.observe("claude-code-session-id:8f2e-11", "a.py", view_id="v1")
    (root / "a.py").write_text("def a():\n    return 2\n")
    done = _cli(root, "status")
    assert done.returncode == 0, done.stderr
    assert "claude-code-session-id:8f2e-11" in done.stdout and "1 view" in done.stdout
    assert "no running server" in done.stderr and "stored" in done.stderr
    done = _cli(root, "stale", "--session", "8f2e-11", "--json")
    assert done.returncode == 0, done.stderr
    (view,) = json.loads(done.stdout)["views"]
    assert view["viewId"] == "v1" and view["status"] == "changed"


def test_nothing_stored_is_still_an_error(tmp_path: Path) -> None:
    done = _cli(tmp_path, "status")
    assert done.returncode == 1 and "Traceback" not in done.stderr
