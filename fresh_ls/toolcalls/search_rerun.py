"""A stale search result, as the same search would print it now.

When a line a search printed has changed, the model should not keep the old text. Two ways:

- **re-run** the command (``rerun_argv`` then ``run_search``) when it is a plain read-only
  search: grep, rg or git grep with allowed flags only (``searches``), every path inside the
  root, nothing a shell would expand or run (no pipes, redirections, ``;``/``&&``,
  substitutions, unquoted globs, environment assignments), no pattern file (``-f``), no
  preprocessor (``--pre``), no decompression (``-z``), no symlink following (``-R``, ``-L``);
  no shell, a time limit and an output cap. A re-run can show what a rebuild cannot: new
  matches, in these files or others, and matches that went away.
- **rebuild** the printed lines (``rebuild``): each printed line's text is replaced by the
  current text of that line of that file, every decoration kept (path, number, separators,
  headings, ``--``, the agent shell's own envelope); a line past the end of the file is
  replaced by a note that it is gone. The caller adds the one-line note that the result was
  refreshed.

``refresh`` does the first when it may and the second otherwise.
"""

from __future__ import annotations

import os
import posixpath
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fresh_ls.toolcalls.agents import ToolCall, _str, codex_cwd, shell_command_of
from fresh_ls.toolcalls.numbered import plain_lines
from fresh_ls.toolcalls.searches import (
    _OMITTED,
    SearchCommand,
    TextLookup,
    grep_tool,
    printed_lines,
    search_command,
    shell_search,
)
from fresh_ls.toolcalls.shell_envelope import codex_envelope, openhands_envelope
from fresh_ls.toolcalls.shell_parse import parse

Inside = Callable[[str], bool]

#: Flags a re-run refuses although a search with them is read: they leave the root.
_LEAVES_ROOT = {"-R", "-L"}
_SHELL_SPECIAL = set("|&;<>()$`\n\r")
_GLOB = set("*?[{~")


def _plain_words(command: str) -> bool:
    """Nothing in ``command`` that a shell would expand, run or redirect: special characters
    only inside single quotes (or, except ``$`` and backquotes, double quotes)."""
    quote = ""
    at_word_start = True
    i = 0
    while i < len(command):
        ch = command[i]
        if quote == "'":
            if ch == "'":
                quote = ""
        elif quote == '"':
            if ch in "$`":
                return False
            if ch == "\\":
                i += 1
            elif ch == '"':
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "\\":
            i += 1
        elif ch in _SHELL_SPECIAL or ch in _GLOB or (ch == "#" and at_word_start):
            return False
        at_word_start = ch in " \t" and not quote
        i += 1
    return quote == ""


def _assigns(command: str) -> bool:
    stripped = command.lstrip()
    head = stripped.split(None, 1)[0] if stripped else ""
    return "=" in head and head.split("=", 1)[0].replace("_", "a").isalnum()


def rerun_argv(
    command: str, cwd: str, inside: Inside, *, heading: bool | None = None
) -> list[str] | None:
    """The argv to run ``command`` again in ``cwd``, or None when it is not a plain read-only
    search whose every path is inside (``inside(real absolute path)``).

    ``heading``: rg's output shape when the command does not say (rg prints headings to a
    terminal only): True adds ``--heading``, False ``--no-heading``. Colours are turned off.
    """
    if not command.strip() or not _plain_words(command) or _assigns(command):
        return None
    try:
        pipelines = parse(command)
    except Exception:
        return None
    if len(pipelines) != 1 or len(pipelines[0].commands) != 1 or pipelines[0].connector:
        return None
    only = pipelines[0].commands[0]
    if only.redirects:
        return None
    search = search_command(only.argv, cwd)
    if search is None or search.names & _LEAVES_ROOT:
        return None
    if not _paths_inside(search, cwd, inside):
        return None
    argv = list(only.argv)
    if search.program == "git grep":
        rest = argv[1:]
        if rest[:1] == ["--no-pager"]:
            rest = rest[1:]
        return [
            "git",
            "--no-pager",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "color.ui=never",
            "-c",
            "color.grep=never",
            *rest,
        ]
    extra = ["--color=never"]
    if search.program == "rg":
        extra.insert(0, "--no-config")
        if search.heading is None and heading is not None:
            extra.append("--heading" if heading else "--no-heading")
    return [argv[0], *extra, *argv[1:]]


def _paths_inside(search: SearchCommand, cwd: str, inside: Inside) -> bool:
    if not cwd.startswith("/"):
        return False
    # git pathspec magic (``:(top)``, ``:/``) would search beyond the working directory
    if search.program == "git grep" and any(p.startswith(":") for p in search.paths):
        return False
    operands = search.paths or ["."]
    for operand in operands:
        full = posixpath.normpath(posixpath.join(cwd, operand))
        if not inside(os.path.realpath(full)):
            return False
    return True


def _environment() -> dict[str, str]:
    """A clean environment: no GREP_OPTIONS/GREP_COLORS, no RIPGREP_CONFIG_PATH, no GIT_* (a
    re-run must not pick up the proxy's own settings), one UTF-8 locale."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": os.environ.get("LC_ALL") or os.environ.get("LANG") or "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    if "HOME" in os.environ:
        env["HOME"] = os.environ["HOME"]
    return env


def run_search(
    argv: list[str], cwd: str, timeout_s: float = 2.0, max_bytes: int = 256 * 1024
) -> str | None:
    """Run a search (from ``rerun_argv``) without a shell and return what it printed
    (standard output and error together, as an agent's shell shows them).

    None when it could not give a whole answer: it ran past ``timeout_s`` or printed more
    than ``max_bytes`` (it is killed, with its process group, and the output dropped rather
    than cut, so a caller never shows a partial result as if whole), it failed (exit status
    other than 0, or 1 for "no match"), or the program is missing.
    """
    program = shutil.which(argv[0], path=_environment()["PATH"]) if argv else None
    if program is None:
        return None
    try:
        process = subprocess.Popen(
            [program, *argv[1:]],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=_environment(),
            start_new_session=True,
        )
    except OSError:
        return None
    assert process.stdout is not None
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + timeout_s
    whole = False
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                break
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                whole = True
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                break
    if not whole:
        _kill(process)
        return None
    try:
        code = process.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill(process)
        return None
    finally:
        process.stdout.close()
    if code not in (0, 1):
        return None
    return b"".join(chunks).decode("utf-8", errors="replace")


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


# -- rebuilding in place -----------------------------------------------------------------------


def gone_note(number: int, total: int) -> str:
    """What a printed line says in place of its text when the file no longer has it."""
    return f"[line {number} is gone: the file now has {total} lines]"


@dataclass(frozen=True)
class Envelope:
    """A search's tool result split: ``prefix + body + suffix`` is the result as shown."""

    search: SearchCommand
    command: str | None  # the shell command line (None: Claude Code's Grep)
    prefix: str
    body: str
    suffix: str


def envelope_of(call: ToolCall, cwd: str | None) -> Envelope | None:
    """The search a tool call ran and its output apart from the agent's own decoration."""
    if call.is_error:
        return None
    if call.name == "Grep":
        search = grep_tool(call.arguments, cwd)
        return Envelope(search, None, "", call.output, "") if search else None
    if call.name in ("exec_command", "shell", "local_shell", "container.exec"):
        command, workdir = shell_command_of(call.arguments)
        if command is None:
            return None
        parts = codex_envelope(call.output)
        search = shell_search(command, codex_cwd(workdir, cwd))
        if parts is None or search is None:
            return None
        return Envelope(search, command, *parts)
    if call.name in ("Bash", "bash", "execute_bash"):
        command = _str(call.arguments, "command")
        search = shell_search(command, cwd) if command else None
        if search is None:
            return None
        if call.name == "execute_bash":
            return Envelope(search, command, *openhands_envelope(command or "", call.output))
        return Envelope(search, command, "", call.output, "")
    return None


def _heading(envelope: Envelope) -> bool | None:
    """Whether the printed output was in rg's heading shape (for a re-run that keeps it)."""
    lines = plain_lines(envelope.body)
    printed = printed_lines(envelope.search, lines)
    if not printed:
        return None
    first = printed[0]
    return lines[first.index].startswith(str(first.number))


def rebuild(envelope: Envelope, text_of: TextLookup) -> str:
    """The tool result with every printed line's text replaced by that line's text now.

    ``text_of(path, cwd)`` is the file's current text as the agent named it; None for a file
    the caller cannot speak for (its lines stay as printed), ``""`` for a file that is gone.
    """
    pieces = envelope.body.split("\n")
    lines = [p[:-1] if p.endswith("\r") else p for p in pieces]
    lines_for_parse = lines[:-1] if lines and lines[-1] == "" else lines
    texts: dict[str, list[str] | None] = {}
    for printed in printed_lines(envelope.search, lines_for_parse):
        if printed.ambiguous:
            continue
        if printed.path not in texts:
            text = text_of(printed.path, envelope.search.cwd)
            texts[printed.path] = plain_lines(text) if text is not None else None
        current = texts[printed.path]
        if current is None:
            continue
        decoration = lines[printed.index][: printed.start]
        if _OMITTED.match(lines[printed.index][printed.start :]):
            continue  # rg's stand-in for a long line: a re-run would print it the same
        if 1 <= printed.number <= len(current):
            new = current[printed.number - 1]
        else:
            new = gone_note(printed.number, len(current))
        ending = "\r" if pieces[printed.index].endswith("\r") else ""
        pieces[printed.index] = decoration + new + ending
    return envelope.prefix + "\n".join(pieces) + envelope.suffix


@dataclass(frozen=True)
class Refresh:
    output: str  # the whole tool result, as the search would show it now
    how: Literal["rerun", "rebuild"]


def _as_printed(new: str, old_body: str) -> str:
    """A re-run's output in the old body's line endings and final-newline habit."""
    if "\r\n" in old_body:
        new = new.replace("\n", "\r\n")
    if not old_body.endswith("\n"):
        new = new.removesuffix("\r\n") if new.endswith("\r\n") else new.removesuffix("\n")
    return new


def refresh(
    call: ToolCall,
    cwd: str | None,
    text_of: TextLookup,
    *,
    inside: Inside | None = None,
    local_cwd: str | None = None,
    timeout_s: float = 2.0,
    max_bytes: int = 256 * 1024,
) -> Refresh | None:
    """The tool result of a search call as it would read now: re-run when allowed
    (``inside`` given, a plain search, ``local_cwd`` (default ``cwd``) the folder to run it
    in on this machine), else rebuilt. None when the call is not a search this reads."""
    envelope = envelope_of(call, cwd)
    if envelope is None:
        return None
    where = local_cwd or cwd
    if inside is not None and envelope.command is not None and where:
        argv = rerun_argv(envelope.command, where, inside, heading=_heading(envelope))
        if argv is not None:
            output = run_search(argv, where, timeout_s, max_bytes)
            if output is not None:
                body = _as_printed(output, envelope.body)
                return Refresh(envelope.prefix + body + envelope.suffix, "rerun")
    return Refresh(rebuild(envelope, text_of), "rebuild")
