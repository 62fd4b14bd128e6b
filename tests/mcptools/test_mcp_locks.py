"""Writers that never wait on each other for long (issue 23), with real ``fresh-ls mcp``
processes and a real lock holder in another process that is stopped (SIGSTOP) while it
holds a file's lock: writes of other files land at once, a write of that file is denied
``busy`` (retryable) within the wait, and once the holder is killed, or is past its lease,
the next write lands."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fresh_ls.mcp.files import LOCK_WAIT_S
from tests.e2e._support import make_workspace
from tests.mcptools._support import call, mcp_client

pytestmark = pytest.mark.timeout(120)

#: Takes the write lock of one file as a ``fresh-ls mcp`` does, says so, and holds it.
HOLDER = """
import asyncio, sys, time
from pathlib import Path
from fresh_ls.mcp.files import write_lock

async def main() -> None:
    async with write_lock(Path(sys.argv[1]), sys.argv[2], "stuck"):
        print("held", flush=True)
        await asyncio.sleep(3600)

asyncio.run(main())
"""
#: A generous sanity bound for a write nobody else touches (never a performance figure).
PROMPT_S = 10.0
#: Issue 23's bound for an edit of another file while a writer is stopped holding its lock:
#: under LOCK_WAIT_S, so a wait on that lock cannot pass unseen.
LANDS_S = 1.0


@pytest.fixture
def ws() -> Iterator[Path]:
    scratch = Path(tempfile.mkdtemp(prefix="fls-lock-"))
    try:
        yield make_workspace(scratch / "ws")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def hold(state: Path, rel: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(state), rel], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    os.kill(proc.pid, signal.SIGSTOP)  # stopped inside its write
    return proc


def kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)


async def test_a_stopped_writer_blocks_only_its_own_file(ws: Path) -> None:
    state = ws / ".fresh-ls"
    holder = hold(state, "cart.py")
    try:
        async with mcp_client(ws) as session:
            await call(session, "read", path="util.py")
            await call(session, "read", path="cart.py")
            started = time.monotonic()
            is_error, text, _ = await call(
                session, "edit", path="util.py", old_text="a + b", new_text="b + a"
            )
            assert not is_error, text
            landed = time.monotonic() - started
            print(f"edit of another file landed in {landed:.3f} s")
            # The bound: it never waits on the stopped writer's lock (which would
            # take LOCK_WAIT_S, then a busy deny).
            assert landed < LANDS_S, landed
            started = time.monotonic()
            is_error, text, _ = await call(session, "write", path="fresh.py", content="X = 1\n")
            assert not is_error, text
            assert time.monotonic() - started < LANDS_S
            started = time.monotonic()
            result = await session.call_tool(
                "edit", {"path": "cart.py", "old_text": "return 1", "new_text": "return 2"}
            )
            waited = time.monotonic() - started
            assert result.is_error and (result.meta or {}).get("fresh-ls") == {
                "verdict": "deny", "reason": "busy", "retryable": True,
            }, result  # fmt: skip
            text = "".join(getattr(b, "text", "") for b in result.content)
            assert text.startswith("DENIED") and f"pid {holder.pid}" in text, text
            assert LOCK_WAIT_S <= waited < LOCK_WAIT_S + PROMPT_S
            assert "return 1" in (ws / "cart.py").read_text()
            kill(holder)  # the kernel drops a dead holder's lock
            is_error, text, _ = await call(
                session, "edit", path="cart.py", old_text="return 1", new_text="return 2"
            )
            assert not is_error, text
        assert "return 2" in (ws / "cart.py").read_text()
        assert "b + a" in (ws / "util.py").read_text()
    finally:
        kill(holder)


async def test_a_holder_past_its_lease_is_broken_and_said_so(ws: Path) -> None:
    state = ws / ".fresh-ls"
    holder = hold(state, "cart.py")
    try:
        (lock,) = (state / "locks").iterdir()
        record = json.loads(lock.read_text())
        assert (record["pid"], record["session"]) == (holder.pid, "stuck")
        record["since"] -= 24 * 3600  # held (stopped) for a day
        lock.write_text(json.dumps(record))
        with tempfile.TemporaryFile("w+") as errlog:
            async with mcp_client(ws, errlog=errlog) as session:
                await call(session, "read", path="cart.py")
                is_error, text, _ = await call(
                    session, "edit", path="cart.py", old_text="return 1", new_text="return 2"
                )
                assert not is_error, text
            errlog.seek(0)
            log = errlog.read()
        assert "broke the write lock of cart.py" in log and f"pid {holder.pid}" in log, log
        assert "return 2" in (ws / "cart.py").read_text()
    finally:
        kill(holder)
