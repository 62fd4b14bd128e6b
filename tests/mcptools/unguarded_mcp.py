"""Test-only: ``fresh-ls mcp`` with the guard turned off, for the negative control of the
lost-update tests (``python -P -m tests.mcptools.unguarded_mcp --root DIR ...``).

Every ``fresh/checkEdit`` the MCP tools would ask is answered ``allow`` in this process
without asking the server; everything else (the locks, the atomic re-checked write, the
reports) is the real ``fresh-ls mcp``. Production code has no such switch: this module
replaces the method before the server starts."""

from __future__ import annotations

import sys
from typing import Any

from fresh_ls import cli
from fresh_ls.client import AsyncClient


async def _allow(self: AsyncClient, session: str, path: str, **region: Any) -> dict[str, Any]:
    return {"verdict": "allow", "reason": "known", "units": [], "text": "", "retryable": False}


AsyncClient.check_edit = _allow  # type: ignore[method-assign,assignment]

if __name__ == "__main__":
    raise SystemExit(cli.main(["mcp", *sys.argv[1:]]))
