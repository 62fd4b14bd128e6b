"""Shared pieces of the reliability suite: the quick/full switch, the figures each test
reports, real server processes, and a raw framing client with hard timeouts.

Everything talks to a real ``python -m fresh_ls serve`` subprocess over a Unix socket, a
loopback TCP port (127.0.0.1); nothing imports the engine. Every wait is
bounded, so a hung server makes a test fail, never hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: ``FRESH_LS_SOAK=1`` (``make soak``) runs the full counts; the default is the quick mode
#: that ``make test`` runs.
FULL = os.environ.get("FRESH_LS_SOAK", "").strip() not in ("", "0", "no", "false")

#: A sanity bound for one answer from the server (never a performance threshold).
WAIT_S = 20.0

#: One line of figures per test, printed at the end of the run (conftest's summary hook).
FIGURES: list[str] = []


def count(quick: int, full: int) -> int:
    """The count for this mode."""
    return full if FULL else quick


def report(name: str, **figures: Any) -> None:
    """Record one line of figures, e.g. ``reliability: sigkill-observe-stream kills=100 ...``;
    also printed at once (visible with ``pytest -s``)."""
    mode = "full" if FULL else "quick"
    line = f"reliability: {name} mode={mode} " + " ".join(f"{k}={v}" for k, v in figures.items())
    FIGURES.append(line)
    print(line, flush=True)


# -- workspaces --------------------------------------------------------------------------------

# The e2e suite's workspace files, so both suites reason about the same code.
from e2e._support import CART_PY, UTIL_PY  # noqa: E402

PRICE_TS = """\
export interface Price {
  amount: number;
  currency: string;
}

export function discount(p: Price, pct: number): Price {
  return { ...p, amount: p.amount * (1 - pct / 100) };
}
"""

NOTES_MD = "# Notes\n\nSome prose about the cart.\n"

FILES = {"cart.py": CART_PY, "util.py": UTIL_PY, "web/price.ts": PRICE_TS, "notes.md": NOTES_MD}


def make_workspace(root: Path, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (files if files is not None else FILES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return Path(os.path.realpath(root))


def disk_lines(data: bytes, first: int, last: int) -> bytes:
    """Lines ``first..last`` of ``data`` (LF ends a line, each kept with its ending)."""
    lines = data.split(b"\n")
    kept = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    return b"".join(kept[first - 1 : last])


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` in one rename: every moment, the disk holds a whole version."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# -- scratch dirs for socket paths (sockaddr_un is short) ---------------------------------------

SCRATCH: list[Path] = []


def scratch_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="flr-"))
    SCRATCH.append(path)
    return path


def remove_scratch() -> None:
    while SCRATCH:
        shutil.rmtree(SCRATCH.pop(), ignore_errors=True)


# -- framing -----------------------------------------------------------------------------------


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: Any) -> bytes:
    """JSON as a hostile client may send it: lone surrogates pass through as escapes."""
    return json.dumps(message).encode("utf-8")


class Closed(Exception):
    """The server closed the connection (or reset it)."""


class RawConn:
    """Content-Length framing over a socket, every read bounded in time (its own buffer,
    so a read that timed out leaves the connection usable)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = b""
        self._next_id = 0

    @classmethod
    def connect(cls, address: str, timeout: float = WAIT_S) -> RawConn:
        return cls(open_socket(address, timeout))

    def settimeout(self, seconds: float) -> None:
        self.sock.settimeout(seconds)

    def send_bytes(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise Closed(str(exc)) from None

    def send(self, message: Any) -> None:
        self.send_bytes(frame(encode(message)))

    def _fill(self) -> None:
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError as exc:
            raise Closed(str(exc)) from None
        except TimeoutError:
            raise TimeoutError("no message from the server in time") from None
        if not chunk:
            raise Closed("EOF")
        self._buf += chunk

    def read(self) -> dict[str, Any]:
        """The next message; ``Closed`` at EOF; ``TimeoutError`` when none comes in time."""
        while True:
            end = self._buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            self._fill()
        length = None
        for line in self._buf[:end].split(b"\r\n"):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        assert length is not None, self._buf[:end]
        start = end + 4
        while len(self._buf) < start + length:
            self._fill()
        body = self._buf[start : start + length]
        self._buf = self._buf[start + length :]
        return dict(json.loads(body))

    def response(self) -> dict[str, Any]:
        """The next response (server notifications and requests are skipped)."""
        while True:
            message = self.read()
            if "method" not in message:
                return message

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def call(self, method: str, params: Any) -> dict[str, Any]:
        """Send a request; the whole response message (result or error), same id checked."""
        rid = self.next_id()
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        message = self.response()
        assert message.get("id") == rid, (method, message)
        return message

    def result(self, method: str, params: Any) -> Any:
        message = self.call(method, params)
        assert "result" in message, (method, params, message)
        return message["result"]

    def initialize(self, token: Any = None, with_token: bool = True) -> dict[str, Any]:
        params: dict[str, Any] = {"processId": os.getpid(), "rootUri": None, "capabilities": {}}
        if with_token:
            params["initializationOptions"] = {"token": token}
        message = self.call("initialize", params)
        if "result" in message:
            self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return message

    def wait_closed(self, timeout: float) -> bool:
        """True when the server closes this connection within ``timeout`` (anything it sends
        before is read and dropped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(left)
            try:
                self._fill()
                self._buf = b""
            except Closed:
                return True
            except TimeoutError:
                return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def open_socket(address: str, timeout: float = WAIT_S) -> socket.socket:
    """A connected socket to ``unix:PATH`` or ``tcp:127.0.0.1:PORT`` (loopback only)."""
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        target: Any = address[5:]
    else:
        assert address.startswith("tcp:127.0.0.1:"), f"not loopback: {address}"
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        target = ("127.0.0.1", int(address.rpartition(":")[2]))
    sock.settimeout(timeout)
    try:
        sock.connect(target)
    except OSError:
        sock.close()
        raise
    return sock


# -- server processes --------------------------------------------------------------------------


def serve_command(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "fresh_ls", "serve", "--root", str(root), *args]


def read_endpoint(root: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads((root / ".fresh-ls" / "endpoint.json").read_text()))
    except (OSError, ValueError):
        return None


class Server:
    """``serve --root ROOT --listen ADDRESS [ARGS]`` as a background process."""

    def __init__(self, root: Path, address: str, *args: str) -> None:
        self.root = root
        self.log = scratch_dir() / "server.log"
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                serve_command(root, "--listen", address, *args),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        self.endpoint = self._wait_endpoint()
        self.address = str(self.endpoint["address"])
        self.token = self.endpoint["token"]

    def _wait_endpoint(self) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            ep = read_endpoint(self.root)
            if ep is not None and ep.get("pid") == self.proc.pid:
                return ep
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"server exited with {self.proc.returncode}: {self.log_tail()}"
                )
            time.sleep(0.02)
        self.proc.kill()
        self.proc.wait()
        raise AssertionError(f"no endpoint.json from pid {self.proc.pid} in {WAIT_S} s")

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def client(self, timeout: float = WAIT_S) -> RawConn:
        """A connection that presented the token."""
        conn = RawConn.connect(self.address, timeout)
        reply = conn.initialize(self.token)
        assert "result" in reply, reply
        return conn

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=WAIT_S)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextlib.contextmanager
def serving(root: Path, address: str | None = None, *args: str) -> Iterator[Server]:
    """A listening server for the ``with`` block; stopped (or killed) at its end."""
    if address is None:
        address = f"unix:{scratch_dir() / 's.sock'}"
    server = Server(root, address, *args)
    try:
        yield server
    finally:
        server.stop()


def unix_address() -> str:
    return f"unix:{scratch_dir() / 's.sock'}"


#: Text an answer meant for a client must never carry: a Python traceback, or a path into
#: the server's own code.
def internals_markers() -> list[str]:
    import fresh_ls  # only for where its code lives; the suite never calls into it

    package = str(Path(fresh_ls.__file__).resolve().parent)
    return ["Traceback", '.py", line', 'File "/', package, sys.prefix + "/lib"]


def leaks(message: dict[str, Any]) -> list[str]:
    """What an error answer leaks of the server's internals (empty when nothing)."""
    error = message.get("error")
    if not isinstance(error, dict):
        return []
    text = json.dumps({"message": error.get("message"), "data": error.get("data")})
    return [m for m in internals_markers() if m in text or json.dumps(m)[1:-1] in text]


def raise_nofile(needed: int) -> int:
    """Raise this process's soft limit on open files to ``needed`` when the hard limit
    allows; the limit in force afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft
