"""Which paths the MCP tools never write, or never read, whatever the guard would say.

The guard decides whether an agent knows the code it changes; it does not decide whether
a file is the agent's to change at all. Version-control metadata is not: a
``core.fsmonitor`` line or a hook written into ``.git/`` runs a command on the next
``git status``, outside any sandbox the agent was given. fresh-ls's own state dir holds
the server's token (``endpoint.json``), its database and its locks: reading the token puts
it into a prompt, writing there forges views or breaks the server. These are refused
before the guard is asked, so a refusal records no view and a retry is refused again.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Final

from fresh_ls.statedir import STATE_DIR_NAME

#: Directory (or file: a worktree's ``.git`` is one) names holding another tool's state,
#: with what they hold. Compared case-insensitively: on a case-insensitive file system
#: ``.GIT/config`` is ``.git/config``.
TOOL_STATE: Final[dict[str, str]] = {
    ".git": "version control state (git)",
    ".hg": "version control state (Mercurial)",
    ".svn": "version control state (Subversion)",
    ".jj": "version control state (Jujutsu)",
    STATE_DIR_NAME: "fresh-ls state",
}
FRESH_STATE = TOOL_STATE[STATE_DIR_NAME]


def _inside(real: Path, directory: Path) -> bool:
    return real == directory or directory in real.parents


def state_refusal(rel: str, real: Path, state_dir: Path) -> str | None:
    """Why ``rel`` may be neither read nor written (it is fresh-ls state), or None."""
    state = Path(os.path.realpath(state_dir))
    if _inside(real, state) or any(
        part.casefold() == STATE_DIR_NAME for part in PurePosixPath(rel).parts
    ):
        return (
            f"{rel} is inside the {FRESH_STATE} directory (the server's token, database and "
            "locks); the tools never read or write there"
        )
    return None


def write_refusal(rel: str, real: Path, state_dir: Path) -> str | None:
    """Why the tools never write ``rel``, or None when the guard decides."""
    refused = state_refusal(rel, real, state_dir)
    if refused is not None:
        return refused
    for part in PurePosixPath(rel).parts:
        what = TOOL_STATE.get(part.casefold())
        if what is not None:
            return (
                f"{rel} is inside {part}/ ({what}); the tools never write there: a hook or a "
                "config line written there runs commands on the next version control call"
            )
    return None
