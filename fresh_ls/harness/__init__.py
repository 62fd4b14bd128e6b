"""The harness side of fresh-ls: rewrite outgoing requests, bridge agents that use a shell.

- ``rewrite``: ``rewrite_request``/``arewrite_request`` turn a chat request (OpenAI
  chat-completions or Anthropic messages) into one that carries no stale view;
- ``shell``: ``ShellBridge`` registers a shell agent's reads and writes, and rewrites;
- ``mini_swe_agent``: ``with_fresh(agent, client)`` for mini-swe-agent.

How to use them, and the recipe for any other harness: docs/harnesses.md.
"""

from fresh_ls.harness.rewrite import (
    PROJECTION_HEADER,
    CommitFailed,
    RewriteError,
    Rewritten,
    arewrite_request,
    rewrite_request,
)
from fresh_ls.harness.shell import ShellBridge

__all__ = [
    "PROJECTION_HEADER",
    "CommitFailed",
    "RewriteError",
    "Rewritten",
    "ShellBridge",
    "arewrite_request",
    "rewrite_request",
]
