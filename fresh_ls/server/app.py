"""``fresh-ls serve``: one engine, a stdio client and/or a listening endpoint, a watcher."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import select
import selectors
import signal
import stat
import sys
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pygls.io_ import StdoutWriter

from fresh_ls import protocol
from fresh_ls.engine.engine import Engine
from fresh_ls.framing import DEFAULT_MAX_MESSAGE_BYTES, FrameReader, stream_limit
from fresh_ls.heap import collect_less_often, keep_freed_memory
from fresh_ls.server.connection import (
    ConnectionInfo,
    FreshServer,
    dispatch_body,
    new_connection_name,
    run_connection,
)
from fresh_ls.server.endpoint import (
    ListenAddress,
    RootLock,
    persistent_token,
    remove_endpoint,
    write_endpoint,
)
from fresh_ls.server.handshake import EarlyStart
from fresh_ls.server.watcher import watch_root

log = logging.getLogger(__name__)


#: How long a connection on the endpoint may take to present its token, and how many may
#: wait at once; past the cap the oldest waiting one is closed, so a flood of silent
#: connections can never shut out the token holder.
DEFAULT_AUTH_TIMEOUT_S = 5.0
DEFAULT_MAX_UNAUTHENTICATED = 64
#: Answers a peer leaves unread before its connection is closed.
MAX_UNREAD_BYTES = 64 * 1024 * 1024


@dataclass
class Limits:
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    auth_timeout_s: float = DEFAULT_AUTH_TIMEOUT_S
    max_unauthenticated: int = DEFAULT_MAX_UNAUTHENTICATED


class _StreamWriter:
    """pygls writes with ``write``; an asyncio stream also needs closing, and a peer that
    never reads its answers must not make the server hold them without end."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._w = writer

    def write(self, data: bytes) -> None:
        self.write_parts((data,))

    def write_parts(self, parts: Sequence[bytes]) -> None:
        """One message in pieces, joined and handed to the transport in one ``write``: one
        ``send`` for the whole frame, so the peer is never woken for a frame's head alone
        (Python 3.11's ``writelines`` joins them the same way)."""
        if self._w.is_closing():
            return
        if self._w.transport.get_write_buffer_size() > MAX_UNREAD_BYTES:
            log.warning(
                "closing a connection that left %d bytes of answers unread",
                self._w.transport.get_write_buffer_size(),
            )
            self._w.close()
            return
        self._w.write(parts[0] if len(parts) == 1 else b"".join(parts))

    def close(self) -> None:
        self._w.close()


class _StdoutWriter(StdoutWriter):
    """pygls's stdout writer, and a message in pieces written with one ``writev`` (no
    joined copy of a half-megabyte answer, one system call)."""

    def __init__(self, stdout: BinaryIO) -> None:
        super().__init__(stdout)
        self._out = stdout

    def write_parts(self, parts: Sequence[bytes]) -> None:
        self._out.flush()  # empty after every ``write``; kept so the order can never break
        _write_all(self._out.fileno(), list(parts))


def _write_all(fd: int, parts: list[bytes]) -> None:
    """Write ``parts`` to ``fd`` in order, all of them (as ``BufferedWriter.write`` and
    ``flush`` do for one buffer): a short write goes on from where it stopped, and a
    descriptor that is non-blocking (a socket shared with stdin, which the event loop made
    so) is waited for."""
    views = [memoryview(part) for part in parts if part]
    while views:
        try:
            done = os.writev(fd, views[:_IOV_MAX])
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        except InterruptedError:
            continue
        while views and done >= len(views[0]):
            done -= len(views[0])
            views.pop(0)
        if done:
            views[0] = views[0][done:]


#: The buffers one ``writev`` takes at most (POSIX guarantees 16; Linux takes 1024).
_IOV_MAX = 16


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: a pipe, a socket or a terminal can; a
    regular file or ``/dev/null`` cannot (epoll refuses them with EPERM). Asked before
    ``connect_read_pipe``, which accepts ``/dev/null`` (a character device) and only fails
    later, in a callback: a traceback in the log and a stdin that never ends."""
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


#: The capacity asked of a stdio pipe: a ``policy: all`` answer (about 0.5 MB) then goes
#: out in one write instead of eight 64 KiB handoffs between the two processes.
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    """Ask the kernel for a ``PIPE_BYTES`` pipe behind ``fd`` (Linux; anything else, or a
    refusal such as a user's pipe quota, keeps the pipe as it is: only speed depends on it)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    with contextlib.suppress(OSError, ValueError):
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, set_size, PIPE_BYTES)


async def _stdin_reader(executor: ThreadPoolExecutor, read: bytes = b"") -> asyncio.StreamReader:
    """stdin as an asyncio stream: a pipe through the loop (with flow control), anything
    else (a regular file, ``/dev/null``) through a thread that feeds it. ``read``: bytes
    already taken from stdin (``handshake.answer_first``), which come first."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=stream_limit())
    if read:
        reader.feed_data(read)
    fd = sys.stdin.fileno()
    if _pollable(fd):
        try:
            await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0, closefd=False)
            )
            return reader
        except (ValueError, OSError):
            pass

    async def feed() -> None:
        while True:
            chunk = await loop.run_in_executor(executor, os.read, fd, 65536)
            if not chunk:
                reader.feed_eof()
                return
            reader.feed_data(chunk)

    _FEEDERS.add(task := asyncio.ensure_future(feed()))
    task.add_done_callback(_FEEDERS.discard)
    return reader


_FEEDERS: set[asyncio.Future[None]] = set()


class App:
    def __init__(
        self,
        engine: Engine,
        token: str,
        limits: Limits | None = None,
        idle_exit_s: float | None = None,
    ) -> None:
        self.engine = engine
        self.token = token
        self.limits = limits or Limits()
        self.stop = asyncio.Event()
        self.listening = False
        #: Connections still to present their token, oldest first: name -> close.
        self.waiting: OrderedDict[str, Callable[[], None]] = OrderedDict()
        #: ``--idle-exit``: the server stops once no client has been connected this long.
        self.idle_exit_s = idle_exit_s
        #: Clients connected now: the stdio one and every socket one that gave its token
        #: (a connection that never does cannot keep the server up).
        self.clients = 0
        self._idle: asyncio.TimerHandle | None = None

    # -- lifetime: a shared server stays while a client is connected, then idles out ----

    def arm_idle(self) -> None:
        """Start the idle countdown (at start, and whenever the last client leaves)."""
        if self.idle_exit_s is None or self.clients or self.stop.is_set():
            return
        if self._idle is not None:
            self._idle.cancel()
        loop = asyncio.get_running_loop()
        self._idle = loop.call_later(self.idle_exit_s, self._idle_expired)

    def _idle_expired(self) -> None:
        if self.clients:
            return
        if self.waiting:
            # A client is connecting (its token not yet checked): it gives it, or it is
            # closed within the auth timeout; ask again then, not a whole idle time later.
            loop = asyncio.get_running_loop()
            self._idle = loop.call_later(self.limits.auth_timeout_s, self._idle_expired)
            return
        log.info("no client for %g s: exiting (--idle-exit)", self.idle_exit_s)
        self.stop.set()

    def client_came(self) -> None:
        self.clients += 1
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def client_left(self) -> None:
        self.clients -= 1
        self.arm_idle()

    def _attach(self, server: FreshServer) -> None:
        def notify(payload: protocol.DidInvalidateParams) -> None:
            if server.conn.authorized:
                server.protocol.notify(protocol.DID_INVALIDATE, protocol.unstructure(payload))

        self.engine.listeners.append(notify)
        server.conn.listener = notify

    def _detach(self, server: FreshServer) -> None:
        notify = server.conn.listener
        if notify is not None and notify in self.engine.listeners:
            self.engine.listeners.remove(notify)
        self.engine.connection_closed(server.conn.name)

    async def serve_stdio(self, executor: ThreadPoolExecutor, early: EarlyStart | None) -> None:
        conn = ConnectionInfo(
            engine=self.engine,
            name=new_connection_name("stdio"),
            token=None,
            on_exit=self.stop.set,
            close=self.stop.set,
            authorized=True,
        )
        server = FreshServer(conn)
        for fd in (sys.stdin.fileno(), sys.stdout.fileno()):
            widen_pipe(fd)
        server.protocol.set_writer(_StdoutWriter(sys.stdout.buffer))
        self._attach(server)
        protocol = server.fresh_protocol
        if early is not None and early.body is not None:
            # Answered before pygls loaded: pygls takes it now, first, as if it just came,
            # and its own answer is only compared with the one sent.
            protocol.answered_early[early.msg_id] = early.result
            dispatch_body(protocol, early.body)
        read = early.rest if early is not None else b""
        frames = FrameReader(await _stdin_reader(executor, read), self.limits.max_message_bytes)
        broken = None
        self.client_came()
        try:
            broken = await run_connection(frames, protocol, self.stop)
        finally:
            self.client_left()
            self._detach(server)
            if broken is None or not self.listening:
                self.stop.set()
            else:
                # A broken frame ends the stdio client only; the endpoint's clients go on.
                log.warning("stdio client closed: %s", broken.message)

    async def on_socket(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn_stop = asyncio.Event()

        def close() -> None:
            conn_stop.set()
            writer.close()

        name = new_connection_name("socket")
        conn = ConnectionInfo(
            engine=self.engine,
            name=name,
            token=self.token,
            on_exit=close,
            close=close,
        )

        def authorized() -> None:
            self.waiting.pop(name, None)
            self.client_came()

        conn.on_authorized = authorized
        while len(self.waiting) >= max(1, self.limits.max_unauthenticated):
            _, evict = self.waiting.popitem(last=False)
            evict()
        self.waiting[name] = close
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self.limits.auth_timeout_s, self._expire, conn)
        server = FreshServer(conn)
        server.protocol.set_writer(_StreamWriter(writer))
        self._attach(server)
        frames = FrameReader(reader, self.limits.max_message_bytes)
        try:
            broken = await run_connection(frames, server.fresh_protocol, conn_stop)
            if broken is not None:
                log.info("closed a connection: %s", broken.message)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # The server is stopping and cancels the connections still open. Ending the
            # task here keeps Python 3.11's stream callback from logging a traceback.
            pass
        finally:
            timer.cancel()
            self.waiting.pop(name, None)
            if conn.authorized:
                self.client_left()
            self._detach(server)
            with contextlib.suppress(Exception):
                writer.close()

    def _expire(self, conn: ConnectionInfo) -> None:
        if not conn.authorized:
            log.info("closing %s: no token within %.1f s", conn.name, self.limits.auth_timeout_s)
            self.waiting.pop(conn.name, None)
            conn.close()


def _absolute_sync(engine: Engine, folder: Path) -> Callable[[list[str]], None]:
    """The watcher's callback for an ``--also`` folder: its files by absolute path."""

    def sync(rels: list[str]) -> None:
        engine.sync([f"{folder}/{r}" for r in rels])

    return sync


async def serve(
    root: Path,
    state_dir: Path,
    stdio: bool,
    listen: str | None,
    listen_enabled: bool,
    watch: bool = True,
    limits: Limits | None = None,
    also: tuple[Path, ...] = (),
    idle_exit_s: float | None = None,
    lock: RootLock | None = None,
    early: EarlyStart | None = None,
) -> int:
    """Serve until the stdio client ends, SIGTERM or SIGINT, or (``idle_exit_s``) no
    client has been connected for that long. ``lock``: the root's lock when the caller
    took it already; ``early``: what ``handshake.answer_first`` did on stdin before this
    started."""
    if lock is None:
        lock = RootLock.acquire(state_dir)
    keep_freed_memory()  # half-megabyte answers copied without page faults (fresh_ls.heap)
    collect_less_often()  # a plan's short-lived objects are freed by reference counting
    engine = await Engine.open(root, state_dir, also=also)
    app = App(engine, persistent_token(state_dir), limits, idle_exit_s)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, app.stop.set)
    server: asyncio.AbstractServer | None = None
    socket_path: Path | None = None
    watcher: asyncio.Task[None] | None = None
    also_watchers: list[asyncio.Task[None]] = []
    executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fresh-ls-io")
    try:
        if watch:
            engine.watching = True
            watcher = asyncio.create_task(
                watch_root(root, state_dir, engine.sync, app.stop, prepare=engine.sources.prepare)
            )
            # a watcher that stopped reports nothing more: each request then stats its files
            watcher.add_done_callback(lambda _task: setattr(engine, "watching", False))
            for folder in also:  # their files are named by absolute path
                also_watchers.append(
                    asyncio.create_task(
                        watch_root(folder, state_dir, _absolute_sync(engine, folder), app.stop)
                    )
                )
        if listen_enabled:
            address = ListenAddress.parse(listen, state_dir)
            if address.kind == "unix":
                assert address.path is not None
                socket_path = address.path
                with contextlib.suppress(FileNotFoundError):
                    socket_path.unlink()
                # Born 0600 (umask while binding), not chmodded after: a socket that falls
                # back to the shared temp dir is never reachable by others for an instant.
                old_umask = os.umask(0o177)
                try:
                    server = await asyncio.start_unix_server(
                        app.on_socket, path=str(socket_path), limit=stream_limit()
                    )
                finally:
                    os.umask(old_umask)
                os.chmod(socket_path, 0o600)
                public = f"unix:{socket_path}"
            else:
                server = await asyncio.start_server(
                    app.on_socket, address.host, address.port, limit=stream_limit()
                )
                port = server.sockets[0].getsockname()[1]
                public = f"tcp:{address.host}:{port}"
            app.listening = True
            write_endpoint(state_dir, public, app.token)
            log.info("listening on %s", public)
        app.arm_idle()  # a server nobody connects to idles out too
        if stdio:
            await app.serve_stdio(executor, early)
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
        for task in [*([watcher] if watcher is not None else []), *also_watchers]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await engine.close()
        lock.release()
        executor.shutdown(wait=False, cancel_futures=True)
    return 0
