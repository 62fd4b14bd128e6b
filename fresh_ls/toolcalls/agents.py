"""Which of a coding agent's tool calls showed a file, and which wrote one.

The model proxy sees every tool call (its name and arguments) and every tool result (the text
the model was shown) of the agents it sits in front of. ``recognize`` turns one such pair into
effects: a ``Seen`` (a file view: which lines, and the text the tool showed with its line
numbers stripped), a ``Searched`` (the numbered lines of one file a search printed:
``grep -n``, ``rg -n``, ``git grep -n``, Claude Code's Grep; see ``searches``) or a ``Wrote``
(the agent changed a file). A result that is not a file view gives no effect and stays as it
is.

Per agent (tool names as each sends them):

- Claude Code: ``Read {file_path, offset?, limit?}`` (result ``N\\tline``, one per line, a
  final empty numbered line for the file's last newline), ``Edit``, ``MultiEdit``, ``Write``,
  ``NotebookEdit``, ``Bash {command}``, ``Grep {pattern, path?, output_mode: "content"}``.
- Codex CLI: ``exec_command {cmd, workdir?}`` and ``shell {command: [...], workdir?}`` (the
  result after the ``Chunk ID … Output:`` preamble; the shell forms of ``shell_effects``:
  ``cat -n``, ``sed -n 'A,Bp'``, ``nl -ba``, ``head``, ``tail``, heredocs, ``apply_patch``
  heredocs), and the freeform ``apply_patch`` custom tool.
- Pi: ``read {path, offset?, limit?}`` (raw text), ``edit``, ``write``, ``bash {command}``.
- OpenHands: ``str_replace_editor`` (``view`` with ``view_range``; ``str_replace``,
  ``insert``, ``create``, ``undo_edit``) and ``execute_bash``.
- aider has no tools: its file blocks and SEARCH/REPLACE replies are read out of its chat
  messages by ``fresh_ls.toolcalls.aider``.

Paths are returned as the agent wrote them, with the directory the call ran in (``cwd``);
the caller resolves them against its root.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fresh_ls.toolcalls.lines import END
from fresh_ls.toolcalls.numbered import cat_n_header, parse_cat_n, plain_lines
from fresh_ls.toolcalls.searches import Searched, grep_tool, searched, shell_search
from fresh_ls.toolcalls.shell_effects import analyze
from fresh_ls.toolcalls.shell_envelope import CODEX_PREAMBLE, openhands_envelope
from fresh_ls.toolcalls.shell_parse import parse

TextLookup = Callable[[str, str | None], str | None]


@dataclass(frozen=True)
class Seen:
    """A file view: lines ``first..last`` of ``path`` (None: the whole file) as shown."""

    path: str
    cwd: str | None
    first: int | None = None
    last: int | None = None
    text: str | None = None  # the lines as the tool showed them, each ending in "\n"
    kind: str = "read"  # or "editResult"


@dataclass(frozen=True)
class Wrote:
    path: str
    cwd: str | None


Effect = Seen | Wrote | Searched


@dataclass(frozen=True)
class ToolCall:
    """One tool call and its result, as a request carries them."""

    call_id: str
    name: str
    arguments: Any  # a dict (parsed), or the raw string of a freeform tool
    output: str
    is_error: bool = False

    @classmethod
    def quickly(
        cls, call_id: str, call: tuple[str, Any] | None, output: str, is_error: bool = False
    ) -> ToolCall:
        """``ToolCall(call_id, name, arguments, output, is_error)`` (``call``: the call's
        name and arguments, None for a result whose call the request lacks), the same
        object made without the frozen dataclass's ``__init__``, which sets each field
        through ``object.__setattr__``: the proxy makes one per tool result of every
        request (100 and more in a long history), and that doubled the walk (130 against
        310 us on 200 messages). Kept beside the fields it fills; tests/proxy/test_tool_calls.py
        holds what it makes to what ``__init__`` makes (fields, hash, repr)."""
        made = object.__new__(cls)
        fields = made.__dict__
        fields["call_id"] = call_id
        fields["name"], fields["arguments"] = ("", None) if call is None else call
        fields["output"] = output
        fields["is_error"] = is_error
        return made


# -- helpers ---------------------------------------------------------------------------------


def arguments_of(raw: Any) -> Any:
    """Tool arguments as a dict when they are JSON (OpenAI sends a string), else as given."""
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        return value
    return raw


def _str(args: Any, *keys: str) -> str | None:
    if not isinstance(args, Mapping):
        return None
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _int(args: Any, key: str) -> int | None:
    if not isinstance(args, Mapping):
        return None
    value = args.get(key)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _joined(lines: dict[int, str], first: int, last: int) -> str:
    return "".join(lines[n] + "\n" for n in range(first, last + 1))


def _numbered_view(path: str, cwd: str | None, body: str, kind: str = "read") -> Seen | None:
    """A ``cat -n`` style listing as a view; a final empty numbered line is dropped (it is
    how a listing shows the file's last newline, not a line of the file)."""
    listing = parse_cat_n(body)
    if listing is None:
        return None
    last = listing.last
    if last > listing.first and listing.lines[last] == "":
        last -= 1
    elif last == listing.first and listing.lines[last] == "":
        return None
    return Seen(path, cwd, listing.first, last, _joined(listing.lines, listing.first, last), kind)


# -- Claude Code -----------------------------------------------------------------------------

_CC_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>\s*", re.S)


def claude_read(args: Any, output: str, cwd: str | None) -> Seen | None:
    path = _str(args, "file_path")
    if path is None or path.endswith(".ipynb"):
        return None
    body = _CC_REMINDER.sub("\n", output).strip("\n") + "\n"
    # Claude Code numbers as ``N\t`` or ``   N→``; take both.
    body = re.sub(r"^( *\d+)\u2192", r"\1\t", body, flags=re.M)
    return _numbered_view(path, cwd, body)


def _claude(call: ToolCall, cwd: str | None, text_of: TextLookup) -> list[Effect]:
    args = call.arguments
    if call.name == "Read":
        seen = claude_read(args, call.output, cwd)
        return [seen] if seen else []
    if call.name in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
        path = _str(args, "file_path", "notebook_path")
        return [Wrote(path, cwd)] if path else []
    if call.name == "Bash":
        command = _str(args, "command")
        return shell_effects(command, call.output, None, cwd, text_of) if command else []
    if call.name == "Grep":
        search = grep_tool(args, cwd)
        return list(searched(search, call.output, text_of)) if search else []
    return []


# -- Codex -----------------------------------------------------------------------------------

_CODEX_JSON_OUTPUT = re.compile(r'\A\{"output":')


def codex_output(output: str) -> tuple[str, int | None]:
    """The command's own output and exit code, without Codex's preamble."""
    match = CODEX_PREAMBLE.match(output)
    if match:
        code = int(match.group(1)) if match.group(1) is not None else None
        return output[match.end() :], code
    if _CODEX_JSON_OUTPUT.match(output):  # older releases: {"output": ..., "metadata": ...}
        try:
            value = json.loads(output)
        except ValueError:
            return output, None
        meta = value.get("metadata") or {}
        code = meta.get("exit_code")
        return str(value.get("output", "")), code if isinstance(code, int) else None
    return output, None


def shell_command_of(args: Any) -> tuple[str | None, str | None]:
    """(command line, workdir) of Codex's ``exec_command`` / ``shell`` arguments."""
    if not isinstance(args, Mapping):
        return None, None
    workdir = _str(args, "workdir", "cwd")
    command = args.get("cmd", args.get("command"))
    if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        if (
            len(command) >= 3
            and command[0] in ("bash", "sh", "zsh")
            and command[1]
            in (
                "-lc",
                "-c",
            )
        ):
            return command[2], workdir
        return " ".join(command), workdir
    return (command if isinstance(command, str) else None), workdir


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.M)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.M)
_APPLY_PATCH = re.compile(r"\bapply_patch\b")


def apply_patch_targets(patch: str) -> list[str]:
    """Files an ``apply_patch`` envelope (``*** Begin Patch`` …) adds, updates, deletes or
    moves to."""
    found: list[str] = []
    for match in (*_PATCH_FILE.finditer(patch), *_PATCH_MOVE.finditer(patch)):
        if match.group(1) not in found:
            found.append(match.group(1))
    return found


def shell_effects(
    command: str, output: str, returncode: int | None, cwd: str | None, text_of: TextLookup
) -> list[Effect]:
    """The view (at most one) and the writes of one shell command, or, for a search, the
    lines it printed per file."""
    effects: list[Effect] = []
    search = shell_search(command, cwd)
    if search is not None:
        return list(searched(search, output, text_of))
    if _APPLY_PATCH.search(command) and "*** Begin Patch" in command:
        if returncode in (None, 0):
            effects.extend(Wrote(p, cwd) for p in apply_patch_targets(command))
        return effects

    def total_of(path: str, at: str | None) -> int | None:
        text = text_of(path, at)
        return len(plain_lines(text)) if text is not None else None

    try:
        found = analyze(command, output, returncode, cwd, text_of, total_of)
    except Exception:  # an unparseable command line: neither a view nor a known write
        return effects
    for write in found.writes:
        effects.append(Wrote(write.path, write.cwd))
    reads = list(found.reads)
    if not reads and returncode in (None, 0):
        from fresh_ls.toolcalls.filtered_reads import numbered_filter_read

        work = [p for p in parse(command) if p.commands[0].argv[:1] != ["cd"]]
        if len(work) == 1:
            extra = numbered_filter_read(work[0], output, found.cwd_after or cwd)
            if extra is not None:
                reads.append(extra)
    for read in reads[:1]:
        if read.last >= END or not read.lines:
            effects.append(Seen(read.path, read.cwd))
        else:
            effects.append(
                Seen(
                    read.path,
                    read.cwd,
                    read.first,
                    read.last,
                    _joined(read.lines, read.first, read.last),
                )
            )
    return effects


def _codex(call: ToolCall, cwd: str | None, text_of: TextLookup) -> list[Effect]:
    if call.name == "apply_patch":  # the freeform tool: the patch is the whole input
        patch = call.arguments if isinstance(call.arguments, str) else _str(call.arguments, "input")
        if not patch or call.is_error or _failed_patch(call.output):
            return []
        return [Wrote(p, cwd) for p in apply_patch_targets(patch)]
    command, workdir = shell_command_of(call.arguments)
    if command is None:
        return []
    output, code = codex_output(call.output)
    return shell_effects(command, output, code, codex_cwd(workdir, cwd), text_of)


def codex_cwd(workdir: str | None, cwd: str | None) -> str | None:
    """Where a Codex shell call ran: its ``workdir`` (absolute, or under ``cwd``), else ``cwd``."""
    if workdir and workdir.startswith("/"):
        return workdir
    if workdir and cwd:
        return f"{cwd.rstrip('/')}/{workdir}"
    return cwd


def _failed_patch(output: str) -> bool:
    body, code = codex_output(output)
    return code not in (None, 0) or body.lstrip().lower().startswith(("error", "failed"))


# -- Pi --------------------------------------------------------------------------------------

_PI_NOTICE = re.compile(r"\n*\[(?:Showing lines|\d+ more lines|Truncated|Use offset)[^\]]*\]\s*\Z")


def pi_read(args: Any, output: str, cwd: str | None, is_error: bool) -> Seen | None:
    path = _str(args, "path", "file_path")
    if path is None or is_error:
        return None
    offset = _int(args, "offset") or 1
    body = _PI_NOTICE.sub("", output)
    lines = plain_lines(body)
    if not lines:
        return None
    limit = _int(args, "limit")
    if offset == 1 and limit is None and not _PI_NOTICE.search(output):
        return Seen(path, cwd, 1, len(lines), "".join(line + "\n" for line in lines))
    first, last = offset, offset + len(lines) - 1
    return Seen(path, cwd, first, last, "".join(line + "\n" for line in lines))


def _pi(call: ToolCall, cwd: str | None, text_of: TextLookup) -> list[Effect]:
    args = call.arguments
    if call.name == "read":
        seen = pi_read(args, call.output, cwd, call.is_error)
        return [seen] if seen else []
    if call.name in ("edit", "write"):
        path = _str(args, "path", "file_path")
        return [Wrote(path, cwd)] if path and not call.is_error else []
    if call.name == "bash":
        command = _str(args, "command")
        return shell_effects(command, call.output, None, cwd, text_of) if command else []
    return []


# -- OpenHands -------------------------------------------------------------------------------


def _openhands(call: ToolCall, cwd: str | None, text_of: TextLookup) -> list[Effect]:
    args = call.arguments
    if call.name == "execute_bash":
        command = _str(args, "command")
        if command and shell_search(command, cwd) is not None:
            _, body, _ = openhands_envelope(command, call.output)
            return shell_effects(command, body, None, cwd, text_of)
        return shell_effects(command, call.output, None, cwd, text_of) if command else []
    command = _str(args, "command")
    path = _str(args, "path")
    if path is None or command is None or call.is_error:
        return []
    if command == "view":
        header = cat_n_header(call.output)
        body = call.output[header[2] :] if header else call.output
        seen = _numbered_view(path, cwd, body)
        return [seen] if seen else []
    if command in ("str_replace", "insert", "create", "undo_edit"):
        effects: list[Effect] = [Wrote(path, cwd)]
        header = cat_n_header(call.output)
        if header and header[1]:
            snippet = _numbered_view(path, cwd, call.output[header[2] :], "editResult")
            if snippet:
                effects.append(snippet)
        return effects
    return []


# -- dispatch --------------------------------------------------------------------------------

_BY_NAME: dict[str, Callable[[ToolCall, str | None, TextLookup], list[Effect]]] = {
    "Read": _claude,
    "Edit": _claude,
    "MultiEdit": _claude,
    "Write": _claude,
    "NotebookEdit": _claude,
    "Bash": _claude,
    "Grep": _claude,
    "exec_command": _codex,
    "shell": _codex,
    "container.exec": _codex,
    "local_shell": _codex,
    "apply_patch": _codex,
    "read": _pi,
    "edit": _pi,
    "write": _pi,
    "bash": _pi,
    "str_replace_editor": _openhands,
    "execute_bash": _openhands,
}


_SHELLS = frozenset({"Bash", "bash", "execute_bash", "exec_command", "shell", "local_shell"})


def _no_text(path: str, cwd: str | None) -> str | None:
    return None


def recognize(call: ToolCall, cwd: str | None, text_of: TextLookup = _no_text) -> list[Effect]:
    """What ``call`` did: its writes first, then at most one view, then every search's lines
    (one ``Searched`` per file, in order of first appearance). Unknown tools: nothing."""
    handler = _BY_NAME.get(call.name)
    if handler is None:
        return []
    try:
        effects = handler(call, cwd, text_of)
    except Exception:  # a tool result we cannot read is no view, never a failure
        return []
    if call.is_error:  # an editor tool that failed changed nothing; a shell may have
        return [e for e in effects if isinstance(e, Wrote) and call.name in _SHELLS]
    writes = [e for e in effects if isinstance(e, Wrote)]
    views = [e for e in effects if isinstance(e, Seen)]
    searches = [e for e in effects if isinstance(e, Searched)]
    return [*writes, *views[:1], *searches]
