"""A corrupt view store is one line naming it and the way out, never a traceback; `fresh-ls
doctor` says what is wrong and `--fix` moves the store aside, keeping it (issue 22, item 5;
before, serve printed a 37-line traceback and `run` blamed "another server")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", *args],
        cwd=cwd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _corrupt(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".fresh-ls").mkdir(parents=True, mode=0o700)
    (root / ".fresh-ls" / "views.sqlite3").write_bytes(b"this is not sqlite" * 100)
    return root


def test_serve_on_a_corrupt_store_says_so_in_one_line(tmp_path: Path) -> None:
    root = _corrupt(tmp_path)
    done = _cli(root, "serve", "--root", ".", "--stdio")
    assert done.returncode == 4
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "views.sqlite3 is not a readable view store" in done.stderr
    assert "fresh-ls doctor --fix" in done.stderr


def test_run_names_the_store_not_another_server(tmp_path: Path) -> None:
    root = _corrupt(tmp_path)
    done = _cli(root, "run", "--root", ".", "--", "true")
    assert done.returncode != 0
    assert "another server is live" not in done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "doctor" in done.stderr


def test_doctor_finds_and_fixes_without_losing_the_file(tmp_path: Path) -> None:
    root = _corrupt(tmp_path)
    (root / ".fresh-ls" / "endpoint.json").write_text(json.dumps({"pid": 2**22 + 12345}))
    done = _cli(root, "doctor", "--json")
    assert done.returncode == 1
    found = {f["check"]: f for f in json.loads(done.stdout)}
    assert not found["view store"]["ok"] and not found["endpoint"]["ok"]
    done = _cli(root, "doctor", "--fix")
    assert done.returncode == 0, done.stdout
    assert "moved aside" in done.stdout and "removed" in done.stdout
    kept = list((root / ".fresh-ls").glob("views.sqlite3.broken-*"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"this is not sqlite")
    assert not (root / ".fresh-ls" / "endpoint.json").exists()
    done = _cli(root, "status")  # a server starts on an empty store again
    assert "Traceback" not in done.stderr
    assert _cli(root, "doctor").returncode == 0
