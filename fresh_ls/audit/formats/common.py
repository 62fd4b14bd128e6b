"""Pieces shared by the format parsers: editor-tool arguments and message text.

OpenHands and SWE-agent 1.x expose the same ``str_replace_editor`` tool (view, create,
str_replace, insert, undo_edit), so its arguments map onto a ``Step`` in one place.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from fresh_ls.audit.steps import Step, TranscriptError

_EDITOR_TOOLS = {"view", "create", "str_replace", "insert", "undo_edit"}
_UPLOADED = re.compile(r"<uploaded_files>\s*(/\S+?)\s*</uploaded_files>")


@dataclass
class RecordedCall:
    """One tool call of a session file and, once its result is read, what came back:
    the text the model saw, whether it was an error, and the agent's own record of it
    (Claude Code's ``toolUseResult``, Pi's ``details``), where the line-numbered diffs are."""

    call_id: str
    name: str
    args: dict[str, Any]
    output: str = ""
    is_error: bool = False
    recorded: dict[str, Any] = field(default_factory=dict)
    cwd: str | None = None


@dataclass
class CallLog:
    """The tool calls of a session file in order, by id, and which response asked each:
    what the Claude Code and Pi parsers both build from their assistant messages."""

    calls: list[RecordedCall] = field(default_factory=list)
    by_id: dict[str, RecordedCall] = field(default_factory=dict)

    def response(self, content: Any, block_type: str, args_key: str) -> list[int]:
        """Record the tool calls of one response (its ``content`` blocks of ``block_type``,
        arguments under ``args_key``); the indexes of the calls it made."""
        asked: list[int] = []
        for block in items(content):
            block = obj(block)
            if block.get("type") != block_type:
                continue
            call = RecordedCall(
                ident(block.get("id")) or f"#{len(self.calls)}",
                str(block.get("name") or ""),
                obj(block.get(args_key)),
            )
            self.by_id[call.call_id] = call
            asked.append(len(self.calls))
            self.calls.append(call)
        return asked

    def answered(self, call_id: Any) -> RecordedCall | None:
        return self.by_id.get(ident(call_id) or "")


def text_of(content: Any) -> str:
    """The text of a chat message's ``content`` (a string or a list of typed parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type", "text") == "text":
                    parts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return str(content)


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: odd nested shapes read as absent."""
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def ident(value: Any) -> str | None:
    """An id usable as a dictionary key (event and tool-call ids are strings or numbers)."""
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def editor_step(step_id: int, args: dict[str, Any]) -> Step:
    """A ``Step`` for one ``str_replace_editor`` call."""
    command = str(args.get("command") or "")
    tool = command if command in _EDITOR_TOOLS else "other"
    view_range = args.get("view_range")
    if isinstance(view_range, str):
        try:
            view_range = json.loads(view_range)
        except ValueError:
            view_range = None
    if not (isinstance(view_range, list) and all(isinstance(v, int) for v in view_range)):
        view_range = None
    return Step(
        id=step_id,
        tool=tool,  # type: ignore[arg-type]
        path=str(args["path"]) if args.get("path") else None,
        view_range=view_range,
        old_str=args.get("old_str") if isinstance(args.get("old_str"), str) else None,
        new_str=args.get("new_str") if isinstance(args.get("new_str"), str) else None,
        insert_line=as_int(args.get("insert_line")),
        file_text=args.get("file_text") if isinstance(args.get("file_text"), str) else None,
        command=command,
    )


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments, which formats store as a JSON string or as an object."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def uploaded_roots(text: str) -> list[str]:
    """Repository roots named in an OpenHands task prompt (``<uploaded_files>``)."""
    return [m.group(1).rstrip("/") for m in _UPLOADED.finditer(text)]


def require_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise TranscriptError(f"{what} is {type(value).__name__}, expected a list")
    return value


_OH_EXIT = re.compile(
    r"\[(?:Command finished with exit code|The command completed with exit code) (-?\d+)\.?\]"
)
_OH_PROMPT = re.compile(r"^[\w.-]+@[\w.-]+:(/[^\n]*?) ?[#$] *$", re.M)
_OH_CWD = re.compile(r"\[Current working directory: (/[^\]\n]+)\]")
_OH_NOISE = re.compile(
    r"\[Python [Ii]nterpreter: [^\]\n]*\]|\[Command finished with exit code -?\d+\]|"
    r"\[The command completed with exit code -?\d+\.\]|\[Current working directory: [^\]\n]*\]"
)


def clean_openhands_bash(command: str, output: str) -> tuple[str, int | None, str | None]:
    """Output, exit code and working directory of an OpenHands ``execute_bash`` result.

    OpenHands wraps the real output: the command echoed first (0.1x), the shell prompt with
    the working directory, and an exit-code line. Shell reads need the bare output, so that
    line counts match the file.
    """
    text = output.replace("\r\n", "\n")
    exit_match = _OH_EXIT.search(text)
    exit_code = int(exit_match.group(1)) if exit_match else None
    cwd = None
    prompts = list(_OH_PROMPT.finditer(text))
    if prompts:
        cwd = prompts[-1].group(1).strip()
        text = text[: prompts[-1].start()]
    cwd_match = _OH_CWD.search(text)
    if cwd_match:
        cwd = cwd_match.group(1).strip()
    text = _OH_NOISE.sub("", text)
    if text.startswith(command + "\n"):
        text = text[len(command) + 1 :]
    elif command and text.startswith(command.split("\n")[0] + "\n"):
        text = text[len(command.split("\n")[0]) + 1 :]
    text = text.rstrip("\n")
    return (text + "\n" if text else ""), exit_code, cwd
