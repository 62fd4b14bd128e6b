"""Clients for harnesses: attach to a running server through its endpoint file, or spawn one.

Both clients speak the LSP base protocol (``Content-Length`` framing, JSON-RPC 2.0) with
nothing but the standard library, so a harness needs no pygls. Each request of the
contract has one typed method; errors come back as ``FreshClientError`` carrying the
contract's code (``e.code == -32010`` for a path outside the root, and so on).

    with SyncClient.attach("/path/to/repo") as fresh:
        fresh.observe("agent-1", "src/cart.py", view_id="call_7", first_line=11, last_line=11)
        plan = fresh.project("agent-1")

An attached client that loses its connection (the server was restarted: a crash, the
editor's Restart Server) reconnects once, transparently: it waits up to
``RECONNECT_WAIT_S`` for the root's server to accept connections again, presents the token
it attached with (the server keeps it across restarts of the root), and sends the request
again. Every request of the contract can be sent twice (an ``observe`` without
``view_id`` gets an id minted by the client, so a second send replaces the view it
registered); a plan from before the restart is unknown to the new server
(``UnknownIdError``: plan again). A
notification written to a connection the server has just dropped may be lost without
error; a ``didWrite`` lost that way is still seen by the server's watcher.

``AsyncClient.shared`` (what the proxies of ``run`` use) goes further: when no server is
live it starts the root's shared server (``fresh_ls.autostart``), and when its connection
drops it reconnects at once, starting a new server when no process holds the root.

The typed methods are generated from the protocol's method table
(``fresh_ls/client/requests.py``, by ``make protocol``). The protocol is written once,
without I/O, in ``ClientCore``: framing (the server's own
``fresh_ls.framing``), request ids, matching answers to their requests, notifications,
error codes to exceptions, the ``initialize`` handshake. ``SyncClient`` and ``AsyncClient``
are thin fronts that move its bytes over a blocking stream or an asyncio one, driving its
step generators with ``fresh_ls.steps.run`` and ``arun``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypedDict, Unpack

from fresh_ls import errors, steps
from fresh_ls.client.requests import Requests, wire_params
from fresh_ls.core.jsonload import loads_own
from fresh_ls.framing import LINE, FrameError, encode_frame, frame_steps
from fresh_ls.launch import python_command
from fresh_ls.methods import PROJECT
from fresh_ls.statedir import ENDPOINT_FILE, STATE_DIR_NAME, connect_endpoint, endpoint_target

if TYPE_CHECKING:  # AsyncClient imports asyncio itself: SyncClient callers skip its cost
    import asyncio

#: JSON-RPC's own code for a method the server does not know.
METHOD_NOT_FOUND = -32601
CLOSED = "the server closed the connection"
#: How long an attached client waits for a restarted server before giving up reconnecting.
RECONNECT_WAIT_S = 15.0


class FreshClientError(Exception):
    """A JSON-RPC error from the server (``code`` as the contract lists), or a transport
    failure (``code`` None).

    Requests raise the subclass that names the code (``PathOutsideRootError`` for -32010,
    and so on), so a harness can catch exactly what it handles; every one is a
    ``FreshClientError`` with ``code``, ``message`` and ``method``.
    """

    def __init__(self, code: int | None, message: str, method: str | None = None) -> None:
        super().__init__(f"{method or 'fresh-ls'}: {message}" + (f" (code {code})" if code else ""))
        self.code = code
        self.message = message
        self.method = method


class InvalidParamsError(FreshClientError):
    """-32602: a field is missing, of the wrong type, or out of range (the message names it)."""


class PathOutsideRootError(FreshClientError):
    """-32010: the path resolves outside the server's root."""


class FileUnreadableError(FreshClientError):
    """-32011: the file is missing, binary, too large or not readable as text."""


class UnknownIdError(FreshClientError):
    """-32012: an unknown view id, or an unknown or expired plan."""


class UnauthorizedError(FreshClientError):
    """-32013: a missing or wrong token on a listening endpoint."""


class MethodNotFoundError(FreshClientError):
    """-32601: the server does not know the method."""


class ServerError(FreshClientError):
    """Any other JSON-RPC error code (-32603: a handler failed; -32700: a parse error)."""


class ConnectionClosedError(FreshClientError):
    """No server to talk to: none running, the connection refused or closed (``code`` None)."""


#: The client's exception for each error code, keyed by the server's typed errors.
_ERRORS: dict[int, type[FreshClientError]] = {
    errors.InvalidParams.code: InvalidParamsError,
    errors.OutsideRoot.code: PathOutsideRootError,
    errors.FileUnreadable.code: FileUnreadableError,
    errors.UnknownId.code: UnknownIdError,
    errors.Unauthorized.code: UnauthorizedError,
    METHOD_NOT_FOUND: MethodNotFoundError,
}


def error_for(code: int | None, message: str, method: str | None = None) -> FreshClientError:
    """The exception for a JSON-RPC error ``code`` (``ConnectionClosedError`` for None)."""
    if code is None:
        return ConnectionClosedError(None, message, method)
    return _ERRORS.get(code, ServerError)(code, message, method)


def endpoint_of(
    root: str | os.PathLike[str] | None = None, state_dir: str | None = None
) -> dict[str, Any]:
    """The live server's ``endpoint.json`` for a root (or a state dir)."""
    state = Path(state_dir) if state_dir else Path(root or ".").resolve() / STATE_DIR_NAME
    path = state / ENDPOINT_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConnectionClosedError(
            None,
            f"no running server: {path} does not exist; start one with "
            f"`fresh-ls serve --root {Path(root or '.').resolve()} --listen`",
        ) from None
    except (OSError, ValueError) as exc:
        raise ConnectionClosedError(None, f"cannot read {path}: {exc}") from None
    return dict(data)


Result = dict[str, Any]
"""A request's result as the contract (docs/protocol.md) describes it."""


#: What this client declares at ``initialize`` (LSP's ``capabilities.experimental``, the
#: server's ``freshLs.projectLeavesOut``, fresh_ls/server/connection.py): its
#: ``fresh/project`` answers may come without ``rendered``, which ``ClientCore.receive``
#: rebuilds from the entries as the contract frames them, so every caller still gets the
#: contract's whole answer. The server then encodes and writes, and this client decodes,
#: each entry's header and text once, not twice (136 KB of a 502 KB ``policy: all``
#: answer). A server that does not know the capability sends the whole answer, taken as it is.
PROJECT_LEAVES_OUT = ("rendered",)


def initialize_params(token: str | None, budget_bytes: int | None, policy: str | None) -> Any:
    """The params of ``initialize``: the token (for a listening endpoint), the defaults and
    the client's capabilities (``PROJECT_LEAVES_OUT``)."""
    return {
        "processId": os.getpid(),
        "rootUri": None,
        "capabilities": {
            "experimental": {"freshLs": {"projectLeavesOut": list(PROJECT_LEAVES_OUT)}}
        },
        "initializationOptions": wire_params(
            {"token": token, "budget_bytes": budget_bytes, "policy": policy}
        ),
    }


@dataclass(frozen=True)
class Message:
    """A message a step generator wants sent: a request (its result is sent back into the
    generator) or a notification."""

    method: str
    params: Any
    request: bool = True


def handshake(
    token: str | None, budget_bytes: int | None, policy: str | None
) -> Generator[Message, Any, Any]:
    """``initialize`` (with the token), then ``initialized``; returns initialize's result."""
    result = yield Message("initialize", initialize_params(token, budget_bytes, policy))
    yield Message("initialized", {}, request=False)
    return result


def goodbye() -> Generator[Message, Any, None]:
    """``shutdown``, then ``exit``: the LSP way to end a connection."""
    yield Message("shutdown", None)
    yield Message("exit", None, request=False)


@dataclass(frozen=True)
class Answer:
    """The server's answer to one request of ours."""

    id: int
    method: str
    message: dict[str, Any]
    waiter: Any = None  # what the front gave ``request`` to wake when this answer comes

    def value(self) -> Any:
        """The result, or the ``FreshClientError`` subclass of the error's code raised."""
        if "error" in self.message:
            err = self.message["error"]
            err = err if isinstance(err, dict) else {}
            raise error_for(err.get("code"), err.get("message", ""), self.method)
        return self.message.get("result")


class ClientCore:
    """A client's side of the protocol, without I/O (sans-IO): it makes the bytes to send
    and reads the bytes received, and its fronts move them.

    ``request`` allocates an id and remembers what waits for it; ``read_message`` is a step
    generator that reads one message (``steps.run``/``arun`` drive it over a stream);
    ``receive`` routes a message: a notification to ``on_notification``, an answer back to
    its request as an ``Answer``.
    """

    def __init__(self, on_notification: Callable[[dict[str, Any]], Any]) -> None:
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, Any]] = {}
        self._on_notification = on_notification

    def request(self, method: str, params: Any, waiter: Any = None) -> tuple[int, bytes]:
        """A new request's id and frame; ``waiter`` comes back on its ``Answer``."""
        msg_id = next(self._ids)
        self._pending[msg_id] = (method, waiter)
        return msg_id, _encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

    def notification(self, method: str, params: Any) -> bytes:
        return _encode({"jsonrpc": "2.0", "method": method, "params": params})

    def abandon(self, msg_id: int) -> None:
        """Forget a request that could not be sent."""
        self._pending.pop(msg_id, None)

    def abandon_all(self) -> list[Any]:
        """Forget every request still waiting (the connection ended): their waiters."""
        waiters = [waiter for _, waiter in self._pending.values()]
        self._pending.clear()
        return waiters

    def read_message(self) -> Generator[int, bytes, dict[str, Any]]:
        """Read one message: yields ``LINE`` (send a line, as ``readline`` gives it) or a
        byte count (send that many bytes, or fewer at the end of the stream). Raises
        ``EOFError`` at the end of the stream, ``FrameError`` or ``ValueError`` for bytes
        that are no message."""
        body = yield from frame_steps(None)
        message = loads_own(body)
        if not isinstance(message, dict):
            raise ValueError("a message that is not a JSON object")
        return message

    def receive(self, message: dict[str, Any]) -> Answer | None:
        """The ``Answer`` a message is to one of our requests, else None (a notification is
        handed to ``on_notification``; anything else is ignored)."""
        if "method" in message:
            if "id" not in message:
                self._on_notification(message)
            return None  # a request from the server: fresh-ls sends none
        msg_id = message.get("id")
        if not isinstance(msg_id, int) or msg_id not in self._pending:
            return None
        method, waiter = self._pending.pop(msg_id)
        if method == PROJECT:
            with_rendered(message.get("result"))
        return Answer(msg_id, method, message, waiter)


def with_rendered(result: Any) -> None:
    """A ``fresh/project`` answer that came without ``rendered`` (``PROJECT_LEAVES_OUT``) made
    whole again, in place: every entry's header, a line feed, its text, and a line feed when
    the text does not end with one, in the entries' order (the contract's framing, as the
    server renders it); ``rendered`` goes last, where the whole answer has it. Any other
    answer is left as it is."""
    if isinstance(result, dict) and "rendered" not in result:
        entries = result.get("entries")
        if isinstance(entries, list) and all(
            isinstance(e, dict)
            and isinstance(e.get("header"), str)
            and isinstance(e.get("text"), str)
            for e in entries
        ):
            result["rendered"] = "".join(
                [
                    f"{e['header']}\n{e['text']}"
                    if e["text"].endswith("\n")
                    else f"{e['header']}\n{e['text']}\n"
                    for e in entries
                ]
            )


def _encode(message: dict[str, Any]) -> bytes:
    return encode_frame(json.dumps(message).encode("utf-8"))


def _target(ep: dict[str, Any]) -> tuple[str, Any]:
    """``("unix", path)`` or ``("tcp", (host, port))`` for an endpoint's address."""
    try:
        return endpoint_target(str(ep["address"]))
    except ValueError as exc:
        raise ConnectionClosedError(None, str(exc)) from None


def _cannot_connect(ep: dict[str, Any], exc: OSError) -> ConnectionClosedError:
    return ConnectionClosedError(
        None,
        f"cannot connect to {ep['address']}: {exc}; is the server (pid {ep.get('pid')}) "
        "still running?",
    )


#: What each exit status of ``fresh-ls serve`` means, for the one line a failed spawn says.
SERVE_STATUSES = {
    2: "it refused its arguments",
    3: "another server is live on that root; attach to it instead",
    4: "its view store cannot be opened; `fresh-ls doctor` says why",
}


def _spawn_failed(root: str | os.PathLike[str], code: int | None) -> ConnectionClosedError:
    why = SERVE_STATUSES.get(code or 0, "its stderr says why")
    return ConnectionClosedError(
        None,
        f"`fresh-ls serve --root {root} --stdio` exited with status {code} before "
        f"answering initialize ({why})",
        "initialize",
    )


@dataclass(frozen=True)
class _Reattach:
    """What an attached client needs to connect again after the server restarted: where its
    endpoint file is, the token it presented, and the options it attached with."""

    root: str | os.PathLike[str] | None
    state_dir: str | None
    token: str | None
    budget_bytes: int | None
    policy: str | None
    timeout: float | None = None
    #: Set for a client of the root's shared server (``AsyncClient.shared``): what to
    #: start when no server is live (``fresh_ls.autostart.StartPlan``).
    start: Any = None


def _open_socket(ep: dict[str, Any], timeout: float | None) -> socket.socket:
    try:
        return connect_endpoint(*_target(ep), timeout)
    except OSError as exc:
        raise _cannot_connect(ep, exc) from None


class AttachOptions(TypedDict, total=False):
    """The keywords of ``attach``, each optional: ``state_dir`` (where ``endpoint.json``
    is, when not ``<root>/.fresh-ls``), ``budget_bytes`` and ``policy`` (the connection's
    defaults for ``fresh/project``)."""

    state_dir: str | None
    budget_bytes: int | None
    policy: str | None


class SpawnOptions(TypedDict, total=False):
    """The keywords of ``spawn``, each optional: ``python`` (the interpreter to run the
    server with; this one by default), ``extra_args`` (more ``serve`` arguments, e.g.
    ``["--no-watch"]``), ``budget_bytes`` and ``policy`` (as for ``attach``)."""

    python: str | None
    extra_args: list[str] | None
    budget_bytes: int | None
    policy: str | None


def _spawning(
    root: str | os.PathLike[str], options: SpawnOptions
) -> tuple[list[str], int | None, str | None]:
    """The child's argv, and the connection defaults, for ``spawn``."""
    argv = python_command(
        "serve",
        "--root",
        str(root),
        "--stdio",
        *(options.get("extra_args") or []),
        python=options.get("python"),
    )
    return argv, options.get("budget_bytes"), options.get("policy")


class SyncClient(Requests[Result, None]):
    """A blocking client; notifications from the server are kept in ``notifications``."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes], closer: Any = None) -> None:
        self._reader = reader
        self._writer = writer
        self._closer = closer
        self._lock = threading.Lock()
        self.notifications: list[dict[str, Any]] = []
        self._core = ClientCore(self.notifications.append)
        #: Set for an attached client: how to reconnect when the connection drops.
        self._reattach: _Reattach | None = None

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def attach(
        cls,
        root: str | os.PathLike[str] | None = None,
        *,
        timeout: float = 30.0,
        **options: Unpack[AttachOptions],
    ) -> SyncClient:
        """Connect to the server running on ``root`` (found through its ``endpoint.json``);
        ``timeout`` bounds every read and write on the socket."""
        ep = endpoint_of(root, options.get("state_dir"))
        budget_bytes, policy = options.get("budget_bytes"), options.get("policy")
        sock = _open_socket(ep, timeout)
        stream = sock.makefile("rwb")
        client = cls(stream, stream, sock)  # type: ignore[arg-type]
        try:
            client.initialize(token=ep.get("token"), budget_bytes=budget_bytes, policy=policy)
        except FreshClientError:
            client.close()
            raise
        client._reattach = _Reattach(
            root, options.get("state_dir"), ep.get("token"), budget_bytes, policy, timeout
        )
        return client

    def _reconnect(self) -> bool:
        """After a dropped connection: connect to the root's server again (waiting for it to
        be back) and present the same token. False when this client does not reconnect."""
        plan = self._reattach
        if plan is None:
            return False
        with contextlib.suppress(Exception):
            self._reader.close()
        with contextlib.suppress(Exception):
            if self._closer is not None:
                self._closer.close()
        deadline = time.monotonic() + RECONNECT_WAIT_S
        while True:
            try:
                sock = _open_socket(endpoint_of(plan.root, plan.state_dir), plan.timeout)
                break
            except ConnectionClosedError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.1)
        stream = sock.makefile("rwb")
        self._reader, self._writer, self._closer = stream, stream, sock  # type: ignore[assignment]
        self._core = ClientCore(self.notifications.append)
        steps.run(handshake(plan.token, plan.budget_bytes, plan.policy), self._perform_once)
        return True

    @classmethod
    def spawn(cls, root: str | os.PathLike[str], **options: Unpack[SpawnOptions]) -> SyncClient:
        """Start ``fresh-ls serve --root ROOT --stdio`` as a child and talk to it."""
        argv, budget_bytes, policy = _spawning(root, options)
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        client = cls(proc.stdout, proc.stdin, proc)
        try:
            client.initialize(budget_bytes=budget_bytes, policy=policy)
        except ConnectionClosedError:
            raise _spawn_failed(root, proc.wait(timeout=10)) from None
        return client

    # -- protocol -------------------------------------------------------------------------

    def initialize(
        self, token: str | None = None, budget_bytes: int | None = None, policy: str | None = None
    ) -> Any:
        return steps.run(handshake(token, budget_bytes, policy), self._perform)

    def _perform(self, message: Message) -> Any:
        if message.request:
            return self._call(message.method, message.params)
        return self.notify(message.method, message.params)

    def _perform_once(self, message: Message) -> Any:
        """The handshake of a reconnection: on the new connection only, never again."""
        if message.request:
            return self._call_once(message.method, message.params)
        with self._lock:
            self._send(self._core.notification(message.method, message.params), message.method)

    def notify(self, method: str, params: Any) -> None:
        try:
            with self._lock:
                self._send(self._core.notification(method, params), method)
        except ConnectionClosedError:
            if not self._reconnect():
                raise
            with self._lock:
                self._send(self._core.notification(method, params), method)

    def _send(self, frame: bytes, method: str) -> None:
        try:
            self._writer.write(frame)
            self._writer.flush()
        except (OSError, ValueError) as exc:
            raise ConnectionClosedError(None, f"cannot send: {exc}", method) from None

    def _take(self, want: int) -> bytes:
        return self._reader.readline() if want == LINE else self._reader.read(want)

    def _result(self, method: str, params: dict[str, Any]) -> Result:
        return dict(self._call(method, params))

    def _call(self, method: str, params: Any) -> Any:
        try:
            return self._call_once(method, params)
        except ConnectionClosedError:
            if not self._reconnect():
                raise
        return self._call_once(method, params)

    def _call_once(self, method: str, params: Any) -> Any:
        with self._lock:
            msg_id, frame = self._core.request(method, params)
            self._send(frame, method)
            while True:
                try:
                    message = steps.run(self._core.read_message(), self._take)
                except EOFError:
                    raise ConnectionClosedError(None, CLOSED, method) from None
                except (OSError, ValueError, FrameError) as exc:
                    raise ConnectionClosedError(None, f"cannot read: {exc}", method) from None
                answer = self._core.receive(message)
                if answer is not None and answer.id == msg_id:
                    return answer.value()

    def close(self) -> None:
        self._reattach = None  # a goodbye to a dead server is not worth a reconnection
        with contextlib.suppress(Exception):
            steps.run(goodbye(), self._perform)
        closer = self._closer
        if isinstance(closer, subprocess.Popen):
            for stream in (closer.stdin, closer.stdout):
                with contextlib.suppress(Exception):
                    if stream is not None:
                        stream.close()
            try:
                closer.wait(timeout=10)
            except subprocess.TimeoutExpired:
                closer.kill()
                closer.wait()
        elif closer is not None:
            with contextlib.suppress(Exception):
                self._reader.close()
            with contextlib.suppress(Exception):
                closer.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(Requests[Awaitable[Result], Awaitable[None]]):
    """The same requests, awaited: over a listening endpoint (``attach``) or a child server
    on stdio (``spawn``). Notifications from the server arrive on ``notifications``."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        process: asyncio.subprocess.Process | None = None,
    ) -> None:
        import asyncio

        self._reader = reader
        self._writer = writer
        self._process = process
        self.notifications: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._core = ClientCore(self.notifications.put_nowait)
        self._task = asyncio.ensure_future(self._pump())
        #: Set for an attached client: how to reconnect when the connection drops.
        self._reattach: _Reattach | None = None
        #: Counts reconnections, so requests that failed together reconnect once.
        self._generation = 0
        self._reconnecting = asyncio.Lock()
        #: A reconnection begun when the connection dropped (``_reconnect_soon``).
        self._background: asyncio.Future[None] | None = None

    @classmethod
    async def attach(
        cls, root: str | os.PathLike[str] | None = None, **options: Unpack[AttachOptions]
    ) -> AsyncClient:
        """Connect to the server running on ``root`` (found through its ``endpoint.json``)."""
        ep = endpoint_of(root, options.get("state_dir"))
        budget_bytes, policy = options.get("budget_bytes"), options.get("policy")
        reader, writer = await _open_stream(ep)
        client = cls(reader, writer)
        try:
            await client.initialize(ep.get("token"), budget_bytes, policy)
        except FreshClientError:
            await client.close()
            raise
        client._reattach = _Reattach(
            root, options.get("state_dir"), ep.get("token"), budget_bytes, policy
        )
        return client

    async def _reconnect(self, generation: int) -> bool:
        """After a dropped connection: connect to the root's server again (waiting for it to
        be back) and present the same token. Requests that failed on the same connection
        share one reconnection. False when this client does not reconnect."""
        import asyncio

        async with self._reconnecting:
            plan = self._reattach
            if plan is None:
                return False
            if self._generation != generation:
                return True  # another request reconnected already
            self._writer.close()
            self._task.cancel()
            for waiter in self._core.abandon_all():  # they retry on the new connection
                if not waiter.done():
                    waiter.set_exception(ConnectionClosedError(None, CLOSED))
            deadline = time.monotonic() + (
                RECONNECT_WAIT_S if plan.start is None else _start_wait_s()
            )
            try:
                reader, writer, _ = await _connect_live(plan, deadline)
            except ConnectionClosedError:
                return False
            self._reader, self._writer = reader, writer
            self._core = ClientCore(self.notifications.put_nowait)
            self._task = asyncio.ensure_future(self._pump())
            await steps.arun(
                handshake(plan.token, plan.budget_bytes, plan.policy), self._perform_once
            )
            self._generation += 1
            return True

    @classmethod
    async def shared(
        cls,
        root: str | os.PathLike[str],
        *,
        state_dir: str | os.PathLike[str] | None = None,
        also: Sequence[str | os.PathLike[str]] = (),
        budget_bytes: int | None = None,
        policy: str | None = None,
    ) -> AsyncClient:
        """A client of the root's shared server: the live one, else one started detached
        for every client of the root (``fresh_ls.autostart``: it exits once idle). When
        its server goes away it reconnects at once, starting a new server when none is
        live, so the requests sent meanwhile wait for it instead of failing."""
        from fresh_ls import autostart

        top = Path(root).resolve()
        state = Path(state_dir).resolve() if state_dir else top / STATE_DIR_NAME
        plan = _Reattach(
            str(top),
            str(state),
            None,
            budget_bytes,
            policy,
            start=autostart.StartPlan(
                top, state, state_dir is not None, tuple(Path(f) for f in also)
            ),
        )
        deadline = time.monotonic() + _start_wait_s()
        while True:
            reader, writer, ep = await _connect_live(plan, deadline)
            client = cls(reader, writer)
            try:
                await client.initialize(ep.get("token"), budget_bytes, policy)
            except ConnectionClosedError:
                # the server was stopping (idle) as we came: the next one, or a new one
                await client.close()
                if time.monotonic() >= deadline:
                    raise
                continue
            except FreshClientError:
                await client.close()
                raise
            client._reattach = dataclasses.replace(plan, token=ep.get("token"))
            return client

    async def _reconnect_soon(self, generation: int) -> None:
        """A shared server's client reconnects as soon as its connection drops (not at
        the next request), so a request that comes meanwhile finds the server back."""
        with contextlib.suppress(FreshClientError, OSError):
            await self._reconnect(generation)

    @classmethod
    async def spawn(
        cls, root: str | os.PathLike[str], **options: Unpack[SpawnOptions]
    ) -> AsyncClient:
        """Start ``fresh-ls serve --root ROOT --stdio`` as a child and talk to it."""
        import asyncio

        argv, budget_bytes, policy = _spawning(root, options)
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 26,
        )
        assert proc.stdin is not None and proc.stdout is not None
        client = cls(proc.stdout, proc.stdin, proc)
        try:
            await client.initialize(None, budget_bytes, policy)
        except ConnectionClosedError:
            raise _spawn_failed(root, await proc.wait()) from None
        return client

    async def initialize(
        self, token: str | None = None, budget_bytes: int | None = None, policy: str | None = None
    ) -> Any:
        return await steps.arun(handshake(token, budget_bytes, policy), self._perform)

    def _perform(self, message: Message) -> Awaitable[Any]:
        if message.request:
            return self.request(message.method, message.params)
        return self.notify(message.method, message.params)

    def _perform_once(self, message: Message) -> Awaitable[Any]:
        """The handshake of a reconnection: on the new connection only, never again."""
        if message.request:
            return self._request_once(message.method, message.params)
        return self._send(self._core.notification(message.method, message.params), message.method)

    def _take(self, want: int) -> Awaitable[bytes]:
        return self._reader.readline() if want == LINE else self._reader.readexactly(want)

    async def _pump(self) -> None:
        import asyncio

        try:
            while True:
                message = await steps.arun(self._core.read_message(), self._take)
                answer = self._core.receive(message)
                if answer is not None and not answer.waiter.done():
                    answer.waiter.set_result(answer)
        except (EOFError, FrameError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            for waiter in self._core.abandon_all():
                if not waiter.done():
                    waiter.set_exception(ConnectionClosedError(None, CLOSED))
            plan = self._reattach
            if plan is not None and plan.start is not None:
                self._background = asyncio.ensure_future(self._reconnect_soon(self._generation))

    async def notify(self, method: str, params: Any) -> None:
        generation = self._generation
        try:
            await self._send(self._core.notification(method, params), method)
        except ConnectionClosedError:
            if not await self._reconnect(generation):
                raise
            await self._send(self._core.notification(method, params), method)

    async def _send(self, frame: bytes, method: str) -> None:
        try:
            self._writer.write(frame)
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise ConnectionClosedError(None, f"cannot send: {exc}", method) from None

    async def request(self, method: str, params: Any) -> Any:
        """Send any request; the result, or the ``FreshClientError`` subclass of its code."""
        generation = self._generation
        try:
            return await self._request_once(method, params)
        except ConnectionClosedError:
            if not await self._reconnect(generation):
                raise
        return await self._request_once(method, params)

    async def _request_once(self, method: str, params: Any) -> Any:
        import asyncio

        if self._task.done():
            raise ConnectionClosedError(None, CLOSED, method)
        waiter: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        msg_id, frame = self._core.request(method, params, waiter)
        try:
            await self._send(frame, method)
        except ConnectionClosedError:
            self._core.abandon(msg_id)
            raise
        try:
            answer = await waiter
        except ConnectionClosedError as exc:
            raise ConnectionClosedError(None, exc.message, method) from None
        return answer.value()

    async def _result(self, method: str, params: dict[str, Any]) -> Result:
        return dict(await self.request(method, params))

    async def close(self) -> None:
        import asyncio

        self._reattach = None  # a goodbye to a dead server is not worth a reconnection
        if self._background is not None:
            self._background.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._background
        with contextlib.suppress(Exception):
            await asyncio.wait_for(steps.arun(goodbye(), self._perform), 5)
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
        proc = self._process
        if proc is not None:
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


async def _open_stream(
    ep: dict[str, Any],
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    import asyncio

    kind, target = _target(ep)
    try:
        if kind == "unix":
            return await asyncio.open_unix_connection(target)
        return await asyncio.open_connection(*target)
    except OSError as exc:
        raise _cannot_connect(ep, exc) from None


def _start_wait_s() -> float:
    from fresh_ls.autostart import START_WAIT_S

    return START_WAIT_S


async def _connect_live(
    plan: _Reattach, deadline: float
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, dict[str, Any]]:
    """A connection to the root's server (and its endpoint), waiting for it until
    ``deadline`` (``time.monotonic()``); with ``plan.start``, starting it when no process
    holds the root (``fresh_ls.autostart``). ``ConnectionClosedError`` past the deadline,
    or at once when the server started cannot run (its log's last line says why)."""
    import asyncio

    while True:
        try:
            ep = endpoint_of(plan.root, plan.state_dir)
            reader, writer = await _open_stream(ep)
            return reader, writer, ep
        except ConnectionClosedError:
            if time.monotonic() >= deadline:
                raise
        if plan.start is not None:
            from fresh_ls import autostart

            try:
                await autostart.start_unless_live(plan.start, deadline)
            except autostart.CannotStart as exc:
                raise ConnectionClosedError(None, str(exc), "initialize") from None
        await asyncio.sleep(0.05)
