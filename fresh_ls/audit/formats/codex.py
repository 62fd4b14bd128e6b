"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

One JSON record per line, ``{"timestamp", "type", "payload"}``. ``session_meta`` and
``turn_context`` give the working directory; ``response_item`` records are the conversation
items as the Responses API carries them. A model request is rebuilt from the items it
produced: a run of output items (``reasoning``, an assistant ``message``, ``function_call``,
``custom_tool_call``, ``local_shell_call``) after any input item (a user message, a tool
call's output) is one response, and its request carried every item before it.

Shell calls (``exec_command``, ``shell``, ``local_shell_call``) are shell steps: each runs in a
fresh shell in the turn's directory (or its ``workdir``); their output loses Codex's
``Chunk ID … Output:`` preamble (read by ``fresh_ls.toolcalls.agents``, the proxy's reader).
``apply_patch`` (the freeform tool, a function, or a heredoc through the shell) is placed on
lines from the ``FileChange`` item Codex records when it applied the patch (a unified diff
with line numbers per file); without one, its files count as edited where lines are unknown.
"""

from __future__ import annotations

import re
from typing import Any

from fresh_ls.audit.formats.common import ident, obj
from fresh_ls.audit.steps import Step, Transcript, TranscriptError
from fresh_ls.toolcalls.agents import (
    apply_patch_targets,
    arguments_of,
    codex_cwd,
    codex_output,
    shell_command_of,
)

FORMAT = "codex"
_OUTPUTS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call"}
_RESULTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
_SHELLS = {"exec_command", "shell", "container.exec", "local_shell"}
_EXIT = re.compile(r"\A(?:Exit code: (-?\d+)\n)?(?:Wall time: [^\n]*\n)?Output:\n")


def looks_like(records: Any) -> bool:
    """A Codex rollout opens with ``session_meta`` and holds ``response_item`` records."""
    if not isinstance(records, list):
        return False
    kinds = {r.get("type") for r in records[:200] if isinstance(r, dict)}
    return "response_item" in kinds and ("session_meta" in kinds or "turn_context" in kinds)


class _Call:
    def __init__(self, call_id: str, name: str, args: Any, cwd: str | None) -> None:
        self.call_id = call_id
        self.name = name
        self.args = args
        self.cwd = cwd
        self.output = ""
        self.changes: dict[str, Any] | None = None  # from the FileChange item


def _output_text(payload: dict[str, Any]) -> str:
    output = payload.get("output")
    if isinstance(output, dict):  # {"content": ..., "success": ...}
        output = output.get("content", output.get("output", ""))
    if isinstance(output, list):
        return "".join(
            str(obj(p).get("text", "")) if isinstance(p, dict) else str(p) for p in output
        )
    return output if isinstance(output, str) else ""


def _patch_step(step_id: int, call: _Call, patch: str) -> Step:
    """One ``apply_patch``: the recorded per-file diffs, else its files with unknown lines."""
    code, body = None, call.output
    match = _EXIT.match(call.output)
    if match:
        code = int(match.group(1)) if match.group(1) is not None else None
        body = call.output[match.end() :]
    else:
        body, code = codex_output(call.output)
    failed = (code not in (None, 0)) or body.lstrip().lower().startswith(("error", "failed"))
    step = Step(step_id, "patch", command="apply_patch", observation=body, cwd=call.cwd)
    step.failed = failed
    diffs: list[str] = []
    unplaced: list[str] = []
    deleted: list[str] = []
    if call.changes is not None:
        for path, change in call.changes.items():
            change = _change(change)
            kind = change.get("type")
            diff = change.get("unified_diff")
            if kind == "update" and isinstance(diff, str) and not change.get("move_path"):
                diffs.append(f"--- {path}\n+++ {path}\n{diff}")
            elif kind == "add" and isinstance(change.get("content"), str):
                lines = change["content"].split("\n")
                if lines and lines[-1] == "":
                    lines.pop()
                body_lines = "".join(f"+{line}\n" for line in lines)
                diffs.append(f"--- /dev/null\n+++ {path}\n@@ -0,0 +1,{len(lines)} @@\n{body_lines}")
            elif kind == "delete":
                deleted.append(str(path))
            else:
                unplaced.append(str(path))
                if change.get("move_path"):
                    deleted.append(str(path))
                    unplaced.append(str(change["move_path"]))
    else:
        unplaced = apply_patch_targets(patch)
    step.diff = "".join(d if d.endswith("\n") else d + "\n" for d in diffs)
    step.args = {"unplaced": unplaced, "deleted": deleted}
    return step


def _change(raw: Any) -> dict[str, Any]:
    """One file's change as ``{"type": ..., ...}``: older releases record it as
    ``{"update": {...}}`` / ``{"add": {...}}`` / ``{"delete": {...}}``."""
    change = obj(raw)
    if "type" not in change and len(change) == 1:
        ((kind, body),) = change.items()
        if kind in ("add", "update", "delete"):
            return {"type": kind, **obj(body)}
    return change


def _step(step_id: int, call: _Call) -> Step:
    if call.name == "apply_patch":
        patch = call.args if isinstance(call.args, str) else obj(call.args).get("input")
        return _patch_step(step_id, call, patch if isinstance(patch, str) else "")
    if call.name in _SHELLS:
        command, workdir = shell_command_of(call.args)
        if command is None:
            return Step(step_id, "other", command=call.name, observation=call.output)
        cwd = codex_cwd(workdir, call.cwd)
        if "apply_patch" in command and "*** Begin Patch" in command:
            call.cwd = cwd
            return _patch_step(step_id, call, command)
        output, code = codex_output(call.output)
        return Step(step_id, "bash", command=command, observation=output, exit_code=code, cwd=cwd)
    return Step(step_id, "other", command=call.name, observation=call.output)


def _local_shell_args(payload: dict[str, Any]) -> dict[str, Any]:
    action = obj(payload.get("action"))
    return {"command": action.get("command"), "workdir": action.get("working_directory")}


def parse(data: Any, run: str, source: str) -> Transcript:
    if not looks_like(data):
        raise TranscriptError("not a Codex rollout: no session_meta and response_item records")
    transcript = Transcript(run=run, format=FORMAT, source=source, persistent_shell=False)
    calls: list[_Call] = []
    by_id: dict[str, _Call] = {}
    changes: dict[str, dict[str, Any]] = {}
    in_response = False
    cwd: str | None = None
    for record in data:
        if not isinstance(record, dict):
            continue
        kind, payload = record.get("type"), obj(record.get("payload"))
        if kind in ("session_meta", "turn_context"):
            where = payload.get("cwd")
            if isinstance(where, str) and where.startswith("/"):
                cwd = where
                if cwd not in transcript.roots:
                    transcript.roots.append(cwd)
            continue
        if kind == "event_msg":
            item = obj(payload.get("item"))
            if item.get("type") == "FileChange" and ident(item.get("id")):
                changes[str(item["id"])] = obj(item.get("changes"))
            elif (
                payload.get("type") in ("patch_apply_begin", "patch_apply_end")
                and ident(payload.get("call_id"))
                and isinstance(payload.get("changes"), dict)
            ):
                changes[str(payload["call_id"])] = payload["changes"]
            continue
        if kind != "response_item":
            continue
        item_type = payload.get("type")
        output_item = item_type in _OUTPUTS or (
            item_type == "message" and payload.get("role") == "assistant"
        )
        if output_item:
            if not in_response:
                transcript.requests.append(len(calls))
                transcript.request_steps.append([])
                in_response = True
            if item_type in ("function_call", "custom_tool_call", "local_shell_call"):
                call_id = ident(payload.get("call_id")) or ident(payload.get("id"))
                args: Any
                if item_type == "local_shell_call":
                    name, args = "local_shell", _local_shell_args(payload)
                elif item_type == "custom_tool_call":
                    name, args = str(payload.get("name") or ""), payload.get("input")
                else:
                    name = str(payload.get("name") or "")
                    args = arguments_of(payload.get("arguments"))
                call = _Call(call_id or f"#{len(calls)}", name, args, cwd)
                by_id[call.call_id] = call
                transcript.request_steps[-1].append(len(calls))
                calls.append(call)
            continue
        in_response = False  # an input item (a tool output, a user turn) ends the response
        if item_type in _RESULTS:
            answered = by_id.get(ident(payload.get("call_id")) or "")
            if answered is not None:
                answered.output = _output_text(payload)
    for call in calls:
        call.changes = changes.get(call.call_id)
    transcript.steps = [_step(i, call) for i, call in enumerate(calls)]
    transcript.cwd = transcript.roots[0] if transcript.roots else None
    return transcript
