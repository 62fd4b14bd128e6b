"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON record per line; the conversation is in the ``user`` and ``assistant`` records
(``message`` holds what went to or came from the model), among bookkeeping records
(attachments, queue operations, summaries) that are skipped. Claude Code writes one
``assistant`` record per content block of a response, all with the same ``message.id``: a new
id is a new model request, which carried every tool result recorded before it. Its Bash tool
keeps one shell, so a ``cd`` carries over. Synthetic
assistant records (``model: "<synthetic>"``, written when no request was made) and, in a file
that also holds the main conversation, sub-agent records (``isSidechain``) are not requests.

Tool calls are ``tool_use`` blocks; their results are ``tool_result`` blocks of the next
``user`` records, with ``toolUseResult`` beside them holding what the tool recorded itself
(Read: the file's text and length; Edit/MultiEdit/Write: the file before the call and a
``structuredPatch`` with line numbers). Views are read by ``fresh_ls.toolcalls.agents`` (the
proxy's own reader), so the audit and the proxy agree on what a Read showed.
"""

from __future__ import annotations

from typing import Any

from fresh_ls.audit.formats.common import (
    CallLog,
    RecordedCall,
    as_int,
    ident,
    items,
    obj,
    text_of,
)
from fresh_ls.audit.steps import Step, Transcript, TranscriptError
from fresh_ls.toolcalls.agents import Seen, ToolCall, recognize

FORMAT = "claude-code"
_MESSAGE_TYPES = ("user", "assistant")
_EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")


def looks_like(records: Any) -> bool:
    """Records of a Claude Code session: messages with a ``sessionId`` and a ``uuid``."""
    if not isinstance(records, list):
        return False
    return any(
        isinstance(r, dict)
        and r.get("type") in _MESSAGE_TYPES
        and "sessionId" in r
        and "uuid" in r
        and isinstance(r.get("message"), dict)
        for r in records[:200]
    )


def _result_text(block: dict[str, Any]) -> str:
    return text_of(block.get("content"))


def _patch_text(path: str, hunks: list[Any]) -> str | None:
    """A unified diff of one file from Claude Code's ``structuredPatch`` hunks."""
    out = [f"--- {path}", f"+++ {path}"]
    for hunk in hunks:
        hunk = obj(hunk)
        old_start, old_lines = as_int(hunk.get("oldStart")), as_int(hunk.get("oldLines"))
        new_start, new_lines = as_int(hunk.get("newStart")), as_int(hunk.get("newLines"))
        if None in (old_start, old_lines, new_start, new_lines):
            return None
        out.append(f"@@ -{old_start},{old_lines} +{new_start},{new_lines} @@")
        out.extend(str(line) for line in items(hunk.get("lines")))
    return "\n".join(out) + "\n"


def _read_step(step_id: int, call: RecordedCall) -> Step:
    seen = [
        e
        for e in recognize(ToolCall(call.call_id, "Read", call.args, call.output), call.cwd)
        if isinstance(e, Seen)
    ]
    if not seen or seen[0].first is None or seen[0].last is None or seen[0].text is None:
        return Step(step_id, "other", command="Read", observation=call.output)
    view = seen[0]
    recorded = obj(call.recorded.get("file"))
    total, shown = as_int(recorded.get("totalLines")), as_int(recorded.get("numLines"))
    if total is not None and shown is not None:
        whole = view.first == 1 and shown >= total
    else:
        whole = view.first == 1 and "offset" not in call.args and "limit" not in call.args
    return Step(
        step_id,
        "seen",
        path=view.path,
        start=view.first,
        end=view.last,
        file_text=view.text,
        whole=whole,
        command="Read",
        observation=call.output,
    )


def _edit_step(step_id: int, call: RecordedCall) -> Step:
    path = call.args.get("file_path") or call.args.get("notebook_path")
    path = str(path) if path else None
    recorded = call.recorded
    before = recorded.get("originalFile") if isinstance(recorded.get("originalFile"), str) else None
    common: dict[str, Any] = {"path": path, "command": call.name, "observation": call.output}
    hunks = items(recorded.get("structuredPatch"))
    if path and call.name != "NotebookEdit" and (hunks or recorded.get("type") == "update"):
        diff = _patch_text(path, hunks)
        if diff is not None:
            return Step(step_id, "patch", diff=diff, before=before, **common)
    if call.name == "Write" and isinstance(call.args.get("content"), str):
        return Step(step_id, "create", file_text=call.args["content"], before=before, **common)
    if call.name == "Edit" and not call.args.get("replace_all"):
        old, new = call.args.get("old_string"), call.args.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return Step(step_id, "str_replace", old_str=old, new_str=new, before=before, **common)
    return Step(step_id, "opaque_edit", **common)


def _step(step_id: int, call: RecordedCall) -> Step:
    failed = call.is_error
    if call.name == "Read":
        step = _read_step(step_id, call)
    elif call.name in _EDIT_TOOLS:
        step = _edit_step(step_id, call)
    elif call.name == "Bash" and isinstance(call.args.get("command"), str):
        output, code = call.output, None
        if failed and output.startswith("Exit code "):
            first, _, output = output.partition("\n")
            code = as_int(first.removeprefix("Exit code ").strip())
        step = Step(step_id, "bash", command=call.args["command"], observation=output)
        step.exit_code = code if code is not None else (1 if failed else 0)
        failed = False  # a failed shell call may still have written (its exit code says)
    elif call.name == "Grep":
        step = Step(step_id, "grep_tool", args=call.args, observation=call.output, command="Grep")
    else:
        step = Step(step_id, "other", command=call.name, observation=call.output)
    step.failed = failed
    return step


def parse(data: Any, run: str, source: str) -> Transcript:
    if not looks_like(data):
        raise TranscriptError("not a Claude Code session: no user/assistant message records")
    records = [r for r in data if isinstance(r, dict) and r.get("type") in _MESSAGE_TYPES]
    if any(not r.get("isSidechain") for r in records):
        records = [r for r in records if not r.get("isSidechain")]
    transcript = Transcript(run=run, format=FORMAT, source=source)
    log = CallLog()
    responses: set[str] = set()
    cwd: str | None = None
    for record in records:
        message = obj(record.get("message"))
        if isinstance(record.get("cwd"), str) and record["cwd"].startswith("/"):
            cwd = record["cwd"]
            if cwd not in transcript.roots:
                transcript.roots.append(cwd)
        if record["type"] == "assistant":
            if message.get("model") == "<synthetic>":
                continue
            message_id = ident(message.get("id")) or ident(record.get("requestRef"))
            # Tool results of a streamed response may be recorded before its last block.
            if message_id is None or message_id not in responses:
                responses.add(message_id or f"#{len(responses)}")
                transcript.requests.append(len(log.calls))
                transcript.request_steps.append([])
            asked = log.response(message.get("content"), "tool_use", "input")
            for i in asked:
                log.calls[i].cwd = cwd
            transcript.request_steps[-1].extend(asked)
            continue
        recorded = obj(record.get("toolUseResult"))
        for block in items(message.get("content")):
            block = obj(block)
            if block.get("type") != "tool_result":
                continue
            answered = log.answered(block.get("tool_use_id"))
            if answered is None:
                continue
            answered.output = _result_text(block)
            answered.is_error = block.get("is_error") is True
            answered.recorded = recorded
    transcript.steps = [_step(i, call) for i, call in enumerate(log.calls)]
    transcript.cwd = transcript.roots[0] if transcript.roots else None
    return transcript
