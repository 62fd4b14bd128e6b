"""The ``hook``, ``install`` and ``uninstall`` commands.

``register`` puts them on the ``fresh-ls`` parser (for ``--help``); ``fresh_ls.cli.main``
hands their ``argv`` to ``main`` here before the whole parser is built, so none of them pays
for the other commands' parsers, and ``hook``, which runs once per tool call, not even for
these.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fresh_ls.hooks.install import Targets


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from fresh_ls.hooks.run import add_arguments

    hook = sub.add_parser(
        "hook", help="answer one agent hook event (JSON on stdin): fresh-ls hook claude-code"
    )
    add_arguments(hook)
    hook.set_defaults(func=cmd_hook)
    for name, helptext, description, func in (
        (
            "install",
            "add fresh-ls's hooks to Claude Code's settings",
            "Add fresh-ls's hooks (and with --mcp its MCP server) to Claude Code's settings: "
            "the project's shared .claude/settings.json by default, the user's with --user. "
            "Entries it wrote before are upgraded in place; nothing else in the file changes. "
            "The hooks need the root's fresh-ls server running (the proxy, `fresh-ls run` or "
            "the VS Code extension start it).",
            cmd_install,
        ),
        (
            "uninstall",
            "remove exactly the entries install added",
            "Remove the entries install added (older ones too), and nothing else; a file "
            "left empty that install created is removed.",
            cmd_uninstall,
        ),
    ):
        p = sub.add_parser(name, help=helptext, description=description)
        p.add_argument("agent", choices=("claude-code",), help="the agent to set up")
        p.add_argument("--root", default=None, help="the project (default: .)")
        p.add_argument(
            "--user",
            action="store_true",
            help="the user's settings (~/.claude/settings.json, ~/.claude.json) instead of "
            "the project's",
        )
        if name == "install":
            p.add_argument(
                "--mcp",
                action="store_true",
                help="also add the MCP server `fresh-ls mcp` (.mcp.json; with --user, "
                "~/.claude.json)",
            )
        p.set_defaults(func=func)


def main(argv: list[str]) -> int:
    """``fresh-ls hook|install|uninstall ...``."""
    if argv[:1] == ["hook"]:
        from fresh_ls.hooks.run import main as hook_main

        return hook_main(argv[1:])
    parser = argparse.ArgumentParser(prog="fresh-ls")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def cmd_hook(args: argparse.Namespace) -> int:
    from fresh_ls.hooks.run import run

    return run(args, sys.stdin.buffer, sys.stdout, sys.stderr)


def _targets(args: argparse.Namespace) -> Targets:
    from fresh_ls.hooks.install import targets

    root = Path(os.path.realpath(args.root or "."))
    return targets(root, args.user)


#: Said after every install: the hooks and the MCP server attach to the root's server.
NEEDS_SERVER = (
    "fresh-ls install: the hooks report to the project's running fresh-ls server; start one "
    "with `fresh-ls serve --root . --listen &` (or work through `fresh-ls run` or the VS Code "
    "extension, which start it); with none running the hooks do nothing"
)


def cmd_install(args: argparse.Namespace) -> int:
    from fresh_ls.hooks.install import install
    from fresh_ls.launch import portable_prefix, python_command

    targets = _targets(args)
    # A project's files are shared (committed): there, the portable `fresh-ls` when this
    # machine has it on PATH; the user's own files get this interpreter's absolute path.
    prefix = portable_prefix() if targets.project else None
    try:
        changed = install(targets, args.mcp, prefix=prefix)
    except (OSError, ValueError) as exc:
        print(f"fresh-ls install: {exc}", file=sys.stderr)
        return 1
    _report("install", changed, "already installed; nothing changed")
    if targets.project and prefix is None:
        print(
            f"fresh-ls install: `fresh-ls` is not on PATH, so the project's files name this "
            f"machine's interpreter ({python_command()[0]}); they work here only. Put fresh-ls "
            "on PATH (pipx install, or activate the virtualenv) and run install again before "
            "committing them, or use --user",
            file=sys.stderr,
        )
    print(NEEDS_SERVER)
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    from fresh_ls.hooks.install import uninstall

    try:
        changed = uninstall(_targets(args))
    except (OSError, ValueError) as exc:
        print(f"fresh-ls uninstall: {exc}", file=sys.stderr)
        return 1
    _report("uninstall", changed, "nothing of fresh-ls was installed there")
    return 0


def _report(command: str, changed: list[str], unchanged: str) -> None:
    """One line per file written, or one saying why none was."""
    for path in changed:
        print(f"fresh-ls {command}: updated {path}")
    if not changed:
        print(f"fresh-ls {command}: {unchanged}")
