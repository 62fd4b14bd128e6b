"""The names of the state dir and of the files in it, defined once.

Kept free of imports so the CLI, the client and the watcher read them without paying for
the server. The extension names the same two in ``vscode-ext/src/config.ts``; a test checks
that both sides agree.
"""

from __future__ import annotations

from pathlib import Path

#: Under the root, unless ``--state-dir`` says otherwise.
STATE_DIR_NAME = ".fresh-ls"
ENDPOINT_FILE = "endpoint.json"
LOCK_FILE = "server.lock"
SOCKET_FILE = "fresh-ls.sock"
DATABASE_FILE = "views.sqlite3"
#: The endpoint's token, kept across restarts of the same root (mode 0600 in the 0700 state
#: dir) so a harness that attached before a restart can present it again.
TOKEN_FILE = "token"
#: Written into a state dir the server creates, so ``git add .`` never commits the token
#: or the database (which holds code), the way pytest keeps its cache out of git.
GITIGNORE_FILE = ".gitignore"
GITIGNORE_TEXT = "# Created by fresh-ls: this dir holds a token and code; keep it out of git.\n*\n"


def default_state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME
