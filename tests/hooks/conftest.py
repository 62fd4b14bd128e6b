"""Fixtures for the hook tests: a scratch project, a real listening server on it, and the
hook run as Claude Code runs it (a child process, the event on stdin)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return Path(os.path.realpath(root))


class Server:
    """``fresh-ls serve --root ROOT --listen`` as a child process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fresh_ls", "serve", "--root", str(root), "--listen"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=ENV,
        )
        endpoint = root / ".fresh-ls" / "endpoint.json"
        deadline = time.monotonic() + 30
        while not endpoint.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise AssertionError(f"the server did not start: {err}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()


@pytest.fixture
def server(project: Path) -> Iterator[Server]:
    srv = Server(project)
    yield srv
    srv.stop()


@dataclass
class HookRun:
    code: int
    stdout: str
    stderr: str

    def context(self) -> str | None:
        """The additionalContext answered, or None when nothing was printed."""
        if not self.stdout.strip():
            return None
        answer = json.loads(self.stdout)
        out = answer["hookSpecificOutput"]
        assert out["hookEventName"] == "UserPromptSubmit"
        return str(out["additionalContext"])


def run_hook(event: dict[str, Any] | str, *args: str, cwd: Path | None = None) -> HookRun:
    """``python -m fresh_ls hook claude-code`` with ``event`` on stdin, as Claude Code runs
    it (its environment has no CLAUDE_PROJECT_DIR here unless the event's cwd says)."""
    env = {k: v for k, v in ENV.items() if k != "CLAUDE_PROJECT_DIR"}
    data = event if isinstance(event, str) else json.dumps(event)
    done = subprocess.run(
        [sys.executable, "-m", "fresh_ls", "hook", "claude-code", *args],
        input=data,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    return HookRun(done.returncode, done.stdout, done.stderr)
