"""Helpers for the end-to-end tests: workspaces, a pytest-lsp client that keeps results as
plain JSON, a raw framing client, and a background listening server.

Everything here talks to a real ``python -m fresh_ls serve`` subprocess; nothing imports the
engine. Results are kept as the dicts the server sent (pygls would turn them into
namedtuples), so tests compare exact JSON values.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCResponseMessage
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

#: A sanity bound for anything that waits on the server (never a performance threshold).
WAIT_S = 30.0

CART_PY = """\
RATE = 10


class Cart:
    def __init__(self):
        self.items = []

    def total(self, quantity):
        subtotal = quantity * RATE
        return subtotal


def helper():
    return 1
"""
#   1 RATE = 10
#   4 class Cart:            (class Cart: lines 4-10)
#   5     def __init__       (method Cart.__init__: lines 5-6)
#   8     def total          (method Cart.total: lines 8-10)
#   9         subtotal = ...
#  13 def helper():          (function helper: lines 13-14)

UTIL_PY = """\
def add(a, b):
    return a + b


def sub(a, b):
    return a - b
"""

NOTES_MD = "# Notes\n\nSome prose about the cart.\n"

PRICE_TS = """\
export interface Price {
  amount: number;
  currency: string;
}

export const format = (p: Price): string => `${p.amount} ${p.currency}`;

export function discount(p: Price, pct: number): Price {
  return { ...p, amount: p.amount * (1 - pct / 100) };
}
"""

STOCK_GO = """\
package svc

type Stock struct {
	count int
}

func (s *Stock) Take(n int) bool {
	if n > s.count {
		return false
	}
	s.count -= n
	return true
}
"""

FILES = {
    "cart.py": CART_PY,
    "util.py": UTIL_PY,
    "notes.md": NOTES_MD,
    "web/price.ts": PRICE_TS,
    "svc/stock.go": STOCK_GO,
}


def make_workspace(root: Path, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in (files if files is not None else FILES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return Path(os.path.realpath(root))


def disk_lines(path: Path, first: int, last: int) -> bytes:
    """Lines ``first..last`` of a file exactly as the disk holds them (LF ends a line)."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    kept = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    return b"".join(kept[first - 1 : last])


def sha256(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def serve_command(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "fresh_ls", "serve", "--root", str(root), *args]


# -- the pytest-lsp client --------------------------------------------------------------------


def _raw_converter() -> Any:
    """pygls' converter, except that results of (and notifications with) methods it has no
    type for stay the plain JSON the server sent."""
    conv = default_converter()
    conv.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    conv.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    return conv


def _client_factory() -> LanguageClient:
    client = LanguageClient(converter_factory=_raw_converter)
    register_lsp_features(client)
    return client


@dataclass
class Lsp:
    """A pytest-lsp client connected to a ``serve --stdio`` subprocess."""

    client: LanguageClient
    root: Path
    invalidations: list[dict[str, Any]] = field(default_factory=list)
    initialize_result: Any = None

    async def request(self, method: str, params: Any) -> Any:
        return await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params), WAIT_S
        )

    async def error(self, method: str, params: Any) -> JsonRpcException:
        """Send a request that must fail; return the JSON-RPC error."""
        try:
            result = await self.request(method, params)
        except JsonRpcException as exc:
            return exc
        raise AssertionError(f"{method} {params!r} succeeded: {result!r}")

    def notify(self, method: str, params: Any) -> None:
        self.client.protocol.notify(method, params)

    async def observe(self, **params: Any) -> dict[str, Any]:
        params.setdefault("session", "s")
        return dict(await self.request("fresh/observe", params))

    async def stale(self, session: str = "s", **params: Any) -> dict[str, Any]:
        return dict(await self.request("fresh/stale", {"session": session, **params}))

    async def view(self, view_id: str, session: str = "s") -> dict[str, Any]:
        views = (await self.stale(session, viewIds=[view_id]))["views"]
        assert len(views) == 1
        return dict(views[0])

    async def project(self, session: str = "s", **params: Any) -> dict[str, Any]:
        return dict(await self.request("fresh/project", {"session": session, **params}))

    async def commit(self, plan_id: str) -> dict[str, Any]:
        return dict(await self.request("fresh/commit", {"planId": plan_id}))

    async def forget(self, session: str = "s", **params: Any) -> dict[str, Any]:
        return dict(await self.request("fresh/forget", {"session": session, **params}))

    async def status(self) -> dict[str, Any]:
        return dict(await self.request("fresh/status", {}))

    def did_write(self, path: str, session: str | None = None) -> None:
        params: dict[str, Any] = {"path": path}
        if session is not None:
            params["session"] = session
        self.notify("fresh/didWrite", params)

    async def wait_invalidation(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = WAIT_S
    ) -> dict[str, Any]:
        """The first ``fresh/didInvalidate`` received (already or later) that matches.

        Notifications are logged as they arrive, so one that came before this call is
        found too (pytest-lsp's ``wait_for_notification`` only sees future ones)."""
        deadline = time.monotonic() + timeout
        while True:
            for payload in self.invalidations:
                if match(payload):
                    return payload
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no matching fresh/didInvalidate in {timeout} s; got {self.invalidations}"
                )
            await asyncio.sleep(0.02)

    async def settle(self) -> None:
        """Drop the notifications received so far (observe and forget push their own),
        so a test sees only what follows."""
        await self.sync_point()
        self.invalidations.clear()

    async def sync_point(self) -> None:
        """A request round trip: every notification sent before it has been handled
        (the server reads one connection in order)."""
        await self.status()

    # -- editor notifications --

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def did_open(self, rel: str, text: str, version: int = 1) -> None:
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=self.uri(rel), language_id="python", version=version, text=text
                )
            )
        )

    def did_change(
        self, rel: str, version: int, *changes: tuple[tuple[int, int], tuple[int, int], str]
    ) -> None:
        """Incremental changes: ((line, char), (line, char), new text), 0-based LSP
        positions in UTF-16 code units."""
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(
                    uri=self.uri(rel), version=version
                ),
                content_changes=[
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(
                            start=lsp.Position(line=a[0], character=a[1]),
                            end=lsp.Position(line=b[0], character=b[1]),
                        ),
                        text=text,
                    )
                    for a, b, text in changes
                ],
            )
        )

    def did_save(self, rel: str) -> None:
        self.client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=self.uri(rel))
            )
        )

    def did_close(self, rel: str) -> None:
        self.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=self.uri(rel))
            )
        )


async def start_lsp(
    root: Path,
    *args: str,
    init_options: dict[str, Any] | None = None,
    capabilities: lsp.ClientCapabilities | None = None,
) -> Lsp:
    """Spawn ``serve --root ROOT --stdio ARGS`` through pytest-lsp and initialize it."""
    config = pytest_lsp.ClientServerConfig(
        server_command=serve_command(root, "--stdio", *args), client_factory=_client_factory
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    conn = Lsp(client, root)

    @client.feature("fresh/didInvalidate")
    def _on_invalidate(params: Any) -> None:
        conn.invalidations.append(dict(params))

    conn.initialize_result = await asyncio.wait_for(
        client.initialize_session(
            lsp.InitializeParams(
                capabilities=capabilities or lsp.ClientCapabilities(),
                root_uri=root.as_uri(),
                initialization_options=init_options if init_options is not None else {},
            )
        ),
        WAIT_S,
    )
    return conn


async def stop_lsp(conn: Lsp) -> None:
    client = conn.client
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.shutdown_session(), WAIT_S)
    server = client._server
    if server is not None and server.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            server.kill()
    await client.stop()


async def eventually(check: Callable[[], Any], timeout: float = WAIT_S) -> None:
    """Await ``check()`` until it is true: for effects the server applies on its own time
    (a closed connection's cleanup), bounded by a sanity timeout only."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{check.__name__} still false after {timeout} s")
        await asyncio.sleep(0.02)


# -- a raw framing client (sockets and pipes), independent of the implementation ----------------


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def frame_json(message: dict[str, Any]) -> bytes:
    return frame(json.dumps(message).encode("utf-8"))


class RawConn:
    """Content-Length framing over a byte stream pair, blocking, with a timeout."""

    def __init__(self, reader: Any, writer: Any, closer: Callable[[], None]) -> None:
        self._r = reader
        self._w = writer
        self._closer = closer
        self._next_id = 0

    @classmethod
    def connect(cls, address: str) -> RawConn:
        if address.startswith("unix:"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            target: Any = address[5:]
        else:
            assert address.startswith("tcp:"), address
            host, _, port = address[4:].rpartition(":")
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            target = (host, int(port))
        sock.settimeout(WAIT_S)
        sock.connect(target)
        stream = sock.makefile("rwb")

        def close() -> None:
            with contextlib.suppress(OSError):
                stream.close()
            sock.close()

        return cls(stream, stream, close)

    def send_bytes(self, data: bytes) -> None:
        self._w.write(data)
        self._w.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(frame_json(message))

    def read(self) -> dict[str, Any] | None:
        """The next message, or None at EOF."""
        length = None
        while True:
            line = self._r.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                if length is not None:
                    break
                continue
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        body = self._r.read(length)
        if body is None or len(body) < length:
            return None
        return dict(json.loads(body))

    def response(self) -> dict[str, Any]:
        """The next response (notifications from the server are skipped)."""
        while True:
            message = self.read()
            assert message is not None, "the server closed the connection"
            if "id" in message and "method" not in message:
                return message

    def call(self, method: str, params: Any) -> dict[str, Any]:
        """Send a request; the whole response message (result or error)."""
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        message = self.response()
        assert message["id"] == self._next_id, message
        return message

    def initialize(self, options: dict[str, Any] | None) -> dict[str, Any]:
        params: dict[str, Any] = {"processId": os.getpid(), "rootUri": None, "capabilities": {}}
        if options is not None:
            params["initializationOptions"] = options
        return self.call("initialize", params)

    def close(self) -> None:
        self._closer()


@contextlib.contextmanager
def raw_stdio(
    root: Path, *args: str, keep_stderr: bool = False
) -> Iterator[tuple[RawConn, subprocess.Popen[bytes]]]:
    """A stdio server over raw framing; ``keep_stderr`` pipes its log to ``proc.stderr``."""
    proc = subprocess.Popen(
        serve_command(root, "--stdio", *args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if keep_stderr else subprocess.DEVNULL,
    )
    conn = RawConn(proc.stdout, proc.stdin, lambda: None)
    try:
        yield conn, proc
    finally:
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


# -- a background listening server ------------------------------------------------------------


#: Scratch directories made outside pytest's tmp_path (socket paths must be short);
#: conftest removes them when the session ends.
SCRATCH: list[Path] = []


def scratch_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="fls-", dir="/tmp"))
    SCRATCH.append(path)
    return path


def short_socket_path() -> Path:
    """Unix socket paths must stay short (sockaddr_un); pytest's tmp paths can be long."""
    return scratch_dir() / "s.sock"


def read_endpoint(root: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads((root / ".fresh-ls" / "endpoint.json").read_text()))
    except (OSError, ValueError):
        return None


class Listening:
    """``serve --root ROOT --listen ADDRESS`` as a background process."""

    def __init__(self, root: Path, address: str, *args: str, log: Path | None = None) -> None:
        self.root = root
        self.log = log or scratch_dir() / "server.log"
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                serve_command(root, "--listen", address, *args),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        self.endpoint = self._wait_endpoint()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _wait_endpoint(self) -> dict[str, Any]:
        """endpoint.json written by this process (a stale one from a killed server names
        another pid)."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            ep = read_endpoint(self.root)
            if ep is not None and ep.get("pid") == self.proc.pid:
                return ep
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"server exited with {self.proc.returncode}: {self.log.read_text()}"
                )
            time.sleep(0.02)
        raise AssertionError(f"no endpoint.json from pid {self.proc.pid} in {WAIT_S} s")

    def connect(self) -> RawConn:
        return RawConn.connect(str(self.endpoint["address"]))

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=WAIT_S)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def parse_rendered(rendered: str) -> list[tuple[str, str]]:
    """Frame ``rendered`` the way the contract tells a reader to: a header line, then
    exactly the bytes it names (and a line feed when the text lacks one). A line before the
    first entry that names no byte count (a preamble) is skipped."""
    data = rendered.encode("utf-8")
    pos = 0
    out: list[tuple[str, str]] = []
    while pos < len(data):
        nl = data.index(b"\n", pos)
        header = data[pos:nl].decode("utf-8")
        m = re.search(r"\b(\d+) bytes\b", header)
        if m is None:
            assert not out, f"a line that is no header after an entry: {header!r}"
            pos = nl + 1
            continue
        size = int(m.group(1))
        text = data[nl + 1 : nl + 1 + size]
        assert len(text) == size
        pos = nl + 1 + size
        if not text.endswith(b"\n"):
            assert data[pos : pos + 1] == b"\n"
            pos += 1
        out.append((header, text.decode("utf-8")))
    return out


def check_diff(
    diff: str,
    path: str,
    observed: tuple[int, int],
    observed_text: str,
    current: tuple[int, int],
    disk: Path,
) -> None:
    """A unit's diff: headers name the path and both ranges, and every hunk's numbers are
    file line numbers: its old side is the observed text at those lines, its new side the
    disk's lines at those lines."""
    lines = diff.splitlines(keepends=True)
    old_header, new_header = lines[0].rstrip("\n"), lines[1].rstrip("\n")
    assert old_header.startswith("--- ") and path in old_header, old_header
    assert f"lines {observed[0]}-{observed[1]}" in old_header, old_header
    assert new_header.startswith("+++ ") and path in new_header, new_header
    assert f"lines {current[0]}-{current[1]}" in new_header, new_header
    seen = observed_text.splitlines(keepends=True)
    now = disk.read_bytes().decode("utf-8").splitlines(keepends=True)
    i = 2
    assert i < len(lines) and lines[i].startswith("@@ "), diff
    while i < len(lines):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", lines[i])
        assert m, lines[i]
        old_at, new_at = int(m.group(1)), int(m.group(3))
        old_n = int(m.group(2)) if m.group(2) is not None else 1
        new_n = int(m.group(4)) if m.group(4) is not None else 1
        if old_n == 0:
            old_at += 1  # an empty side names the line before it
        if new_n == 0:
            new_at += 1
        i += 1
        old_side: list[str] = []
        new_side: list[str] = []
        while i < len(lines) and not lines[i].startswith("@@ "):
            tag, body = lines[i][0], lines[i][1:]
            if tag == "\\":  # "\ No newline at end of file"
                i += 1
                continue
            if tag in " -":
                old_side.append(body)
            if tag in " +":
                new_side.append(body)
            i += 1
        assert len(old_side) == old_n and len(new_side) == new_n, diff
        base = old_at - observed[0]
        want_old = seen[base : base + old_n]
        assert [x.rstrip("\r\n") for x in old_side] == [x.rstrip("\r\n") for x in want_old], diff
        if old_n:
            assert observed[0] <= old_at and old_at + old_n - 1 <= observed[1], diff
        want_new = now[new_at - 1 : new_at - 1 + new_n]
        assert [x.rstrip("\r\n") for x in new_side] == [x.rstrip("\r\n") for x in want_new], diff
        if new_n:
            assert current[0] <= new_at and new_at + new_n - 1 <= current[1], diff


async def watcher_ready(conn: Lsp, root: Path) -> None:
    """Return once the server's watcher reports writes.

    The watcher starts in the background as the server starts; a write made before it is
    up is seen by the next request (which reads the disk) but pushes no notification.
    So: observe a scratch file and rewrite it until a ``fresh/didInvalidate`` for it
    arrives (each rewrite makes it differ from what was observed)."""
    probe = root / ".probe.txt"
    probe.write_text("observed\n")
    await conn.observe(session="probe", path=".probe.txt", viewId="probe")
    await conn.settle()
    deadline = time.monotonic() + WAIT_S
    n = 0
    while time.monotonic() < deadline:
        n += 1
        probe.write_text(f"rewrite {n}\n")
        for _ in range(25):
            if any(p["session"] == "probe" for p in conn.invalidations):
                await conn.forget("probe")
                await conn.settle()
                return
            await asyncio.sleep(0.02)
    raise AssertionError(f"the watcher reported no write in {WAIT_S} s")
