"""``fresh-ls serve``: one engine, a stdio client and/or a listening endpoint, a watcher."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pygls.io_ import StdinAsyncReader, StdoutWriter

from fresh_ls.engine import Engine
from fresh_ls.server.connection import (
    ConnectionInfo,
    FreshServer,
    new_connection_name,
    run_connection,
)
from fresh_ls.server.endpoint import (
    ListenAddress,
    RootLock,
    new_token,
    remove_endpoint,
    write_endpoint,
)
from fresh_ls.server.watcher import watch_root

log = logging.getLogger(__name__)


class _StreamWriter:
    """pygls writes with ``write``; an asyncio stream also needs draining and closing."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._w = writer

    def write(self, data: bytes) -> None:
        if not self._w.is_closing():
            self._w.write(data)

    def close(self) -> None:
        self._w.close()


class App:
    def __init__(self, engine: Engine, token: str) -> None:
        self.engine = engine
        self.token = token
        self.stop = asyncio.Event()

    def _attach(self, server: FreshServer) -> None:
        def notify(payload: dict[str, Any]) -> None:
            if server.conn.authorized:
                server.protocol.notify("fresh/didInvalidate", payload)

        self.engine.listeners.append(notify)
        server.conn.listener = notify

    def _detach(self, server: FreshServer) -> None:
        notify = server.conn.listener
        if notify is not None and notify in self.engine.listeners:
            self.engine.listeners.remove(notify)
        self.engine.connection_closed(server.conn.name)

    async def serve_stdio(self, executor: ThreadPoolExecutor) -> None:
        conn = ConnectionInfo(
            engine=self.engine,
            name=new_connection_name("stdio"),
            token=None,
            on_exit=self.stop.set,
            close=self.stop.set,
            authorized=True,
        )
        server = FreshServer(conn)
        server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        self._attach(server)
        reader = StdinAsyncReader(sys.stdin.buffer, executor)
        try:
            await run_connection(reader, server.protocol, self.stop)  # type: ignore[arg-type]
        finally:
            self._detach(server)
            self.stop.set()

    async def on_socket(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn_stop = asyncio.Event()

        def close() -> None:
            conn_stop.set()
            writer.close()

        conn = ConnectionInfo(
            engine=self.engine,
            name=new_connection_name("socket"),
            token=self.token,
            on_exit=close,
            close=close,
        )
        server = FreshServer(conn)
        server.protocol.set_writer(_StreamWriter(writer))
        self._attach(server)
        try:
            await run_connection(reader, server.protocol, conn_stop)  # type: ignore[arg-type]
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # The server is stopping and cancels the connections still open. Ending the
            # task here keeps Python 3.11's stream callback from logging a traceback.
            pass
        finally:
            self._detach(server)
            with contextlib.suppress(Exception):
                writer.close()


async def serve(
    root: Path,
    state_dir: Path,
    stdio: bool,
    listen: str | None,
    listen_enabled: bool,
    watch: bool = True,
) -> int:
    lock = RootLock.acquire(state_dir)
    engine = await Engine.open(root, state_dir)
    app = App(engine, new_token())
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, app.stop.set)
    server: asyncio.AbstractServer | None = None
    socket_path: Path | None = None
    watcher: asyncio.Task[None] | None = None
    executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fresh-ls-io")
    try:
        if watch:
            engine.watching = True
            watcher = asyncio.create_task(watch_root(root, state_dir, engine.sync, app.stop))
        if listen_enabled:
            address = ListenAddress.parse(listen, state_dir)
            if address.kind == "unix":
                assert address.path is not None
                socket_path = address.path
                with contextlib.suppress(FileNotFoundError):
                    socket_path.unlink()
                server = await asyncio.start_unix_server(app.on_socket, path=str(socket_path))
                os.chmod(socket_path, 0o600)
                public = f"unix:{socket_path}"
            else:
                server = await asyncio.start_server(app.on_socket, address.host, address.port)
                port = server.sockets[0].getsockname()[1]
                public = f"tcp:{address.host}:{port}"
            write_endpoint(state_dir, public, app.token)
            log.info("listening on %s", public)
        if stdio:
            await app.serve_stdio(executor)
        else:
            await app.stop.wait()
    finally:
        app.stop.set()
        remove_endpoint(state_dir)
        if server is not None:
            server.close()
        if socket_path is not None:
            with contextlib.suppress(FileNotFoundError):
                socket_path.unlink()
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
        await engine.close()
        lock.release()
        executor.shutdown(wait=False, cancel_futures=True)
    return 0
