"""``fresh-ls hook claude-code``: one hook event in, Claude Code's answer out.

Reads the event (JSON on stdin), finds the running server of the project (the nearest
folder, from ``--root``, else ``$CLAUDE_PROJECT_DIR``, else the event's ``cwd``, upwards,
whose ``.fresh-ls/endpoint.json`` exists), and does what ``claude_code.action_of`` says.
A ``UserPromptSubmit`` with news prints ``{"hookSpecificOutput": {"hookEventName":
"UserPromptSubmit", "additionalContext": NOTE}}``; every other event prints nothing.

A hook must never block Claude Code or break a tool call: whatever happens (no server, a
dead one, an unreadable event, an error answer) the exit status is 0, with at most one line
on stderr saying what to do. Kept light on purpose: the standard library, the hook's own
link to the server (``link.py``) and the pure modules beside it; the Bash parser loads for
Bash events only (benchmarks/bench_hooks.py measures a call as Claude Code spawns it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import IO, Any

from fresh_ls.hooks.claude_code import Note, Observe, Shell, Wrote, action_of
from fresh_ls.hooks.note import DEFAULT_BUDGET_BYTES, MIN_BUDGET_BYTES
from fresh_ls.statedir import ENDPOINT_FILE, STATE_DIR_NAME

#: Bounds every read and write on the server's socket: a wedged server costs this, once.
DEFAULT_TIMEOUT_S = 5.0
#: Error answers that only mean "no view here": a file outside the root (-32010), one that
#: is not text or is gone (-32011). Claude Code reads such files too; nothing to say.
QUIET_CODES = (-32010, -32011)
#: A hook event is a tool call's input and output; anything larger is cut off unread.
MAX_EVENT_BYTES = 64 * 1024 * 1024


def _budget(text: str) -> int:
    value = int(text)
    if value < MIN_BUDGET_BYTES:
        raise argparse.ArgumentTypeError(f"--budget-bytes must be at least {MIN_BUDGET_BYTES}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", choices=("claude-code",), help="whose hook event this is")
    parser.add_argument(
        "--root",
        default=None,
        help="the project (default: $CLAUDE_PROJECT_DIR, else the event's cwd); the server "
        "is the one of the nearest folder upwards with a running fresh-ls",
    )
    parser.add_argument("--state-dir", default=None, help="the server's state dir, if moved")
    parser.add_argument(
        "--budget-bytes",
        type=_budget,
        default=DEFAULT_BUDGET_BYTES,
        metavar="N",
        help=f"the stale note's limit in UTF-8 bytes (default {DEFAULT_BUDGET_BYTES})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up on the server after this long (default {DEFAULT_TIMEOUT_S:g})",
    )


def find_state_dir(start: Path) -> Path | None:
    """The state dir of the nearest running server at or above ``start``."""
    for folder in (start, *start.parents):
        state = folder / STATE_DIR_NAME
        if (state / ENDPOINT_FILE).is_file():
            return state
    return None


def _start_dir(args: argparse.Namespace, event: Any) -> Path:
    cwd = event.get("cwd") if isinstance(event, dict) else None
    chosen = args.root or os.environ.get("CLAUDE_PROJECT_DIR") or cwd or os.getcwd()
    return Path(os.path.abspath(chosen))


def _say(stderr: IO[str], message: str) -> None:
    print(f"fresh-ls hook: {message}", file=stderr)


def run(args: argparse.Namespace, stdin: IO[bytes], stdout: IO[str], stderr: IO[str]) -> int:
    try:
        event = json.loads(stdin.read(MAX_EVENT_BYTES))
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's limit
        _say(stderr, "stdin held no JSON hook event; nothing done")
        return 0
    action = action_of(event) if isinstance(event, dict) else None
    if action is None:
        return 0
    todo = [] if isinstance(action, Note) else _steps(action)
    if not isinstance(action, Note) and not todo:
        return 0  # a Bash call that neither showed nor wrote a file: nothing to tell
    start = _start_dir(args, event)
    state = Path(args.state_dir) if args.state_dir else find_state_dir(start)
    if state is None:
        _say(
            stderr,
            f"no fresh-ls server runs for {start}; start one with "
            f"`fresh-ls serve --root {start} --listen` (views are not tracked until then)",
        )
        return 0
    from fresh_ls.hooks.link import Link, LinkError

    try:
        with Link.open(state, args.timeout) as link:
            if isinstance(action, Note):
                context = _note(link, state, action.session, args.budget_bytes)
                if context:
                    answer = {
                        "hookSpecificOutput": {
                            "hookEventName": "UserPromptSubmit",
                            "additionalContext": context,
                        }
                    }
                    stdout.write(json.dumps(answer) + "\n")
            for each in todo:
                try:
                    _perform(link, each)
                except LinkError as exc:
                    if exc.code not in QUIET_CODES:
                        raise
    except LinkError as exc:
        if exc.code not in QUIET_CODES:
            _say(stderr, str(exc))
    except Exception as exc:  # a hook must never break the tool call
        _say(stderr, f"unexpected {type(exc).__name__}: {exc}")
    return 0


def _steps(action: Observe | Wrote | Shell) -> list[Observe | Wrote]:
    if isinstance(action, Shell):
        from fresh_ls.hooks.shell import bash_actions

        return bash_actions(action.event, action.session)
    return [action]


def _perform(link: Any, action: Observe | Wrote) -> None:
    from fresh_ls import methods as M

    if isinstance(action, Wrote):
        link.notify(M.DID_WRITE, {"session": action.session, "path": action.path})
        return
    params = {
        "session": action.session,
        "path": action.path,
        "viewId": action.view_id,
        "firstLine": action.first_line,
        "lastLine": action.last_line,
        "text": action.text,
    }
    link.request(M.OBSERVE, {k: v for k, v in params.items() if v is not None})


def _note(link: Any, state: Path, session: str, budget: int) -> str:
    from fresh_ls import methods as M
    from fresh_ls.hooks import announced
    from fresh_ls.hooks.note import compose

    views = link.request(M.STALE, {"session": session})["views"]
    path = announced.record_path(state, session)
    before = announced.load(path)
    composed = compose(views, before, budget)
    alive = {str(v.get("viewId")) for v in views}
    after = {k: v for k, v in before.items() if k in alive} | composed.announced
    if after != before:
        announced.save(path, session, after)
    return composed.text


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="fresh-ls hook",
        description="Answer one agent hook event (JSON on stdin) in the agent's hook format.",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run(args, sys.stdin.buffer, sys.stdout, sys.stderr)
