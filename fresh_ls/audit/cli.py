"""The ``fresh-ls audit`` subcommand; ``fresh_ls.cli`` calls ``register``."""

from __future__ import annotations

import argparse
import json
import sys

from fresh_ls.audit.api import audit_paths
from fresh_ls.audit.formats import FORMATS
from fresh_ls.audit.progress import Progress
from fresh_ls.audit.report import render_json, render_text

EXIT_OK = 0
EXIT_NOTHING_READ = 2

_DESCRIPTION = """\
Measure stale file views in coding-agent transcripts, from the transcripts alone.

A view counts as stale in a model request when, after the view and before the request, the
agent's own edit changed a line the view showed (or a change outside the agent did, once later
tool output shows it). "strict" counts editor views, SWE-agent windows and Claude Code / Pi
reads; "wide" also counts the snippets edit tools print (and shell reads with --shell-reads).

PATH may be an OpenHands llm_completions/<instance>/ directory or one of its .json files, an
OpenHands output.jsonl (one run per line), a SWE-agent .traj, a mini-swe-agent .traj.json, a
Claude Code, Codex or Pi session .jsonl, or a directory holding any of these (searched
recursively), e.g. ~/.claude, ~/.codex (with --shell-reads: Codex reads through its shell),
~/.pi.
"""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "audit",
        help="measure stale views in agent transcripts",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="transcripts or directories")
    parser.add_argument(
        "--format", choices=FORMATS, help="read every transcript as this format (no detection)"
    )
    parser.add_argument(
        "--shell-reads",
        action="store_true",
        help="count cat/sed -n/nl -ba/head/tail of one file as views (wide count)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (fresh-ls.audit/1)")
    parser.add_argument(
        "--per-request",
        action="store_true",
        help="with --json: every request's stale view ids and the list of views",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="per-run notes")
    parser.add_argument("--no-progress", action="store_true", help="never draw a progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    progress: Progress | None = None

    def start(files: int) -> None:
        nonlocal progress
        progress = Progress(files, sys.stderr, enabled=not args.no_progress)

    def tick(path: object) -> None:
        if progress is not None:
            progress.tick(path)  # type: ignore[arg-type]

    try:
        report = audit_paths(args.paths, args.format, args.shell_reads, tick, start)
    finally:
        if progress is not None:
            progress.finish()
    if args.json:
        json.dump(render_json(report, args.per_request), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(report, args.verbose))
    if report.runs:
        return EXIT_OK
    if args.json:
        for problem in report.problems:
            print(f"fresh-ls audit: {problem.path}: {problem.error}", file=sys.stderr)
    print(
        "fresh-ls audit: no transcript could be read. Give paths to OpenHands llm_completions"
        " directories or output.jsonl files, SWE-agent .traj files, mini-swe-agent"
        " .traj.json files, or Claude Code / Codex / Pi sessions (~/.claude, ~/.codex,"
        " ~/.pi, or a folder under them; use --format to force a format).",
        file=sys.stderr,
    )
    return EXIT_NOTHING_READ


def main(argv: list[str] | None = None) -> int:
    """Run ``audit`` on its own (``python -P -m fresh_ls.audit.cli``), without the main CLI."""
    parser = argparse.ArgumentParser(prog="fresh-ls")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
