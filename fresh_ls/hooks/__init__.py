"""Agent hooks: fresh-ls for agents that run a command per tool call instead of going
through the proxy (Claude Code's ``hooks`` in ``settings.json``).

A hook is a short-lived process per event, so everything here keeps the hook path cheap:
no pygls, no tree-sitter, no asyncio; it attaches to the root's running server and keeps
nothing in memory between calls (what must outlive a call lives in the state dir).
"""
