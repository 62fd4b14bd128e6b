"""The real processes the protocol model drives: one ``fresh-ls serve --listen`` on a root
(started plainly, or through ``launch_mutant.py`` with one check weakened), socket clients
attached to it through ``endpoint.json`` (``fresh_ls.client.SyncClient``), and ``fresh-ls
mcp`` processes attached to the same server, spoken to through the ``mcp`` SDK's own stdio
client on an event loop of their own (hypothesis rules are plain functions).

A rig lives for a whole test: starting processes is what costs, so the examples of one run
share them and keep apart by name (each example has its own files and sessions, and forgets
the MCP processes' fixed sessions first). Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TextIO, TypeVar

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from fresh_ls.client import SyncClient
from fresh_ls.statedir import START_LOCK_FILE, STATE_DIR_NAME

#: A sanity bound for one answer or one process start (never a performance threshold).
WAIT_S = 30.0
LAUNCHER = Path(__file__).with_name("launch_mutant.py")
T = TypeVar("T")


def serve_argv(root: Path, mutant: str | None) -> list[str]:
    """The server's command line: the real one, or the same through the mutant launcher."""
    tail = ["serve", "--root", str(root), "--listen"]
    if mutant is None:
        return [sys.executable, "-P", "-m", "fresh_ls", *tail]
    return [sys.executable, "-P", str(LAUNCHER), mutant, *tail]


class Server:
    """``fresh-ls serve --root ROOT --listen``, stopped, killed and started again on demand;
    its log (every start's) goes to one file."""

    def __init__(self, root: Path, mutant: str | None, log: Path) -> None:
        self.root = root
        self.mutant = mutant
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        with self.log.open("ab") as err:
            self.proc = subprocess.Popen(
                serve_argv(self.root, self.mutant),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        self.starts += 1
        deadline = time.monotonic() + WAIT_S
        endpoint = self.root / ".fresh-ls" / "endpoint.json"
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                if json.loads(endpoint.read_text()).get("pid") == self.proc.pid:
                    return
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited ({self.proc.returncode}): {self.tail()}")
            time.sleep(0.02)
        raise AssertionError(f"no endpoint.json from the server in {WAIT_S} s: {self.tail()}")

    def kill(self) -> None:
        """SIGKILL: nothing of the server's runs after it."""
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(WAIT_S)

    def stop(self) -> None:
        """SIGTERM, the orderly shutdown (SIGKILL when it does not end in time)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(WAIT_S)

    def tail(self, n: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""


class Loop:
    """An asyncio loop on a thread of its own, for the MCP clients."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = WAIT_S) -> T:
        return self.submit(coro).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT_S)


class Mcp:
    """One ``fresh-ls mcp --root ROOT --session NAME`` and the SDK client talking to it."""

    def __init__(self, loop: Loop, root: Path, session: str, errlog: TextIO) -> None:
        self.loop = loop
        self.root = root
        self.session = session
        self.errlog = errlog
        self.client: ClientSession | None = None
        self._stop: asyncio.Event | None = None
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._done = loop.submit(self._main(ready))
        try:
            ready.result(WAIT_S)
        except BaseException as exc:
            if self._done.done() and self._done.exception() is not None:
                raise AssertionError(
                    f"fresh-ls mcp did not start: {self._done.exception()}"
                ) from exc
            raise

    async def _main(self, ready: concurrent.futures.Future[None]) -> None:
        self._stop = asyncio.Event()
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-P",
                "-m",
                "fresh_ls",
                "mcp",
                "--root",
                str(self.root),
                "--session",
                self.session,
            ],
        )
        try:
            async with (
                stdio_client(params, errlog=self.errlog) as streams,
                ClientSession(*streams) as client,
            ):
                await client.initialize()
                self.client = client
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def call(self, tool: str, **arguments: Any) -> Any:
        """The tool's ``CallToolResult``."""
        assert self.client is not None
        return self.loop.run(self.client.call_tool(tool, arguments))

    def calls(self, *calls: tuple[Mcp, str, dict[str, Any]]) -> list[Any]:
        """Several tool calls (of several MCP processes) at once: a race."""

        async def both() -> list[Any]:
            waits: list[Awaitable[Any]] = []
            for mcp, tool, arguments in calls:
                assert mcp.client is not None
                waits.append(mcp.client.call_tool(tool, arguments))
            return list(await asyncio.gather(*waits))

        return self.loop.run(both())

    def close(self) -> None:
        stop = self._stop
        if stop is not None:
            self.loop.loop.call_soon_threadsafe(stop.set)
        with contextlib.suppress(Exception):
            self._done.result(WAIT_S)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def verdict_of(result: Any) -> dict[str, Any] | None:
    """The deny verdict a program reads from a tool result's ``_meta`` (None: no deny)."""
    meta = result.meta or {}
    got = meta.get("fresh-ls")
    return dict(got) if isinstance(got, dict) else None


class Rig:
    """A root, its server, ``sockets`` socket clients and ``mcps`` MCP processes."""

    def __init__(self, mutant: str | None = None, sockets: int = 2, mcps: int = 2) -> None:
        # Short, so the server's Unix socket path (in the state dir) fits sockaddr_un.
        self.scratch = Path(tempfile.mkdtemp(prefix="flm-"))
        self.root = Path(os.path.realpath(self.scratch / "ws"))
        self.root.mkdir()
        self.mutant = mutant
        self.server = Server(self.root, mutant, self.scratch / "server.log")
        self.loop = Loop()
        self.mcp_log = (self.scratch / "mcp.log").open("a")
        # The MCP processes start alongside the server: they attach at their first call.
        with concurrent.futures.ThreadPoolExecutor(max(1, mcps)) as pool:
            starting = [
                pool.submit(Mcp, self.loop, self.root, f"mcp-{i}", self.mcp_log)
                for i in range(mcps)
            ]
            with self._starting():
                self.server.start()
            self.sockets = [self._attach() for _ in range(sockets)]
            self.mcps = [f.result(WAIT_S) for f in starting]

    def _attach(self) -> SyncClient:
        return SyncClient.attach(self.root, timeout=WAIT_S)

    @contextlib.contextmanager
    def _starting(self) -> Iterator[None]:
        """Hold the root's ``start.lock`` while the server is down and starting: an MCP
        process's client reconnects as soon as its server goes and starts one itself when
        none is live (``AsyncClient.shared``), which would take the root before this rig's
        server (the mutant's, say). Holding the lock, it waits for the endpoint instead."""
        state = self.root / STATE_DIR_NAME
        state.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(state / START_LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def restart(self, kill: bool) -> None:
        """Kill (SIGKILL) or stop (SIGTERM) the server, start it again, and bring every
        client back to it: each socket client reconnects on its next request, each MCP
        process on its next tool call (both through ``endpoint.json``). They are made to do
        so now, so nothing later is sent into a connection the old server took with it."""
        with self._starting():
            if kill:
                self.server.kill()
            else:
                self.server.stop()
            self.server.start()
        for client in self.sockets:
            client.status()
        for mcp in self.mcps:
            result = mcp.call("gate", view_ids=[])
            assert not result.is_error, text_of(result)

    def use(self, mutant: str | None) -> None:
        """Serve the root with this mutant (None: the real server) from now on."""
        if mutant != self.server.mutant:
            self.server.mutant = mutant
            self.mutant = mutant
            self.restart(kill=False)

    def logs(self) -> str:
        self.mcp_log.flush()
        mcp = (self.scratch / "mcp.log").read_text(errors="replace")[-2000:]
        return f"--- server log (tail)\n{self.server.tail()}\n--- mcp log (tail)\n{mcp}"

    def close(self) -> None:
        for mcp in self.mcps:
            mcp.close()
        self.loop.close()
        for client in self.sockets:
            with contextlib.suppress(Exception):
                client.close()
        self.server.stop()
        self.mcp_log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def bounded(fn: Callable[[], T], what: str) -> T:
    """``fn()``, its failure named (for a rule's message)."""
    try:
        return fn()
    except Exception as exc:
        raise AssertionError(f"{what}: {type(exc).__name__}: {exc}") from exc
