"""Fixtures for the proxy tests: a scratch workspace, a scripted model, the proxy CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.proxy.scripted_model import ScriptedModel

REPO = Path(__file__).resolve().parents[2]


class ProxyProcess:
    """``fresh-ls proxy`` as a child process."""

    def __init__(self, root: Path, upstream: str, *extra: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fresh_ls",
                "proxy",
                "--root",
                str(root),
                "--upstream",
                upstream,
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        self.first_line = self.proc.stdout.readline().rstrip("\n")
        if not self.first_line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"fresh-ls proxy printed nothing; stderr:\n{err}")
        self.url = self.first_line.split(" ")[2]
        self.root = root

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stderr.read() if self.proc.stderr else ""

    def record(self) -> dict[str, object]:
        return dict(json.loads((self.root / ".fresh-ls" / "proxy.json").read_text()))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return Path(os.path.realpath(root))


@pytest.fixture
def start_model(workspace: Path) -> Iterator[object]:
    started: list[ScriptedModel] = []

    def start(script: list[object], root: Path | None = None) -> ScriptedModel:
        model = ScriptedModel(script, root or workspace)  # type: ignore[arg-type]
        model.start()
        started.append(model)
        return model

    yield start
    for model in started:
        model.stop()


@pytest.fixture
def start_proxy() -> Iterator[object]:
    started: list[ProxyProcess] = []

    def start(root: Path, upstream: str, *extra: str) -> ProxyProcess:
        proxy = ProxyProcess(root, upstream, *extra)
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()
