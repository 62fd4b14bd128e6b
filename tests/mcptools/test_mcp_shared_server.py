"""``fresh-ls mcp`` uses the root's shared server (issue 22: several runs, editors, hooks and
MCP servers share one server per root): the server it starts is detached, so when the MCP
process exits, another client of the root keeps its server and its views, and a second MCP
process attaches to the same server instead of starting its own."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fresh_ls.client import AsyncClient
from tests.e2e._support import make_workspace
from tests.mcptools._support import call, mcp_client

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def ws() -> Iterator[Path]:
    scratch = Path(tempfile.mkdtemp(prefix="fls-mcp-shared-"))
    try:
        yield make_workspace(scratch / "ws")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def server_pid(ws: Path) -> int:
    return int(json.loads((ws / ".fresh-ls" / "endpoint.json").read_text())["pid"])


async def test_the_server_an_mcp_process_started_outlives_it(ws: Path) -> None:
    async with mcp_client(ws, "--session", "first") as session:
        is_error, text, _ = await call(session, "read", path="cart.py")
        assert not is_error, text
        pid = server_pid(ws)
        other = await AsyncClient.attach(ws)  # a run, an editor, a hook of the same root
    try:
        # The MCP process is gone; its server is not, and it still holds the views.
        os.kill(pid, 0)
        (entry,) = [s for s in (await other.status())["sessions"] if s["session"] == "first"]
        assert entry["views"] >= 1, entry
        async with mcp_client(ws, "--session", "second") as session:
            is_error, text, _ = await call(session, "read", path="util.py")
            assert not is_error, text
            assert server_pid(ws) == pid  # attached, not a server of its own
    finally:
        await other.close()
