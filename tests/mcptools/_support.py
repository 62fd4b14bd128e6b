"""Talk to a real ``fresh-ls mcp`` process through the ``mcp`` SDK's own stdio client."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parents[2]
#: The test-only launcher of ``fresh-ls mcp`` with the guard turned off (negative controls).
UNGUARDED = "tests.mcptools.unguarded_mcp"


@contextlib.asynccontextmanager
async def mcp_client(
    root: Path, *args: str, errlog: TextIO = sys.stderr, unguarded: bool = False
) -> AsyncIterator[ClientSession]:
    """A session with a real ``fresh-ls mcp``; ``errlog`` receives the process's stderr.
    ``unguarded``: the same server started through ``UNGUARDED``, whose ``fresh/checkEdit``
    always allows."""
    argv = ["-P", "-m", "fresh_ls", "mcp"]
    env = None
    if unguarded:
        argv = ["-P", "-m", UNGUARDED]
        env = {"PYTHONPATH": str(REPO)}
    params = StdioServerParameters(
        command=sys.executable, args=[*argv, "--root", str(root), *args], env=env
    )
    async with stdio_client(params, errlog=errlog) as streams, ClientSession(*streams) as session:
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def call(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, str, Any]:
    """(is_error, text, structured content) of one tool call."""
    result = await session.call_tool(tool, arguments)
    return bool(result.is_error), text_of(result), result.structured_content
