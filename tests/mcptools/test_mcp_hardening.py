"""``fresh-ls mcp`` against hostile paths and files (issue 21): writes into version-control
or fresh-ls state are denied for good, the state dir is not readable, a FIFO or a directory
is a clear error (never a hang, never a traceback), a range of a file over the server's
size limit is readable, and an edit of a CRLF file matches and writes by lines."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fresh_ls.core.sources import MAX_FILE_BYTES as MAX_READ_BYTES
from tests.e2e._support import make_workspace
from tests.mcptools._support import call, mcp_client

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def ws() -> Iterator[Path]:
    # A short root: the spawned server's Unix socket lives in its state dir.
    scratch = Path(tempfile.mkdtemp(prefix="fls-mcph-"))
    try:
        yield make_workspace(scratch / "ws")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def test_writes_into_git_and_the_state_dir_are_denied_for_good(ws: Path) -> None:
    git = ws / ".git"
    git.mkdir()
    (git / "config").write_text("[core]\n\tbare = false\n")
    before = (git / "config").read_bytes()
    hostile = "[core]\n\tfsmonitor = touch /tmp/owned\n"
    async with mcp_client(ws) as session:
        for _ in range(2):  # the retry of a refused write stays refused
            is_error, text, _ = await call(session, "write", path=".git/config", content=hostile)
            assert is_error and text.startswith("DENIED"), text
            assert ".git" in text and "version control" in text, text
        is_error, text, _ = await call(
            session, "edit", path=".git/config", old_text="bare = false", new_text="bare = true"
        )
        assert is_error and text.startswith("DENIED") and ".git" in text, text
        await call(session, "read", path="util.py")  # the fresh-ls server exists now
        assert (ws / ".fresh-ls" / "endpoint.json").exists()
        for path in (".fresh-ls/endpoint.json", ".fresh-ls/new.txt", str(ws / ".fresh-ls/x")):
            is_error, text, _ = await call(session, "write", path=path, content="{}\n")
            assert is_error and text.startswith("DENIED") and "fresh-ls state" in text, text
        # A symlink inside the root that leads into .git is judged by where it leads.
        (ws / "innocent.txt").symlink_to(git / "config")
        is_error, text, _ = await call(session, "write", path="innocent.txt", content=hostile)
        assert is_error and ".git" in text, text
    assert (git / "config").read_bytes() == before
    assert not (ws / ".fresh-ls" / "new.txt").exists()


async def test_a_state_dir_elsewhere_in_the_root_is_protected_too(ws: Path) -> None:
    async with mcp_client(ws, "--state-dir", str(ws / "var" / "fls")) as session:
        await call(session, "read", path="util.py")
        assert (ws / "var" / "fls" / "endpoint.json").exists()
        is_error, text, _ = await call(session, "write", path="var/fls/write.lock", content="x")
        assert is_error and "fresh-ls state" in text, text
        is_error, text, _ = await call(session, "read", path="var/fls/endpoint.json")
        assert is_error and "fresh-ls state" in text, text


async def test_the_state_dir_is_not_readable(ws: Path) -> None:
    async with mcp_client(ws) as session:
        await call(session, "read", path="util.py")
        endpoint = (ws / ".fresh-ls" / "endpoint.json").read_text()
        is_error, text, _ = await call(session, "read", path=".fresh-ls/endpoint.json")
        assert is_error and "fresh-ls state" in text, text
        assert endpoint not in text and '"token"' not in text


async def test_a_fifo_and_a_directory_are_clear_errors_not_hangs(ws: Path) -> None:
    os.mkfifo(ws / "pipe.py")
    (ws / "adir").mkdir()
    with tempfile.TemporaryFile("w+") as errlog:
        async with mcp_client(ws, errlog=errlog) as session:
            is_error, text, _ = await asyncio.wait_for(
                call(session, "read", path="pipe.py"), timeout=20
            )
            assert is_error and "not a regular file" in text, text
            is_error, text, _ = await call(session, "read", path="adir")
            assert is_error and "directory" in text and "Traceback" not in text, text
            is_error, text, _ = await asyncio.wait_for(
                call(session, "write", path="pipe.py", content="x\n"), timeout=20
            )
            assert is_error and "not a regular file" in text, text
            # The server still answers.
            is_error, _, _ = await call(session, "read", path="util.py")
            assert not is_error
        errlog.seek(0)
        assert "Traceback" not in errlog.read()


async def test_a_range_of_a_file_over_the_size_limit_is_readable(ws: Path) -> None:
    line = "x = 1  # " + "pad " * 20 + "\n"
    count = MAX_READ_BYTES // len(line) + 1000
    big = ws / "big.log"
    with big.open("w") as out:
        for n in range(1, count + 1):
            out.write(f"line {n} " + line)
    assert big.stat().st_size > MAX_READ_BYTES
    async with mcp_client(ws) as session:
        is_error, text, _ = await call(
            session, "read", path="big.log", first_line=1000, last_line=1002
        )
        assert not is_error, text
        assert f"big.log lines 1000-1002 of {count} lines" in text
        assert "  1001\tline 1001 x = 1" in text and "line 1003 " not in text
        is_error, text, _ = await call(session, "read", path="big.log", first_line=count)
        assert not is_error and f"line {count} x = 1" in text, text


async def test_a_crlf_file_is_edited_by_lines_in_its_own_line_ending(ws: Path) -> None:
    crlf = ws / "win.py"
    crlf.write_bytes(b"def f():\r\n    a = 1\r\n    b = 2\r\n    return a + b\r\n")
    async with mcp_client(ws) as session:
        is_error, text, _ = await call(session, "read", path="win.py")
        assert not is_error, text
        is_error, text, _ = await call(
            session, "edit", path="win.py", old_text="    a = 1\n    b = 2\n",
            new_text="    a = 10\n    b = 20\n    c = 0\n",
        )  # fmt: skip
        assert not is_error, text
    assert crlf.read_bytes() == (
        b"def f():\r\n    a = 10\r\n    b = 20\r\n    c = 0\r\n    return a + b\r\n"
    )


async def test_denies_say_whether_a_retry_can_succeed(ws: Path) -> None:
    """A program reads the verdict from ``_meta`` (the text stays the model's): a deny
    of the guard may be retried; a refusal of tool state never."""
    (ws / ".git").mkdir()
    async with mcp_client(ws) as session:
        result = await session.call_tool("write", {"path": ".git/config", "content": "x\n"})
        assert result.is_error
        assert (result.meta or {}).get("fresh-ls") == {
            "verdict": "deny", "reason": "protected", "retryable": False,
        }  # fmt: skip
        result = await session.call_tool(
            "edit", {"path": "util.py", "old_text": "a + b", "new_text": "b + a"}
        )
        assert result.is_error
        assert (result.meta or {}).get("fresh-ls") == {
            "verdict": "deny", "reason": "unseen", "retryable": True,
        }  # fmt: skip
        result = await session.call_tool(
            "edit", {"path": "util.py", "old_text": "nowhere", "new_text": "x"}
        )
        assert (result.meta or {}).get("fresh-ls") == {
            "verdict": "deny", "reason": "missing", "retryable": False,
        }  # fmt: skip
