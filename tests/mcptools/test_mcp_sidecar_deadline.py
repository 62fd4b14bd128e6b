"""A fresh-ls server that is alive but does not answer (SIGSTOP) makes an MCP tool call fail
closed within its deadline, with a clear error, instead of hanging the agent (issue 21,
finding 11: before, the call waited for as long as the server stayed stopped)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.mcptools._support import call, mcp_client

pytestmark = pytest.mark.timeout(120)


async def test_a_stopped_server_fails_the_call_closed_in_seconds() -> None:
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="fresh-ls-mcp-deadline-")))
    (root / "a.py").write_text("def a():\n    return 1\n")
    server = subprocess.Popen(
        [sys.executable, "-P", "-m", "fresh_ls", "serve", "--root", str(root), "--listen"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (root / ".fresh-ls" / "endpoint.json").exists():
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        async with mcp_client(root, "--session", "agent") as session:
            is_error, text, _ = await call(session, "read", path="a.py")
            assert not is_error, text
            os.kill(server.pid, signal.SIGSTOP)
            started = time.monotonic()
            is_error, text, structured = await call(
                session, "edit", path="a.py", old_text="return 1", new_text="return 2"
            )
            waited = time.monotonic() - started
            os.kill(server.pid, signal.SIGCONT)
            assert is_error and "did not answer within 10 s" in text, text
            # An error a program may retry: the call may succeed once the server answers.
            assert (structured["verdict"], structured["retryable"]) == ("error", True)
            assert waited < 40, waited  # a generous bound: the deadline is 10 s
        assert (root / "a.py").read_text() == "def a():\n    return 1\n"  # nothing written
    finally:
        os.kill(server.pid, signal.SIGCONT)
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
