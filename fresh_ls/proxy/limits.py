"""What bounds the proxy: how long and how much each side may take, and how many connections.

Every wait has an end and every size a cap (docs/security.md lists them with their defaults):
a local process that opens connections and sends half a request, an upstream that stops
answering, a sidecar that stops answering or a body that expands without end cannot take the
proxy from its agent.

``GuardedSite`` is aiohttp's TCP site with a connection cap: when the cap is reached, a new
connection makes room by closing the oldest one that is not being served (still sending its
headers or body, or idle between requests); when every one is being served, the new one is
closed. Half-sent requests therefore never keep a real one out.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Limits:
    """The proxy's limits (seconds, bytes, connections)."""

    #: Headers of a request (and the idle time between two on one connection).
    header_timeout: float = 20.0
    #: The whole body of a request.
    body_timeout: float = 60.0
    #: Open client connections.
    max_connections: int = 256
    #: Connecting to the upstream.
    upstream_connect_timeout: float = 30.0
    #: Between two reads from the upstream (a model may think for minutes before its first
    #: byte when it does not stream).
    upstream_read_timeout: float = 600.0
    #: Every request's calls to the fresh-ls server together, waiting for the session's
    #: turn included.
    sidecar_timeout: float = 10.0
    #: The same when the server was gone and a new one is started (then the rewrite).
    sidecar_start_timeout: float = 60.0
    #: How long a stopping proxy lets requests in flight finish.
    shutdown_timeout: float = 2.0


class ConnectionGuard:
    """The open connections in the order they came, and those being served."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: OrderedDict[Any, asyncio.Transport] = OrderedDict()
        self._serving: dict[Any, int] = {}

    def opened(self, handler: Any, transport: asyncio.Transport) -> None:
        if len(self._open) >= self.cap:
            idle = next((h for h in self._open if h not in self._serving), None)
            if idle is None:
                transport.abort()  # every connection is busy with a whole request
                return
            self._open.pop(idle).abort()
        self._open[handler] = transport

    def closed(self, handler: Any) -> None:
        self._open.pop(handler, None)
        self._serving.pop(handler, None)

    @contextmanager
    def serving(self, handler: Any) -> Iterator[None]:
        """Marks a connection whose request was read whole: it is never closed for room."""
        self._serving[handler] = self._serving.get(handler, 0) + 1
        try:
            yield
        finally:
            left = self._serving.get(handler, 1) - 1
            if left > 0:
                self._serving[handler] = left
            else:
                self._serving.pop(handler, None)

    def __len__(self) -> int:
        return len(self._open)


class _Guarded(asyncio.Protocol):
    """aiohttp's protocol for one connection, reported to the guard as it opens and closes."""

    def __init__(self, inner: Any, guard: ConnectionGuard) -> None:
        self.inner = inner
        self.guard = guard

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inner.connection_made(transport)
        assert isinstance(transport, asyncio.Transport)
        self.guard.opened(self.inner, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.closed(self.inner)
        self.inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()  # type: ignore[no-any-return]

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


class GuardedSite(web.TCPSite):
    """``web.TCPSite`` whose connections go through a ``ConnectionGuard``."""

    def __init__(
        self, runner: web.BaseRunner, host: str, port: int, guard: ConnectionGuard
    ) -> None:
        super().__init__(runner, host, port)
        self.guard = guard

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        guard = self.guard
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _Guarded(server(), guard), self._host, self._port, backlog=self._backlog
        )
