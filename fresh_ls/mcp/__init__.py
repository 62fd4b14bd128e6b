"""``fresh-ls mcp``: guarded read / edit / write tools for any MCP client (see docs/guard.md)."""
