"""Clients for harnesses: attach to a running server through its endpoint file, or spawn one.

Both clients speak the LSP base protocol (``Content-Length`` framing, JSON-RPC 2.0) with
nothing but the standard library, so a harness needs no pygls. Each request of the
contract has one typed method; errors come back as ``FreshClientError`` carrying the
contract's code (``e.code == -32010`` for a path outside the root, and so on).

    with SyncClient.attach("/path/to/repo") as fresh:
        fresh.observe("agent-1", "src/cart.py", view_id="call_7", first_line=11, last_line=11)
        plan = fresh.project("agent-1")
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # AsyncClient imports asyncio itself: SyncClient callers skip its cost
    import asyncio

STATE_DIR_NAME = ".fresh-ls"


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


_ERRORS: dict[int, type[FreshClientError]] = {
    -32602: InvalidParamsError,
    -32010: PathOutsideRootError,
    -32011: FileUnreadableError,
    -32012: UnknownIdError,
    -32013: UnauthorizedError,
    -32601: MethodNotFoundError,
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
    path = state / "endpoint.json"
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


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body


def _read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            if length:
                break
            continue
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = stream.read(length)
    if len(body) < length:
        return None
    return dict(json.loads(body))


Result = dict[str, Any]
"""A request's result as the contract (docs/protocol.md) describes it."""


def _params(**fields: Any) -> dict[str, Any]:
    """``view_id`` -> ``viewId``; None values dropped (absent means the default)."""
    return _camel(fields)


def observe_params(
    session: str,
    path: str,
    view_id: str | None = None,
    first_line: int | None = None,
    last_line: int | None = None,
    text: str | None = None,
    kind: str | None = None,
) -> dict[str, Any]:
    return _params(
        session=session,
        path=path,
        view_id=view_id,
        first_line=first_line,
        last_line=last_line,
        text=text,
        kind=kind,
    )


def project_params(
    session: str,
    budget_bytes: int | None = None,
    policy: str | None = None,
    view_ids: list[str] | None = None,
) -> dict[str, Any]:
    return _params(session=session, budget_bytes=budget_bytes, policy=policy, view_ids=view_ids)


def _init_params(token: str | None, budget_bytes: int | None, policy: str | None) -> Any:
    return {
        "processId": os.getpid(),
        "rootUri": None,
        "capabilities": {},
        "initializationOptions": _params(token=token, budget_bytes=budget_bytes, policy=policy),
    }


def _serve_argv(
    root: str | os.PathLike[str], python: str | None, extra: list[str] | None
) -> list[str]:
    return [
        python or sys.executable,
        "-m",
        "fresh_ls",
        "serve",
        "--root",
        str(root),
        "--stdio",
        *(extra or []),
    ]


class _Requests:
    """The typed methods, shared by both clients; ``_call`` is the transport's."""

    def _call(self, method: str, params: dict[str, Any]) -> Any:  # pragma: no cover
        raise NotImplementedError

    def observe(
        self,
        session: str,
        path: str,
        *,
        view_id: str | None = None,
        first_line: int | None = None,
        last_line: int | None = None,
        text: str | None = None,
        kind: str | None = None,
    ) -> Result:
        """``fresh/observe``: register a view; ``{viewId, path, firstLine, lastLine, status,
        units}``."""
        params = observe_params(session, path, view_id, first_line, last_line, text, kind)
        return dict(self._call("fresh/observe", params))

    def stale(self, session: str, view_ids: list[str] | None = None) -> Result:
        """``fresh/stale``: ``{views: [...]}`` with statuses, diffs and who changed what."""
        return dict(self._call("fresh/stale", _params(session=session, view_ids=view_ids)))

    def project(
        self,
        session: str,
        *,
        budget_bytes: int | None = None,
        policy: str | None = None,
        view_ids: list[str] | None = None,
    ) -> Result:
        """``fresh/project``: ``{planId, entries, omitted, markers, usedBytes, budgetBytes,
        rendered}``."""
        params = project_params(session, budget_bytes, policy, view_ids)
        return dict(self._call("fresh/project", params))

    def commit(self, plan_id: str) -> Result:
        """``fresh/commit``: ``{ok, changed}``."""
        return dict(self._call("fresh/commit", {"planId": plan_id}))

    def forget(self, session: str, view_ids: list[str] | None = None) -> Result:
        """``fresh/forget``: ``{forgotten}``."""
        return dict(self._call("fresh/forget", _params(session=session, view_ids=view_ids)))

    def status(self) -> Result:
        """``fresh/status``: ``{version, root, sessions, sources, watching, stateDir, ...}``."""
        return dict(self._call("fresh/status", {}))

    def view_text(self, session: str, view_id: str) -> Result:
        """``fresh/viewText`` (an addition): what a view showed."""
        return dict(self._call("fresh/viewText", {"session": session, "viewId": view_id}))


class SyncClient(_Requests):
    """A blocking client; notifications from the server are kept in ``notifications``."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes], closer: Any = None) -> None:
        self._reader = reader
        self._writer = writer
        self._closer = closer
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.notifications: list[dict[str, Any]] = []

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def attach(
        cls,
        root: str | os.PathLike[str] | None = None,
        *,
        state_dir: str | None = None,
        budget_bytes: int | None = None,
        policy: str | None = None,
        timeout: float = 30.0,
    ) -> SyncClient:
        """Connect to the server running on ``root`` (found through its ``endpoint.json``)."""
        ep = endpoint_of(root, state_dir)
        address = str(ep["address"])
        if address.startswith("unix:"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            target: Any = address[5:]
        else:
            host, _, port = address[4:].rpartition(":")
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            target = (host, int(port))
        sock.settimeout(timeout)
        try:
            sock.connect(target)
        except OSError as exc:
            sock.close()
            raise ConnectionClosedError(
                None,
                f"cannot connect to {address}: {exc}; is the server (pid "
                f"{ep.get('pid')}) still running?",
            ) from None
        stream = sock.makefile("rwb")
        client = cls(stream, stream, sock)  # type: ignore[arg-type]
        try:
            client.initialize(token=ep.get("token"), budget_bytes=budget_bytes, policy=policy)
        except FreshClientError:
            client.close()
            raise
        return client

    @classmethod
    def spawn(
        cls,
        root: str | os.PathLike[str],
        *,
        python: str | None = None,
        extra_args: list[str] | None = None,
        budget_bytes: int | None = None,
        policy: str | None = None,
    ) -> SyncClient:
        """Start ``fresh-ls serve --root ROOT --stdio`` as a child and talk to it."""
        proc = subprocess.Popen(
            _serve_argv(root, python, extra_args), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert proc.stdin is not None and proc.stdout is not None
        client = cls(proc.stdout, proc.stdin, proc)
        try:
            client.initialize(budget_bytes=budget_bytes, policy=policy)
        except ConnectionClosedError:
            code = proc.wait(timeout=10)
            raise ConnectionClosedError(
                None,
                f"`fresh-ls serve --root {root} --stdio` exited with status {code} before "
                "answering initialize (status 3: another server is live on that root; attach "
                "to it instead)",
                "initialize",
            ) from None
        return client

    # -- protocol -------------------------------------------------------------------------

    def initialize(
        self, token: str | None = None, budget_bytes: int | None = None, policy: str | None = None
    ) -> Any:
        result = self._call("initialize", _init_params(token, budget_bytes, policy))
        self.notify("initialized", {})
        return result

    def notify(self, method: str, params: dict[str, Any]) -> None:
        with self._lock:
            try:
                self._writer.write(_frame({"jsonrpc": "2.0", "method": method, "params": params}))
                self._writer.flush()
            except (OSError, ValueError) as exc:
                raise ConnectionClosedError(None, f"cannot send: {exc}", method) from None

    def did_write(self, path: str, session: str | None = None) -> None:
        """``fresh/didWrite``: this agent (``session``) wrote ``path``."""
        self.notify("fresh/didWrite", _params(path=path, session=session))

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            msg_id = next(self._ids)
            try:
                self._writer.write(
                    _frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
                )
                self._writer.flush()
            except (OSError, ValueError) as exc:
                raise ConnectionClosedError(None, f"cannot send: {exc}", method) from None
            while True:
                try:
                    message = _read_message(self._reader)
                except (OSError, ValueError) as exc:
                    raise ConnectionClosedError(None, f"cannot read: {exc}", method) from None
                if message is None:
                    raise ConnectionClosedError(None, "the server closed the connection", method)
                if "id" not in message or message.get("method"):
                    if "method" in message and "id" not in message:
                        self.notifications.append(message)
                    continue
                if message["id"] != msg_id:
                    continue
                if "error" in message:
                    err = message["error"]
                    raise error_for(err.get("code"), err.get("message", ""), method)
                return message.get("result")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call("shutdown", None)  # type: ignore[arg-type]
            self.notify("exit", None)  # type: ignore[arg-type]
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


class AsyncClient:
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
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._task = asyncio.ensure_future(self._pump())
        self.notifications: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    @classmethod
    async def attach(
        cls,
        root: str | os.PathLike[str] | None = None,
        *,
        state_dir: str | None = None,
        budget_bytes: int | None = None,
        policy: str | None = None,
    ) -> AsyncClient:
        """Connect to the server running on ``root`` (found through its ``endpoint.json``)."""
        import asyncio

        ep = endpoint_of(root, state_dir)
        address = str(ep["address"])
        try:
            if address.startswith("unix:"):
                reader, writer = await asyncio.open_unix_connection(address[5:])
            else:
                host, _, port = address[4:].rpartition(":")
                reader, writer = await asyncio.open_connection(host, int(port))
        except OSError as exc:
            raise ConnectionClosedError(
                None,
                f"cannot connect to {address}: {exc}; is the server (pid {ep.get('pid')}) "
                "still running?",
            ) from None
        client = cls(reader, writer)
        try:
            await client.initialize(ep.get("token"), budget_bytes, policy)
        except FreshClientError:
            await client.close()
            raise
        return client

    @classmethod
    async def spawn(
        cls,
        root: str | os.PathLike[str],
        *,
        python: str | None = None,
        extra_args: list[str] | None = None,
        budget_bytes: int | None = None,
        policy: str | None = None,
    ) -> AsyncClient:
        """Start ``fresh-ls serve --root ROOT --stdio`` as a child and talk to it."""
        import asyncio

        proc = await asyncio.create_subprocess_exec(
            *_serve_argv(root, python, extra_args),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 26,
        )
        assert proc.stdin is not None and proc.stdout is not None
        client = cls(proc.stdout, proc.stdin, proc)
        try:
            await client.initialize(None, budget_bytes, policy)
        except ConnectionClosedError:
            code = await proc.wait()
            raise ConnectionClosedError(
                None,
                f"`fresh-ls serve --root {root} --stdio` exited with status {code} before "
                "answering initialize (status 3: another server is live on that root; attach "
                "to it instead)",
                "initialize",
            ) from None
        return client

    async def initialize(
        self, token: str | None = None, budget_bytes: int | None = None, policy: str | None = None
    ) -> Any:
        result = await self.request("initialize", _init_params(token, budget_bytes, policy))
        await self.notify("initialized", {})
        return result

    async def _pump(self) -> None:
        import asyncio

        try:
            while True:
                length = 0
                while True:
                    line = await self._reader.readline()
                    if not line:
                        raise ConnectionError("closed")
                    if line in (b"\r\n", b"\n"):
                        if length:
                            break
                        continue
                    name, _, value = line.decode("ascii", "replace").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                message = json.loads(await self._reader.readexactly(length))
                if "id" in message and "method" not in message:
                    fut = self._pending.pop(message["id"], None)
                    if fut is not None and not fut.done():
                        fut.set_result(message)
                elif "method" in message and "id" not in message:
                    await self.notifications.put(message)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(
                        ConnectionClosedError(None, "the server closed the connection")
                    )
            self._pending.clear()

    async def notify(self, method: str, params: Any) -> None:
        try:
            self._writer.write(_frame({"jsonrpc": "2.0", "method": method, "params": params}))
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise ConnectionClosedError(None, f"cannot send: {exc}", method) from None

    async def request(self, method: str, params: Any) -> Any:
        """Send any request; the result, or the ``FreshClientError`` subclass of its code."""
        import asyncio

        if self._task.done():
            raise ConnectionClosedError(None, "the server closed the connection", method)
        msg_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        try:
            self._writer.write(
                _frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            )
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            self._pending.pop(msg_id, None)
            raise ConnectionClosedError(None, f"cannot send: {exc}", method) from None
        try:
            message = await fut
        except ConnectionClosedError as exc:
            raise ConnectionClosedError(None, exc.message, method) from None
        if "error" in message:
            err = message["error"]
            raise error_for(err.get("code"), err.get("message", ""), method)
        return message.get("result")

    async def observe(
        self,
        session: str,
        path: str,
        *,
        view_id: str | None = None,
        first_line: int | None = None,
        last_line: int | None = None,
        text: str | None = None,
        kind: str | None = None,
    ) -> Result:
        """``fresh/observe``: register a view."""
        params = observe_params(session, path, view_id, first_line, last_line, text, kind)
        return dict(await self.request("fresh/observe", params))

    async def stale(self, session: str, view_ids: list[str] | None = None) -> Result:
        """``fresh/stale``: which views went stale, and how."""
        return dict(await self.request("fresh/stale", _params(session=session, view_ids=view_ids)))

    async def project(
        self,
        session: str,
        *,
        budget_bytes: int | None = None,
        policy: str | None = None,
        view_ids: list[str] | None = None,
    ) -> Result:
        """``fresh/project``: the budgeted projection and the markers."""
        params = project_params(session, budget_bytes, policy, view_ids)
        return dict(await self.request("fresh/project", params))

    async def commit(self, plan_id: str) -> Result:
        """``fresh/commit``: ``{ok, changed}``."""
        return dict(await self.request("fresh/commit", {"planId": plan_id}))

    async def forget(self, session: str, view_ids: list[str] | None = None) -> Result:
        """``fresh/forget``: ``{forgotten}``."""
        params = _params(session=session, view_ids=view_ids)
        return dict(await self.request("fresh/forget", params))

    async def status(self) -> Result:
        """``fresh/status``."""
        return dict(await self.request("fresh/status", {}))

    async def view_text(self, session: str, view_id: str) -> Result:
        """``fresh/viewText`` (an addition): what a view showed."""
        return dict(await self.request("fresh/viewText", {"session": session, "viewId": view_id}))

    async def did_write(self, path: str, session: str | None = None) -> None:
        """``fresh/didWrite``: this agent (``session``) wrote ``path``."""
        await self.notify("fresh/didWrite", _params(path=path, session=session))

    async def close(self) -> None:
        import asyncio

        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.request("shutdown", None), 5)
            await self.notify("exit", None)
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


def _camel(params: dict[str, Any]) -> dict[str, Any]:
    """``view_id`` -> ``viewId``; None values dropped (absent means default)."""
    out = {}
    for key, value in params.items():
        if value is None:
            continue
        head, *rest = key.split("_")
        out[head + "".join(r.title() for r in rest)] = value
    return out
