"""The names of the state dir and of the files in it, defined once.

Kept free of imports so the CLI, the client and the watcher read them without paying for
the server. The extension names the same two in ``vscode-ext/src/config.ts``; a test checks
that both sides agree.
"""

from __future__ import annotations

import socket
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
#: Where a server started detached (by ``run``, ``proxy``, ``proxies``) writes its stderr.
LOG_FILE = "server.log"
#: Held (``flock``) by the one client starting the root's shared server, so two clients
#: that both find none start one between them (``fresh_ls.autostart``).
START_LOCK_FILE = "start.lock"
#: Written into a state dir the server creates, so ``git add .`` never commits the token
#: or the database (which holds code), the way pytest keeps its cache out of git.
GITIGNORE_FILE = ".gitignore"
GITIGNORE_TEXT = "# Created by fresh-ls: this dir holds a token and code; keep it out of git.\n*\n"


def default_state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


#: The hosts a TCP endpoint may name: the server listens on loopback only.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def connect_endpoint(
    kind: str, target: str | tuple[str, int], timeout: float | None
) -> socket.socket:
    """A blocking socket connected to ``endpoint_target``'s ``(kind, target)``; OSError
    (the socket closed) when nothing answers there. The clients and the hooks' link share
    it (the hook keeps its imports few: this module's are)."""
    family = socket.AF_UNIX if kind == "unix" else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(target)
    except OSError:
        sock.close()
        raise
    return sock


def endpoint_target(address: str) -> tuple[str, str | tuple[str, int]]:
    """``("unix", path)`` or ``("tcp", (host, port))`` for an ``endpoint.json`` address.

    The file sits in the root, so a repository can ship one: a TCP address is believed only
    when it is a loopback port (the only kind the server binds), so a committed
    ``tcp:some.host:443`` never receives the file views a hook or the proxy sends.
    ValueError names what is wrong."""
    if address.startswith("unix:") and len(address) > 5:
        return "unix", address[5:]
    if address.startswith("tcp:"):
        host, _, port = address[4:].rpartition(":")
        if host in LOOPBACK_HOSTS and port.isdigit():
            return "tcp", (host.strip("[]"), int(port))
        raise ValueError(f"endpoint address {address!r} is not a loopback port; not connecting")
    raise ValueError(f"endpoint address {address!r} is not unix:PATH or tcp:127.0.0.1:PORT")
