"""The ``fresh-ls`` command: serve, inspect a running server, run the demo, audit runs."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fresh_ls import __version__, statedir

if TYPE_CHECKING:
    from fresh_ls.client import SyncClient

# Imports are deferred to the command that needs them: ``status`` should not pay for pygls,
# tree-sitter or the audit parsers, and ``serve`` not for the audit parsers
# (tests/e2e/test_coldstart.py checks; benchmarks/bench_coldstart.py measures).
BUILTIN_COMMANDS = frozenset(
    {"serve", "status", "stale", "project", "demo", "proxy", "run", "mcp", "doctor"}
)


def _root(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is not a directory")
    return Path(os.path.realpath(path))


#: One wording per shared option (``--help`` of every command that takes it).
STATE_DIR_HELP = "where the database and endpoint live (default: ROOT/.fresh-ls)"
POLICY_HELP = (
    "what a projection carries: stale (default: the current code of what changed) or all "
    "(every unit of every view)"
)
BUDGET_HELP = "the most bytes of current code one request may carry (default: the server's)"
FAIL_OPEN_HELP = (
    "when a request cannot be made current, send the original (warning on stderr) instead "
    "of answering an error"
)


def _whole(text: str, what: str, low: int, high: int | None, why: str) -> int:
    """``text`` as a whole number in ``low..high``, else one line saying what is wrong."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"{text!r} {why}")
    return value


def _bytes(text: str) -> int:
    return _whole(text, "a whole number of bytes", 0, None, "must be 0 or more")


def _port(text: str) -> int:
    return _whole(text, "a port number", 0, 65535, "is not a port (0-65535; 0 picks a free one)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def _positive_int(text: str) -> int:
    return _whole(text, "a whole number", 1, None, "must be at least 1")


def _url(text: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an http(s) URL; give the model's base URL, e.g. "
            "https://HOST or https://HOST/v1"
        )
    return text


def root_argument(p: argparse.ArgumentParser) -> None:
    """``--root``: the workspace root, every command's own."""
    p.add_argument("--root", type=_root, default=None, help="the workspace root (default: .)")


def state_dir_argument(p: argparse.ArgumentParser) -> None:
    """``--state-dir``: where the database and endpoint live."""
    p.add_argument("--state-dir", default=None, help=STATE_DIR_HELP)


def also_argument(p: argparse.ArgumentParser) -> None:
    """``--also DIR`` (repeatable): folders beside the root whose files are tracked too."""
    p.add_argument(
        "--also",
        type=_root,
        action="append",
        default=[],
        metavar="DIR",
        help="also track files in DIR (repeatable), e.g. scratch scripts an agent writes "
        "beside the repository; results name them by absolute path",
    )


def _pair_arguments(p: argparse.ArgumentParser) -> None:
    """What ``run`` and ``proxies`` share: the root, the state dir, both upstreams."""
    root_argument(p)
    also_argument(p)
    state_dir_argument(p)
    p.add_argument(
        "--anthropic-upstream",
        default=None,
        type=_url,
        metavar="URL",
        help="where Anthropic requests go (default: $ANTHROPIC_BASE_URL, else Anthropic's API)",
    )
    p.add_argument(
        "--openai-upstream",
        default=None,
        type=_url,
        metavar="URL",
        help="where OpenAI requests go (default: $OPENAI_BASE_URL, else OpenAI's API)",
    )
    p.add_argument("--fail-open", action="store_true", help=FAIL_OPEN_HELP)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; given one of ``BUILTIN_COMMANDS``, the audit and replay commands
    (whose modules cost more to import than a ``status`` call) are left out."""
    parser = argparse.ArgumentParser(
        prog="fresh-ls",
        description="Keep a coding agent's file views fresh: a sidecar that tells which views "
        "went stale and projects the current code within a byte budget.",
    )
    parser.add_argument("--version", action="version", version=f"fresh-ls {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from fresh_ls.hooks.cli import register as register_hooks

    register_hooks(sub)  # hook, install, uninstall (fresh_ls/hooks/); run by main's fast path

    serve = sub.add_parser(
        "serve", help="run the sidecar for a root (stdio and/or a local endpoint)"
    )
    root_argument(serve)
    serve.add_argument("--stdio", action="store_true", help="serve one client on stdin/stdout")
    also_argument(serve)
    serve.add_argument(
        "--listen",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="accept clients on unix:PATH or tcp:127.0.0.1:PORT (default: a Unix socket "
        "in the state dir); writes endpoint.json",
    )
    state_dir_argument(serve)
    serve.add_argument("--no-watch", action="store_true", help="do not watch the root for writes")
    serve.add_argument("--log-level", default="WARNING", help="logging level on stderr")
    serve.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        default=16 * 1024 * 1024,
        metavar="N",
        help="refuse (and close the connection of) a message larger than N bytes "
        "(default 16 MiB, the contract's floor)",
    )
    serve.add_argument(
        "--auth-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="close an endpoint connection that has not presented the token by then (default 5)",
    )
    serve.add_argument(
        "--max-unauthenticated",
        type=_positive_int,
        default=64,
        metavar="N",
        help="endpoint connections that may wait for their token at once; past it the oldest "
        "is closed (default 64)",
    )
    serve.add_argument(
        "--idle-exit",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="exit once no client has been connected for SECONDS (the server `run`, `proxy` "
        "and `proxies` start shared uses $FRESH_LS_SERVER_IDLE_S, default 60); default: "
        "never",
    )
    serve.set_defaults(func=cmd_serve)

    for name, helptext, func in (
        ("status", "sessions, views and stale counts of the running server", cmd_status),
        ("stale", "which views of a session went stale, with diffs", cmd_stale),
        ("project", "the rendered projection of a session", cmd_project),
    ):
        p = sub.add_parser(name, help=helptext)
        root_argument(p)
        state_dir_argument(p)
        p.add_argument("--json", action="store_true", help="print the raw result as JSON")
        if name != "status":
            p.add_argument("--session", required=True, help="the agent session to ask about")
        if name == "project":
            p.add_argument("--budget-bytes", type=_bytes, default=None, help=BUDGET_HELP)
            p.add_argument("--policy", choices=("stale", "all"), default=None, help=POLICY_HELP)
        p.set_defaults(func=func)

    demo = sub.add_parser(
        "demo",
        help="a scripted agent, formatter and editor on a scratch "
        "workspace; prints stale views, markers and the projection",
    )
    demo.add_argument("--keep", action="store_true", help="keep the scratch workspace")
    demo.add_argument("--json", action="store_true", help="print the demo's results as JSON")
    demo.set_defaults(func=cmd_demo)

    doctor = sub.add_parser(
        "doctor",
        help="check a root's state dir (store, endpoint, modes); --fix mends what it can",
        description="Check the state dir of a root: the view store opens and passes its "
        "integrity check, endpoint.json names a running server, the dir is private. With "
        "--fix, a broken store is moved aside (kept, renamed), a stale endpoint.json removed, "
        "the dir made 0700; each fix is said.",
    )
    root_argument(doctor)
    state_dir_argument(doctor)
    doctor.add_argument("--fix", action="store_true", help="mend what can be mended, saying so")
    doctor.add_argument("--json", action="store_true", help="print the findings as JSON")
    doctor.set_defaults(func=cmd_doctor)

    proxy = sub.add_parser(
        "proxy",
        help="an HTTP proxy between a coding agent and its model that keeps stale code out "
        "of every request (docs/harnesses.md)",
    )
    root_argument(proxy)
    proxy.add_argument(
        "--upstream", required=True, type=_url, metavar="URL", help="the model's base URL"
    )
    also_argument(proxy)
    proxy.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: free)")
    state_dir_argument(proxy)
    proxy.add_argument("--fail-open", action="store_true", help=FAIL_OPEN_HELP)
    proxy.add_argument("--policy", choices=("stale", "all"), default=None, help=POLICY_HELP)
    proxy.add_argument("--budget-bytes", type=_bytes, default=None, help=BUDGET_HELP)
    proxy.add_argument(
        "--placement",
        choices=("anchored", "end"),
        default="anchored",
        help="anchored (default): current code is sent once, after the newest tool result, "
        "and stays there for the prompt cache; end: the whole projection after the newest "
        "message of every request (v1.1)",
    )
    proxy.add_argument(
        "--log-requests",
        default=None,
        metavar="DIR",
        help="keep each model request as received and as sent in DIR (credentials removed)",
    )
    proxy.set_defaults(func=cmd_proxy)

    run = sub.add_parser(
        "run",
        help="run CMD with ANTHROPIC_BASE_URL and OPENAI_BASE_URL pointing at fresh-ls "
        "proxies for the current folder (fresh-ls run -- claude ...)",
    )
    _pair_arguments(run)
    run.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    run.set_defaults(func=cmd_run)

    proxies = sub.add_parser(
        "proxies",
        help="the two proxies of `fresh-ls run` (Anthropic and OpenAI) without a command, "
        "until stopped; prints one JSON line with their base URLs (editors use it to set "
        "the environment of the terminals they start)",
    )
    _pair_arguments(proxies)
    proxies.add_argument(
        "--exit-with-stdin",
        action="store_true",
        help="stop when standard input closes (for a parent that holds a pipe)",
    )
    for shape in ("anthropic", "openai"):
        proxies.add_argument(
            f"--{shape}-port",
            type=_port,
            default=0,
            help=f"port on 127.0.0.1 of the {shape} proxy (default: free); with "
            f"${PROXY_SECRET_VARIABLE}, the same base URLs as a run before",
        )
    proxies.set_defaults(func=cmd_proxies)

    mcp = sub.add_parser(
        "mcp",
        help="an MCP server (stdio) with guarded read/edit/write tools for Claude Code, "
        "Codex, Cursor, Claude Desktop (docs/guard.md)",
    )
    root_argument(mcp)
    also_argument(mcp)
    mcp.add_argument(
        "--session",
        default=None,
        help="the fresh-ls session of this connection (default: a new one per connection)",
    )
    state_dir_argument(mcp)
    mcp.set_defaults(func=cmd_mcp)

    if command in BUILTIN_COMMANDS:
        return parser
    try:
        from fresh_ls.audit.cli import register as register_audit
    except ImportError:  # pragma: no cover - the audit package ships with fresh-ls
        pass
    else:
        register_audit(sub)
    try:
        from fresh_ls.replay.cli import register as register_replay
    except ImportError:
        pass
    else:
        register_replay(sub)
    return parser


def cmd_serve(args: argparse.Namespace) -> int:
    # Nothing heavy before the stdio handshake: ``initialize`` is answered before pygls,
    # asyncio and the engine load (fresh_ls/server/handshake.py says how, and why).
    from fresh_ls.server.endpoint import AlreadyRunning, RootLock

    root: Path = args.root or _root(".")
    state_dir = (
        Path(args.state_dir).resolve() if args.state_dir else statedir.default_state_dir(root)
    )
    if not args.stdio and args.listen is None:
        print(
            "fresh-ls serve: say how clients connect: --stdio, --listen [ADDRESS], or both",
            file=sys.stderr,
        )
        return 2
    try:
        lock = RootLock.acquire(state_dir)
    except AlreadyRunning as exc:
        print(f"fresh-ls serve: {exc}", file=sys.stderr)
        return 3
    early = None
    if args.stdio:
        from fresh_ls.server.handshake import LISTEN_WAIT_S, answer_first

        sys.stdout.flush()
        wait = LISTEN_WAIT_S if args.listen is not None else None
        try:
            early = answer_first(
                sys.stdin.fileno(), sys.stdout.fileno(), args.max_message_bytes, wait
            )
        except KeyboardInterrupt:
            lock.release()
            return 0

    import asyncio
    import logging

    from fresh_ls.engine.store import StoreError
    from fresh_ls.server.app import Limits, serve

    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="fresh-ls %(levelname)s %(name)s: %(message)s",
    )
    if logging.getLogger().level > logging.DEBUG:
        # pygls logs every error answer with a traceback; ours are answers, not faults,
        # and real faults are logged by FreshServer.report_server_error.
        logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.CRITICAL)
    try:
        code = asyncio.run(
            serve(
                root,
                state_dir,
                args.stdio,
                args.listen,
                args.listen is not None,
                watch=not args.no_watch,
                also=tuple(args.also),
                idle_exit_s=args.idle_exit,
                limits=Limits(
                    max_message_bytes=args.max_message_bytes,
                    auth_timeout_s=args.auth_timeout,
                    max_unauthenticated=args.max_unauthenticated,
                ),
                lock=lock,
                early=early,
            )
        )
    except AlreadyRunning as exc:
        print(f"fresh-ls serve: {exc}", file=sys.stderr)
        return 3
    except StoreError as exc:
        print(f"fresh-ls serve: {exc}", file=sys.stderr)
        return 4
    except ValueError as exc:
        print(f"fresh-ls serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        code = 0
    if args.stdio:
        # The stdin reader thread may still block on a read; nothing is left to flush.
        sys.stdout.flush()
        os._exit(code)
    return code


def _attach(args: argparse.Namespace) -> SyncClient:
    from fresh_ls.client import SyncClient

    return SyncClient.attach(args.root or Path.cwd(), state_dir=args.state_dir)


def _stored_server(args: argparse.Namespace) -> SyncClient | None:
    """A server of this command's own over the stored views, when none is running but the
    state dir holds views (after `fresh-ls run` or the proxy ended): status, stale and
    project still answer; None when nothing is stored."""
    from fresh_ls.client import SyncClient

    root = Path(args.root or Path.cwd()).resolve()
    state = Path(args.state_dir).resolve() if args.state_dir else statedir.default_state_dir(root)
    if not (state / statedir.DATABASE_FILE).is_file():
        return None
    print(
        f"fresh-ls {args.command}: no running server for {root}; read from the views stored "
        f"in {state}",
        file=sys.stderr,
    )
    return SyncClient.spawn(root, extra_args=["--state-dir", str(state), "--no-watch"])


def _session_named(client: SyncClient, given: str) -> str:
    """The session ``given`` names: itself, or the one session whose id ends with
    ``:<given>`` (Claude Code prints its session id; the proxy names the session
    ``claude-code-session-id:<id>``)."""
    sessions = [s["session"] for s in client.status()["sessions"]]
    if given in sessions:
        return given
    matches = [s for s in sessions if s.endswith(":" + given)]
    return matches[0] if len(matches) == 1 else given


def _run_client(args: argparse.Namespace, call: Any, show: Any) -> int:
    from fresh_ls.client import ConnectionClosedError, FreshClientError

    try:
        try:
            client = _attach(args)
        except ConnectionClosedError:
            stored = _stored_server(args)
            if stored is None:
                raise
            client = stored
        with client:
            if getattr(args, "session", None):
                args.session = _session_named(client, args.session)
            result = call(client)
    except FreshClientError as exc:
        print(f"fresh-ls {args.command}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        show(result)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from fresh_ls.doctor import as_json, diagnose

    root: Path = args.root or _root(".")
    state = Path(args.state_dir).resolve() if args.state_dir else statedir.default_state_dir(root)
    findings = diagnose(state, fix=args.fix)
    if args.json:
        print(json.dumps(as_json(findings), indent=2))
    else:
        for f in findings:
            mark = "ok     " if f.ok else "problem"
            print(f"{mark} {f.check}: {f.detail}" + (f" — fixed: {f.fixed}" if f.fixed else ""))
    return 0 if all(f.ok or f.fixed for f in findings) else 1


def cmd_status(args: argparse.Namespace) -> int:
    from fresh_ls.proxy.status import print_proxies, with_proxies
    from fresh_ls.report import print_status

    def show(result: dict[str, Any]) -> None:
        print_status(result)
        print_proxies(result)

    return _run_client(args, lambda c: with_proxies(c.status()), show)


def cmd_stale(args: argparse.Namespace) -> int:
    from fresh_ls.report import print_stale

    return _run_client(args, lambda c: c.stale(args.session), print_stale)


def cmd_project(args: argparse.Namespace) -> int:
    from fresh_ls.report import print_projection

    return _run_client(
        args,
        lambda c: c.project(args.session, budget_bytes=args.budget_bytes, policy=args.policy),
        print_projection,
    )


def cmd_demo(args: argparse.Namespace) -> int:
    from fresh_ls.demo import run_demo

    return run_demo(keep=args.keep, as_json=args.json)


def cmd_proxy(args: argparse.Namespace) -> int:
    import asyncio  # aiohttp is imported by the proxy only: `status` stays cold-start cheap

    from fresh_ls.client import FreshClientError
    from fresh_ls.proxy.serve import serve_proxy

    root: Path = args.root or _root(".")
    try:
        return asyncio.run(
            serve_proxy(
                root,
                args.upstream,
                port=args.port,
                state_dir=Path(args.state_dir).resolve() if args.state_dir else None,
                fail_open=args.fail_open,
                policy=args.policy,
                budget_bytes=args.budget_bytes,
                placement=args.placement,
                log_requests=Path(args.log_requests) if args.log_requests else None,
                also=tuple(args.also),
            )
        )
    except OSError as exc:  # the port: in use, or not ours to bind
        print(
            f"fresh-ls proxy: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}; "
            "pick another --port, or 0 for a free one",
            file=sys.stderr,
        )
        return 1
    except FreshClientError as exc:
        print(f"fresh-ls {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from fresh_ls.mcp.server import run

    root: Path = args.root or _root(".")
    state_dir = Path(args.state_dir).resolve() if args.state_dir else None
    try:
        return run(root, args.session, state_dir, tuple(args.also))
    except KeyboardInterrupt:
        return 0


#: Where ``fresh-ls run`` sends requests when neither a flag nor the environment says.
DEFAULT_UPSTREAMS = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
}


def cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    from fresh_ls.client import FreshClientError
    from fresh_ls.proxy.serve import run_command

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        print("fresh-ls run: say what to run: fresh-ls run -- CMD [ARGS...]", file=sys.stderr)
        return 2
    root, why = (args.root, "--root") if args.root else run_root(Path.cwd())
    print(f"fresh-ls run: root {root} ({why})", file=sys.stderr, flush=True)
    anthropic, openai = _upstreams(args)
    if not args.openai_upstream:
        from fresh_ls.proxy.agent_routes import codex_upstream

        openai = codex_upstream(argv, os.environ) or openai  # the user's own Codex provider
    try:
        return asyncio.run(
            run_command(
                root,
                argv,
                (anthropic, openai),
                state_dir=Path(args.state_dir).resolve() if args.state_dir else None,
                fail_open=args.fail_open,
                agent_cwd=os.getcwd(),
                also=tuple(args.also),
            )
        )
    except FreshClientError as exc:
        print(f"fresh-ls {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def run_root(cwd: Path) -> tuple[Path, str]:
    """The root ``fresh-ls run`` protects when no ``--root`` is given, and why: the top
    level of the git repository ``cwd`` is in (an agent started in a subfolder still edits
    the whole repository), else ``cwd`` itself."""
    import subprocess

    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        top = None
    if top is not None and top.returncode == 0 and top.stdout.strip():
        return Path(os.path.realpath(top.stdout.strip())), "the git repository's top level"
    return Path(os.path.realpath(cwd)), "the current folder: not inside a git repository"


def _upstreams(args: argparse.Namespace) -> tuple[str, str]:
    """Where ``run`` and ``proxies`` send each request shape: the flag, else the variable
    the agent would have used, else the public API."""
    anthropic = (
        args.anthropic_upstream
        or os.environ.get("ANTHROPIC_BASE_URL")
        or DEFAULT_UPSTREAMS["anthropic"]
    )
    openai = (
        args.openai_upstream or os.environ.get("OPENAI_BASE_URL") or DEFAULT_UPSTREAMS["openai"]
    )
    return anthropic, openai


#: The base URLs' secret for ``proxies`` (a variable, not an argument: other users of the
#: machine can read a process's arguments, not its environment).
PROXY_SECRET_VARIABLE = "FRESH_LS_PROXY_SECRET"


def cmd_proxies(args: argparse.Namespace) -> int:
    import asyncio
    import errno
    import re

    from fresh_ls.client import FreshClientError
    from fresh_ls.proxy.serve import serve_pair

    anthropic, openai = _upstreams(args)
    # Read once and dropped: a server the proxies start does not inherit it.
    secret = os.environ.pop(PROXY_SECRET_VARIABLE, None) or None
    if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{16,}", secret):
        print(
            f"fresh-ls proxies: ${PROXY_SECRET_VARIABLE} must be at least 16 characters of "
            "A-Z a-z 0-9 _ -; unset it for a new secret",
            file=sys.stderr,
        )
        return 2
    try:
        return asyncio.run(
            serve_pair(
                args.root or _root("."),
                (anthropic, openai),
                state_dir=Path(args.state_dir).resolve() if args.state_dir else None,
                fail_open=args.fail_open,
                exit_with_stdin=args.exit_with_stdin,
                also=tuple(args.also),
                ports=(args.anthropic_port, args.openai_port),
                secret=secret,
            )
        )
    except FreshClientError as exc:
        print(f"fresh-ls {args.command}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        print(
            f"fresh-ls {args.command}: a port asked for is in use on 127.0.0.1 "
            f"({exc.strerror or exc}); give others, or 0 for free ones",
            file=sys.stderr,
        )
        return 3
    except KeyboardInterrupt:
        return 0


def _command_of(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (its first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] in (["hook"], ["install"], ["uninstall"]):  # hook: once per tool call
        from fresh_ls.hooks.cli import main as hooks_main

        return hooks_main(argv)
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    return int(args.func(args))
