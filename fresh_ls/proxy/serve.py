"""Running the proxy: bind 127.0.0.1, find or start the fresh-ls server, write proxy.json.

A proxy's base URL carries its per-run secret (``http://127.0.0.1:PORT/fresh-<secret>``,
``access.py``): it is printed, set in ``run``'s environment and kept in ``proxy.json``
(mode 0600), and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypedDict, Unpack

from fresh_ls import statedir
from fresh_ls.heap import keep_freed_memory
from fresh_ls.proxy import agent_routes
from fresh_ls.proxy.access import Access
from fresh_ls.proxy.app import Proxy, status_of
from fresh_ls.proxy.limits import GuardedSite, Limits

PROXY_FILE = "proxy.json"
#: ``run`` warns when its command has sent no model request through fresh-ls by then
#: (``FRESH_LS_RUN_QUIET_S`` sets it: tests, slow starters).
QUIET_AFTER_S = float(os.environ.get("FRESH_LS_RUN_QUIET_S", "30"))
HOST = "127.0.0.1"


async def connect_server(
    root: Path, state_dir: Path | None = None, also: tuple[Path, ...] = ()
) -> Any:
    """A client of the root's shared fresh-ls server: the running one (through its
    endpoint.json), else one started detached for every client of the root, which stays
    up while any is connected and exits once idle (``fresh_ls.autostart``; the ``also``
    folders are tracked by a server it starts, a running one keeps its own). When that
    server goes away, the client reconnects, starting a new one when none is live."""
    from fresh_ls.client import AsyncClient

    return await AsyncClient.shared(root, state_dir=state_dir, also=also)


def _write_private(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


class ProxyOptions(TypedDict, total=False):
    """What ``fresh-ls proxy`` takes beside its root and upstream (declared once)."""

    port: int  # 0: a free one
    state_dir: Path | None
    fail_open: bool
    policy: str | None
    budget_bytes: int | None
    placement: str | None  # "anchored" (default) or "end"
    log_requests: Path | None
    #: where the agent's relative paths start (``run`` in a subfolder of the root)
    agent_cwd: str | None
    #: ``--also`` folders: their files are tracked too
    also: tuple[Path, ...]
    limits: Limits | None  # default: Limits()
    #: the base URL's secret (default: a new one per run); an editor that keeps a proxy's
    #: URL across restarts (terminals opened earlier still hold it) passes its own
    secret: str | None


class PairOptions(TypedDict, total=False):
    """What ``fresh-ls run`` and ``fresh-ls proxies`` take beside the root and the two
    upstreams (declared once; each goes to both proxies but ``ports``, one each)."""

    state_dir: Path | None
    fail_open: bool
    agent_cwd: str | None
    also: tuple[Path, ...]
    ports: tuple[int, int]  # (Anthropic's, OpenAI's); 0: a free one
    secret: str | None


@contextlib.asynccontextmanager
async def running_proxy(
    root: Path,
    upstream: str,
    *,
    connect: Any = None,
    record_name: str = PROXY_FILE,
    **options: Unpack[ProxyOptions],
) -> AsyncIterator[tuple[Proxy, str]]:
    """The proxy, listening on 127.0.0.1; yields it and its base URL. ``connect``: how it
    gets its fresh-ls client (default: the root's running server, else a new one). The
    process it runs in keeps freed memory from then on (``fresh_ls.heap``: up to 64 MiB of
    free heap held, so large bodies are copied without page faults)."""
    root = root.resolve()
    keep_freed_memory()  # request bodies copied without page faults (fresh_ls.heap)
    state_dir = options.get("state_dir")
    port = options.get("port", 0)
    state = state_dir or statedir.default_state_dir(root)
    proxy = Proxy(
        root,
        upstream,
        connect or (lambda: connect_server(root, state_dir, options.get("also", ()))),
        fail_open=options.get("fail_open", False),
        policy=options.get("policy"),
        budget_bytes=options.get("budget_bytes"),
        placement=options.get("placement") or "anchored",
        log_requests=options.get("log_requests"),
        agent_cwd=options.get("agent_cwd"),
        also=options.get("also", ()),
        limits=options.get("limits"),
        access=Access(secret=secret) if (secret := options.get("secret")) else None,
    )
    await proxy.start()
    runner = proxy.runner()
    await runner.setup()
    site = GuardedSite(runner, HOST, port, proxy.guard)
    record = state / record_name
    try:
        await site.start()
        addresses = runner.addresses  # (host, port) of each bound socket
        bound = addresses[0][1] if addresses else port
        proxy.access.port = bound
        url = f"http://{HOST}:{bound}{proxy.access.prefix}"
        _write_private(record, {"url": url, "upstream": upstream, "pid": os.getpid()})
        proxy.record_path = record  # type: ignore[attr-defined]
        yield proxy, url
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(record.read_text()).get("pid") == os.getpid():
                record.unlink()
        await runner.cleanup()
        await proxy.close()


def _stop_on_signals() -> asyncio.Event:
    """An event SIGINT and SIGTERM set: a served proxy stops cleanly (its records go)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    return stop


async def serve_proxy(root: Path, upstream: str, **options: Unpack[ProxyOptions]) -> int:
    stop = _stop_on_signals()
    async with running_proxy(root, upstream, **options) as (proxy, url):
        print(f"fresh-ls proxy: {url} -> {upstream}", flush=True)
        record = Path(proxy.record_path)  # type: ignore[attr-defined]
        last: dict[str, Any] = {}
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
            counters = status_of(proxy)
            if counters != last:  # the counters ride in proxy.json for `fresh-ls status`
                last = counters
                with contextlib.suppress(OSError):
                    _write_private(
                        record,
                        {"url": url, "upstream": upstream, "pid": os.getpid(), **counters},
                    )
    return 0


class _Shared:
    """One fresh-ls client for several proxies: closing a proxy leaves it open."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def close(self) -> None:
        pass


@contextlib.asynccontextmanager
async def running_pair(
    root: Path, upstreams: tuple[str, str], **options: Unpack[PairOptions]
) -> AsyncIterator[tuple[str, str, tuple[Proxy, Proxy]]]:
    """Two proxies of one fresh-ls client, one per request shape's upstream (Anthropic, then
    OpenAI): yields their base URLs and the proxies. Both records (``proxy.json``,
    ``proxy-openai.json``) go when it ends. ``ports`` (0: a free one) and ``secret``
    (default: a new one each) let a caller keep both base URLs across restarts."""
    ports = options.get("ports", (0, 0))

    def each(port: int) -> ProxyOptions:
        return ProxyOptions(
            state_dir=options.get("state_dir"),
            fail_open=options.get("fail_open", False),
            agent_cwd=options.get("agent_cwd"),
            also=options.get("also", ()),
            secret=options.get("secret"),
            port=port,
        )

    client = await connect_server(root.resolve(), options.get("state_dir"), options.get("also", ()))
    shared = _Shared(client)

    async def connect() -> Any:
        return shared

    try:
        async with (
            running_proxy(root, upstreams[0], connect=connect, **each(ports[0])) as (
                _a,
                anthropic_url,
            ),
            running_proxy(
                root,
                upstreams[1],
                connect=connect,
                record_name="proxy-openai.json",
                **each(ports[1]),
            ) as (_o, openai_url),
        ):
            yield anthropic_url, openai_url, (_a, _o)
    finally:
        await client.close()


async def run_command(
    root: Path, argv: list[str], upstreams: tuple[str, str], **options: Unpack[PairOptions]
) -> int:
    """``fresh-ls run -- CMD``: CMD with ``ANTHROPIC_BASE_URL`` and ``OPENAI_BASE_URL``
    pointing at two proxies of one fresh-ls server (one per upstream); both stop when CMD
    exits, and its exit status is returned. ``agent_cwd``: where CMD runs (a subfolder of
    the root), which its relative paths start from."""
    anthropic_upstream, openai_upstream = upstreams
    async with running_pair(root, upstreams, **options) as (anthropic_url, openai_url, proxies):
        env = dict(os.environ)
        env["ANTHROPIC_BASE_URL"] = anthropic_url
        env["OPENAI_BASE_URL"] = openai_url
        print(
            f"fresh-ls run: {anthropic_url} -> {anthropic_upstream}, "
            f"{openai_url} -> {openai_upstream}",
            file=sys.stderr,
            flush=True,
        )
        command = agent_routes.routed(argv, openai_url, env)
        if command != argv:
            print(
                f"fresh-ls run: {argv[0]} reads no base URL variable for its own provider: "
                "routed with -c model_provider overrides (its config.toml is unchanged)",
                file=sys.stderr,
                flush=True,
            )
        try:
            proc = await asyncio.create_subprocess_exec(*command, env=env)
        except OSError as exc:
            print(f"fresh-ls run: cannot run {argv[0]}: {exc}", file=sys.stderr)
            return 127
        try:
            return await asyncio.wait_for(asyncio.shield(proc.wait()), QUIET_AFTER_S)
        except TimeoutError:
            if not any(p.requests for p in proxies):
                print(
                    f"fresh-ls run: {argv[0]} has run {QUIET_AFTER_S:g} s and sent no model "
                    "request through fresh-ls: it may not read ANTHROPIC_BASE_URL or "
                    f"OPENAI_BASE_URL (set to {anthropic_url} and {openai_url}); point its "
                    "base URL there (docs/harnesses.md)",
                    file=sys.stderr,
                    flush=True,
                )
        return await proc.wait()


async def serve_pair(
    root: Path,
    upstreams: tuple[str, str],
    exit_with_stdin: bool = False,
    **options: Unpack[PairOptions],
) -> int:
    """``fresh-ls proxies``: the two proxies of ``fresh-ls run``, without a command, until
    SIGTERM or SIGINT (or, with ``exit_with_stdin``, until standard input closes: an editor
    that starts it through a pipe need not outlive it by a stray process). The first line
    on standard output is JSON naming both base URLs, for the program that set the
    environment of the terminals it starts."""
    anthropic_upstream, openai_upstream = upstreams
    stop = _stop_on_signals()
    async with running_pair(root, upstreams, **options) as (anthropic_url, openai_url, _):
        line = {
            "anthropic": anthropic_url,
            "openai": openai_url,
            "anthropicUpstream": anthropic_upstream,
            "openaiUpstream": openai_upstream,
            "pid": os.getpid(),
        }
        print(json.dumps(line), flush=True)
        if exit_with_stdin:
            loop = asyncio.get_running_loop()
            # A daemon thread, not the loop's executor: asyncio.run would wait for it at exit.
            threading.Thread(target=_wait_eof, args=(loop, stop), daemon=True).start()
        await stop.wait()
    return 0


def _wait_eof(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """Blocks until standard input ends (a thread: stdin may be a pipe or a tty)."""
    with contextlib.suppress(OSError, ValueError):
        while os.read(sys.stdin.fileno(), 65536):
            pass
    loop.call_soon_threadsafe(stop.set)
