"""One server per root: the lock, the endpoint file, and the listening address.

The lock is an ``flock`` on ``<state>/server.lock``: the kernel drops it when the process
dies, even by SIGKILL, so a lock file left behind never blocks a restart. ``endpoint.json``
is written (mode 0600, atomically) only once the endpoint accepts connections, and a
stale one from a killed server is replaced on the next start. The token it names is kept in
``<state>/token`` and reused by the next server of the root (``persistent_token``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fresh_ls.statedir import (
    DATABASE_FILE,
    ENDPOINT_FILE,
    GITIGNORE_FILE,
    GITIGNORE_TEXT,
    LOCK_FILE,
    LOG_FILE,
    SOCKET_FILE,
    START_LOCK_FILE,
    TOKEN_FILE,
)

#: Unix socket paths longer than this do not fit in ``sockaddr_un`` on Linux (108 bytes).
MAX_SOCKET_PATH = 100


#: Files fresh-ls keeps in a state dir: an existing directory holding one of them (or
#: nothing) is ours to make private.
OWN_FILES = (LOCK_FILE, ENDPOINT_FILE, DATABASE_FILE, TOKEN_FILE, LOG_FILE, START_LOCK_FILE)


def make_private_dir(state_dir: Path) -> None:
    """Create the state dir 0700, or tighten an existing one that is ours to 0700.

    It holds the database (the code agents read) and the endpoint token: nobody but the
    user may list or read it. An existing directory is tightened only when this user owns
    it and it is empty or already holds fresh-ls files, so a ``--state-dir`` pointed at
    some shared directory by mistake is not changed behind the user's back. A state dir
    that is ours gets a ``.gitignore`` of ``*`` (see ``statedir.GITIGNORE_TEXT``).
    """
    state_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        state_dir.mkdir(mode=0o700)
    except FileExistsError:
        st = state_dir.stat()
        if st.st_uid != os.getuid():
            return
        names = {p.name for p in state_dir.iterdir()}
        if names and not names & set(OWN_FILES):
            return  # not a state dir (say, ~/.ssh by mistake): leave it exactly as it is
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.chmod(state_dir, 0o700)
    else:
        os.chmod(state_dir, 0o700)  # mkdir's mode is cut by the umask; set it exactly
    _write_gitignore(state_dir)


def _write_gitignore(state_dir: Path) -> None:
    """When absent (also in a state dir made by an older fresh-ls); one the user edited
    is kept as it is."""
    try:
        fd = os.open(state_dir / GITIGNORE_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(GITIGNORE_TEXT)


class AlreadyRunning(RuntimeError):
    def __init__(self, endpoint: dict[str, Any] | None, state_dir: Path) -> None:
        self.endpoint = endpoint
        where = endpoint.get("address") if endpoint else "an endpoint not yet written"
        pid = endpoint.get("pid") if endpoint else "unknown"
        super().__init__(
            f"a fresh-ls server already runs for this root (pid {pid}) at {where}; "
            f"attach to it through {state_dir / ENDPOINT_FILE}, or stop it first"
        )


@dataclass
class RootLock:
    path: Path
    fd: int

    @classmethod
    def acquire(cls, state_dir: Path) -> RootLock:
        make_private_dir(state_dir)
        path = state_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o600)
        if not _flock_soon(fd):
            os.close(fd)
            raise AlreadyRunning(read_endpoint(state_dir), state_dir) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        # A server killed before it could clean up left its endpoint behind: it is stale.
        with contextlib.suppress(FileNotFoundError):
            (state_dir / ENDPOINT_FILE).unlink()
        return cls(path, fd)

    def release(self) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)


#: How long ``acquire`` retries a held lock: a client asking whether a server holds the root
#: (``fresh_ls.autostart.root_held``) takes it shared for an instant, and a server starting
#: in that instant must not take the client for a live server.
ACQUIRE_RETRY_S = 0.5


def _flock_soon(fd: int) -> bool:
    """The exclusive lock on ``fd``, retried for ``ACQUIRE_RETRY_S``; False when held."""
    deadline = time.monotonic() + ACQUIRE_RETRY_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)


def read_endpoint(state_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((state_dir / ENDPOINT_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_endpoint(state_dir: Path, address: str, token: str) -> Path:
    path = state_dir / ENDPOINT_FILE
    _write_private(path, json.dumps({"address": address, "token": token, "pid": os.getpid()}))
    return path


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all, readable by its owner only: a reader
    (a client, the next server) sees the old file or the new one, never a torn one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def remove_endpoint(state_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (state_dir / ENDPOINT_FILE).unlink()


def new_token() -> str:
    return secrets.token_urlsafe(32)


#: A kept token shorter than this (or not URL-safe base64) is not ours: a new one replaces it.
MIN_TOKEN_CHARS = 32


def persistent_token(state_dir: Path) -> str:
    """The root's token: the one a previous server of this state dir kept, else a new one,
    kept (0600, atomically) for the next.

    Why keep it: a harness attached before a restart (a crash, the editor's Restart Server)
    re-presents the token it holds, and the clients reconnect transparently. It is no weaker
    than ``endpoint.json``, which names the same token in the same private (0700) dir; who can
    read one can read the other. A file that is not ours (a symlink, another owner, too loose
    a mode) is not trusted: a new token replaces it.
    """
    path = state_dir / TOKEN_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        pass
    else:
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            text = f.read(256).decode("ascii", "replace").strip()
        private = st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0
        if private and len(text) >= MIN_TOKEN_CHARS and _URLSAFE.fullmatch(text):
            return text
    token = new_token()
    _write_private(path, token + "\n")
    return token


_URLSAFE = re.compile(r"[A-Za-z0-9_-]+")


def default_socket_path(state_dir: Path) -> Path:
    path = state_dir / SOCKET_FILE
    if len(str(path)) <= MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(str(state_dir).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"fresh-ls-{digest}.sock"


@dataclass(frozen=True)
class ListenAddress:
    kind: str  # "unix" | "tcp"
    path: Path | None = None
    host: str = "127.0.0.1"
    port: int = 0

    @staticmethod
    def parse(text: str | None, state_dir: Path) -> ListenAddress:
        if not text:
            return ListenAddress("unix", default_socket_path(state_dir))
        if text.startswith("unix:"):
            return ListenAddress("unix", Path(text[5:]).absolute())
        if text.startswith("tcp:"):
            host, _, port = text[4:].rpartition(":")
            if host not in ("127.0.0.1", "localhost", "::1", "[::1]") or not port.isdigit():
                raise ValueError(
                    f"--listen {text}: use tcp:127.0.0.1:PORT (loopback only; port 0 picks one)"
                )
            return ListenAddress("tcp", host=host.strip("[]"), port=int(port))
        raise ValueError(f"--listen {text}: expected unix:PATH or tcp:127.0.0.1:PORT")
