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


def default_state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME
