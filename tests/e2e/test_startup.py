"""``serve --stdio`` answers ``initialize`` at once, and the server that loads behind the
answer is the one the handshake promised: initialized with the client's options, refusing
a second ``initialize``, serving requests sent right behind the first. The wall time is
measured by benchmarks/bench_coldstart.py; the bound here only catches a hang."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from ._support import make_workspace

pytestmark = pytest.mark.timeout(120)

#: A sanity bound for a loaded, shared machine, not the target (0.5 s, benchmarked).
HANDSHAKE_BOUND_S = 20.0


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body


def read_message(stream: IO[bytes]) -> dict[str, Any]:
    length = None
    while True:
        line = stream.readline()
        assert line, "the server closed stdout"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    assert length is not None
    return dict(json.loads(stream.read(length)))


def answers_to(stream: IO[bytes], ids: set[int]) -> dict[int, dict[str, Any]]:
    """The answers to ``ids``, in whatever order they come (notifications skipped)."""
    got: dict[int, dict[str, Any]] = {}
    while set(got) != ids:
        message = read_message(stream)
        if message.get("id") in ids:
            got[message["id"]] = message
    return got


def test_initialize_is_answered_and_the_server_behind_it_keeps_its_word(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-P",
            "-m",
            "fresh_ls",
            "serve",
            "--root",
            str(root),
            "--stdio",
            "--no-watch",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        t0 = time.monotonic()
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": None,
                "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}},
                "initializationOptions": {"budgetBytes": 4321, "policy": "all"},
            },
        }
        # Everything a harness sends at once, before any answer.
        proc.stdin.write(
            frame(init)
            + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            + frame(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "fresh/observe",
                    "params": {"session": "s", "path": "cart.py", "viewId": "v1"},
                }
            )
            + frame(
                {"jsonrpc": "2.0", "id": 3, "method": "fresh/project", "params": {"session": "s"}}
            )
            + frame({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": init["params"]})
        )
        proc.stdin.flush()
        first = read_message(proc.stdout)
        elapsed = time.monotonic() - t0
        assert first["id"] == 1, first
        assert first["result"]["capabilities"]["positionEncoding"] == "utf-8"
        assert first["result"]["serverInfo"]["name"] == "fresh-ls"
        assert elapsed < HANDSHAKE_BOUND_S
        answers = answers_to(proc.stdout, {2, 3, 4})
        assert answers[2]["result"]["viewId"] == "v1"
        project = answers[3]["result"]
        # The options of the early-answered initialize reached the connection.
        assert project["budgetBytes"] == 4321
        assert [m["viewId"] for m in project["markers"]] == ["v1"]  # policy all
        again = answers[4]
        assert again["error"]["code"] == -32600, again
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 5, "method": "shutdown", "params": None}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        # pygls's own answer to the first initialize agreed with the one sent early.
        assert b"initialize was answered before" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
