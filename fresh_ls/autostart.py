"""Starting the root's shared server when none is live, one at a time.

Several clients share one server per root: two ``fresh-ls run`` in one folder, an editor,
hooks, an MCP server. So the server a ``run`` (or ``proxy``, ``proxies``) needs is not its
child: when none is live it is started detached (``fresh_ls.launch.start_detached``: its
own session, its stderr in ``<state>/server.log``) as ``fresh-ls serve --listen
--idle-exit N``, and every client attaches to it through ``endpoint.json``. It stays up
while any client is connected and exits N seconds after the last one left
(``FRESH_LS_SERVER_IDLE_S``, default 60), so the run that started it can end while
another still uses it, and nothing lingers long once all are done.

Two clients that find no server at once must not start two (the second would exit with
status 3 and its client would wait for nothing): the one that takes ``<state>/start.lock``
starts it and holds the lock until the server accepts connections; the others wait for
the endpoint. A client whose server went away (SIGKILL, a crash, the editor that owned it
closed) goes through the same steps, so it reconnects to a new server instead of failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fresh_ls.launch import python_command, start_detached
from fresh_ls.processes import alive
from fresh_ls.statedir import LOCK_FILE, LOG_FILE, START_LOCK_FILE, endpoint_target

#: ``FRESH_LS_SERVER_IDLE_S``: how long a shared server stays up with no client connected.
IDLE_ENV = "FRESH_LS_SERVER_IDLE_S"
DEFAULT_IDLE_EXIT_S = 60.0
#: How long a client waits for the shared server to accept connections (starting it
#: included; a loaded machine can take several seconds to import the server).
START_WAIT_S = 60.0
#: Exit statuses of ``fresh-ls serve`` that no retry mends: bad arguments, a broken store.
FATAL_STATUSES = (2, 4)
#: ``fresh-ls serve``'s status when another server holds the root: attach to that one.
ALREADY_RUNNING = 3


class CannotStart(RuntimeError):
    """The server started for the root exited before listening, for a reason a retry
    does not mend; the message says why (its log's last line) and where its log is."""


def idle_exit_s(environ: Mapping[str, str] = os.environ) -> float:
    """The idle time a shared server is started with: ``FRESH_LS_SERVER_IDLE_S`` when it
    is a number of seconds above 0, else the default."""
    try:
        value = float(environ.get(IDLE_ENV, ""))
    except ValueError:
        return DEFAULT_IDLE_EXIT_S
    return value if 0 < value < float("inf") else DEFAULT_IDLE_EXIT_S


@dataclass(frozen=True)
class StartPlan:
    """What a client starts when the root has no live server: ``fresh-ls serve --root
    ROOT --listen --idle-exit N`` with the state dir and ``--also`` folders it was given."""

    root: Path
    state_dir: Path
    explicit_state_dir: bool = False  # passed on as --state-dir (else the default)
    also: tuple[Path, ...] = ()
    idle_exit_s: float = field(default_factory=idle_exit_s)
    python: str | None = None

    def argv(self) -> list[str]:
        idle = f"{self.idle_exit_s:g}"
        args = ["serve", "--root", str(self.root), "--listen", "--idle-exit", idle]
        if self.explicit_state_dir:
            args += ["--state-dir", str(self.state_dir)]
        for folder in self.also:
            args += ["--also", str(folder)]
        return python_command(*args, python=self.python)


def endpoint_accepts(state_dir: Path) -> bool:
    """Whether ``endpoint.json`` names an address that accepts a connection now."""
    from fresh_ls.server.endpoint import read_endpoint

    ep = read_endpoint(state_dir)
    if ep is None:
        return False
    try:
        kind, target = endpoint_target(str(ep.get("address")))
    except ValueError:
        return False
    family = socket.AF_UNIX if kind == "unix" else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(2.0)
        try:
            sock.connect(target)
        except OSError:
            return False
    return True


def root_held(state_dir: Path) -> bool:
    """Whether a live process holds the root's server lock (a server running, starting or
    stopping). The pid it wrote is asked first; a live pid is confirmed by the lock itself
    (taken shared for an instant, which ``RootLock.acquire`` tolerates), so a recycled pid
    is not taken for a server."""
    path = state_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        text = os.read(fd, 32).decode("ascii", "replace").strip()
        if not alive(int(text) if text.isdigit() else None):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _last_line(log: Path) -> str:
    with contextlib.suppress(OSError):
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        if lines:
            return lines[-1].strip()
    return "it wrote nothing"


def _try_lock(path: Path) -> int | None:
    """``path`` locked exclusively (its fd), or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


async def start_unless_live(plan: StartPlan, deadline: float) -> None:
    """Make sure the root's server is live or being started, starting it if no process
    holds the root; returns once it accepts connections, once another client is starting
    it, or at ``deadline`` (``time.monotonic()``). Raises ``CannotStart`` when the server
    it started exited for a reason a retry does not mend."""
    from fresh_ls.server.endpoint import make_private_dir

    state = plan.state_dir
    make_private_dir(state)
    fd = _try_lock(state / START_LOCK_FILE)
    if fd is None:
        return  # another client is starting it: the caller waits for the endpoint
    try:
        if endpoint_accepts(state) or root_held(state):
            return  # live, or starting or stopping: the caller waits for the endpoint
        log = state / LOG_FILE
        proc = start_detached(plan.argv(), log, plan.root)
        while time.monotonic() < deadline:
            if endpoint_accepts(state):
                return
            code = proc.returncode
            if code is not None:
                if code in FATAL_STATUSES:
                    raise CannotStart(
                        f"the fresh-ls server for {plan.root} exited with status {code}: "
                        f"{_last_line(log)} (its log: {log})"
                    )
                return  # status 3: another server took the root; the caller attaches to it
            await asyncio.sleep(0.05)
    finally:
        os.close(fd)  # closing the fd drops the lock
