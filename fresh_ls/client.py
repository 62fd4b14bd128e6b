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

import asyncio
import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

STATE_DIR_NAME = ".fresh-ls"


class FreshClientError(Exception):
    """A JSON-RPC error from the server (``code`` as the contract lists), or a transport
    failure (``code`` None)."""

    def __init__(self, code: int | None, message: str, method: str | None = None) -> None:
        super().__init__(f"{method or 'fresh-ls'}: {message}" + (f" (code {code})" if code else ""))
        self.code = code
        self.message = message
        self.method = method


def endpoint_of(
    root: str | os.PathLike[str] | None = None, state_dir: str | None = None
) -> dict[str, Any]:
    """The live server's ``endpoint.json`` for a root (or a state dir)."""
    state = Path(state_dir) if state_dir else Path(root or ".").resolve() / STATE_DIR_NAME
    path = state / "endpoint.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FreshClientError(
            None,
            f"no running server: {path} does not exist; start one with "
            f"`fresh-ls serve --root {Path(root or '.').resolve()} --listen`",
        ) from None
    except (OSError, ValueError) as exc:
        raise FreshClientError(None, f"cannot read {path}: {exc}") from None
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
    ) -> Any:
        params: dict[str, Any] = {"session": session, "path": path}
        for key, value in (
            ("viewId", view_id),
            ("firstLine", first_line),
            ("lastLine", last_line),
            ("text", text),
            ("kind", kind),
        ):
            if value is not None:
                params[key] = value
        return self._call("fresh/observe", params)

    def stale(self, session: str, view_ids: list[str] | None = None) -> Any:
        params: dict[str, Any] = {"session": session}
        if view_ids is not None:
            params["viewIds"] = view_ids
        return self._call("fresh/stale", params)

    def project(
        self,
        session: str,
        *,
        budget_bytes: int | None = None,
        policy: str | None = None,
        view_ids: list[str] | None = None,
    ) -> Any:
        params: dict[str, Any] = {"session": session}
        if budget_bytes is not None:
            params["budgetBytes"] = budget_bytes
        if policy is not None:
            params["policy"] = policy
        if view_ids is not None:
            params["viewIds"] = view_ids
        return self._call("fresh/project", params)

    def commit(self, plan_id: str) -> Any:
        return self._call("fresh/commit", {"planId": plan_id})

    def forget(self, session: str, view_ids: list[str] | None = None) -> Any:
        params: dict[str, Any] = {"session": session}
        if view_ids is not None:
            params["viewIds"] = view_ids
        return self._call("fresh/forget", params)

    def status(self) -> Any:
        return self._call("fresh/status", {})

    def view_text(self, session: str, view_id: str) -> Any:
        return self._call("fresh/viewText", {"session": session, "viewId": view_id})


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
            raise FreshClientError(
                None,
                f"cannot connect to {address}: {exc}; is the server (pid "
                f"{ep.get('pid')}) still running?",
            ) from None
        stream = sock.makefile("rwb")
        client = cls(stream, stream, sock)  # type: ignore[arg-type]
        client.initialize(token=ep.get("token"), budget_bytes=budget_bytes, policy=policy)
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
        proc = subprocess.Popen(
            [
                python or sys.executable,
                "-m",
                "fresh_ls",
                "serve",
                "--root",
                str(root),
                "--stdio",
                *(extra_args or []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        client = cls(proc.stdout, proc.stdin, proc)
        client.initialize(budget_bytes=budget_bytes, policy=policy)
        return client

    # -- protocol -------------------------------------------------------------------------

    def initialize(
        self, token: str | None = None, budget_bytes: int | None = None, policy: str | None = None
    ) -> Any:
        opts: dict[str, Any] = {}
        if token is not None:
            opts["token"] = token
        if budget_bytes is not None:
            opts["budgetBytes"] = budget_bytes
        if policy is not None:
            opts["policy"] = policy
        result = self._call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {},
                "initializationOptions": opts,
            },
        )
        self.notify("initialized", {})
        return result

    def notify(self, method: str, params: dict[str, Any]) -> None:
        with self._lock:
            self._writer.write(_frame({"jsonrpc": "2.0", "method": method, "params": params}))
            self._writer.flush()

    def did_write(self, path: str, session: str | None = None) -> None:
        params: dict[str, Any] = {"path": path}
        if session is not None:
            params["session"] = session
        self.notify("fresh/didWrite", params)

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            msg_id = next(self._ids)
            self._writer.write(
                _frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            )
            self._writer.flush()
            while True:
                message = _read_message(self._reader)
                if message is None:
                    raise FreshClientError(None, "the server closed the connection", method)
                if "id" not in message or message.get("method"):
                    if "method" in message and "id" not in message:
                        self.notifications.append(message)
                    continue
                if message["id"] != msg_id:
                    continue
                if "error" in message:
                    err = message["error"]
                    raise FreshClientError(err.get("code"), err.get("message", ""), method)
                return message.get("result")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call("shutdown", None)  # type: ignore[arg-type]
            self.notify("exit", None)  # type: ignore[arg-type]
        closer = self._closer
        if isinstance(closer, subprocess.Popen):
            try:
                closer.wait(timeout=10)
            except subprocess.TimeoutExpired:
                closer.kill()
        elif closer is not None:
            with contextlib.suppress(Exception):
                closer.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """The same requests, awaited, over an asyncio connection to a listening endpoint."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
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
        ep = endpoint_of(root, state_dir)
        address = str(ep["address"])
        try:
            if address.startswith("unix:"):
                reader, writer = await asyncio.open_unix_connection(address[5:])
            else:
                host, _, port = address[4:].rpartition(":")
                reader, writer = await asyncio.open_connection(host, int(port))
        except OSError as exc:
            raise FreshClientError(None, f"cannot connect to {address}: {exc}") from None
        client = cls(reader, writer)
        opts: dict[str, Any] = {"token": ep.get("token")}
        if budget_bytes is not None:
            opts["budgetBytes"] = budget_bytes
        if policy is not None:
            opts["policy"] = policy
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {},
                "initializationOptions": opts,
            },
        )
        await client.notify("initialized", {})
        return client

    async def _pump(self) -> None:
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
        except (ConnectionError, asyncio.IncompleteReadError):
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(FreshClientError(None, "the server closed the connection"))

    async def notify(self, method: str, params: Any) -> None:
        self._writer.write(_frame({"jsonrpc": "2.0", "method": method, "params": params}))
        await self._writer.drain()

    async def request(self, method: str, params: Any) -> Any:
        msg_id = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = fut
        self._writer.write(
            _frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        )
        await self._writer.drain()
        message = await fut
        if "error" in message:
            err = message["error"]
            raise FreshClientError(err.get("code"), err.get("message", ""), method)
        return message.get("result")

    async def observe(self, session: str, path: str, **kw: Any) -> Any:
        return await self.request("fresh/observe", _camel({"session": session, "path": path, **kw}))

    async def stale(self, session: str, view_ids: list[str] | None = None) -> Any:
        return await self.request("fresh/stale", _camel({"session": session, "view_ids": view_ids}))

    async def project(self, session: str, **kw: Any) -> Any:
        return await self.request("fresh/project", _camel({"session": session, **kw}))

    async def commit(self, plan_id: str) -> Any:
        return await self.request("fresh/commit", {"planId": plan_id})

    async def forget(self, session: str, view_ids: list[str] | None = None) -> Any:
        return await self.request(
            "fresh/forget", _camel({"session": session, "view_ids": view_ids})
        )

    async def status(self) -> Any:
        return await self.request("fresh/status", {})

    async def did_write(self, path: str, session: str | None = None) -> None:
        await self.notify("fresh/didWrite", _camel({"path": path, "session": session}))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.request("shutdown", None), 5)
            await self.notify("exit", None)
        self._task.cancel()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()


def _camel(params: dict[str, Any]) -> dict[str, Any]:
    """``view_id`` -> ``viewId``; None values dropped (absent means default)."""
    out = {}
    for key, value in params.items():
        if value is None:
            continue
        head, *rest = key.split("_")
        out[head + "".join(r.title() for r in rest)] = value
    return out
