"""Pi session files (``~/.pi/agent/sessions/<--cwd-->/<time>_<id>.jsonl``).

One JSON record per line: a ``session`` header (with ``cwd``), then ``message`` records whose
``message.role`` is ``user``, ``assistant`` (one per model response: it is one request, which
carried every tool result before it) or ``toolResult``. Tool calls are the assistant's
``toolCall`` blocks: ``read`` (raw text, read by ``fresh_ls.toolcalls.agents``, the proxy's
reader), ``edit`` (its result's ``details.diff`` numbers every changed line, so the edit is
placed exactly), ``write`` and ``bash`` (a fresh shell in the session's directory).
"""

from __future__ import annotations

import re
from typing import Any

from fresh_ls.audit.formats.common import CallLog, RecordedCall, items, obj, text_of
from fresh_ls.audit.steps import Step, Transcript, TranscriptError
from fresh_ls.toolcalls.agents import Seen, ToolCall, recognize

FORMAT = "pi"
_DIFF_LINE = re.compile(r"^([-+ ])\s*(\d+) (.*)$")
_MORE = re.compile(r"\[(?:\d+ more lines|Showing lines|Truncated|Use offset)")


def looks_like(records: Any) -> bool:
    """A Pi session opens with a ``session`` record and holds ``message`` records."""
    if not isinstance(records, list) or not records:
        return False
    head = records[0]
    return (
        isinstance(head, dict)
        and head.get("type") == "session"
        and any(isinstance(r, dict) and r.get("type") == "message" for r in records[:200])
    )


def diff_as_patch(path: str, diff: str) -> str | None:
    """Pi's edit diff (``-N old``, ``+N new``, `` N context`` lines, ``...`` between) as a
    unified diff, hunk by hunk; None when a line is not in that shape."""
    hunks: list[tuple[int, int, list[str], list[str]]] = []  # old and new start, texts
    removed: list[tuple[int, str]] = []
    added: list[tuple[int, str]] = []
    delta = 0  # new numbering minus old, above the current hunk

    def flush() -> None:
        nonlocal delta, removed, added
        if removed or added:
            start = removed[0][0] if removed else added[0][0] - delta
            new_start = added[0][0] if added else start + delta
            hunks.append((start, new_start, [t for _, t in removed], [t for _, t in added]))
            delta += len(added) - len(removed)
        removed, added = [], []

    for line in diff.split("\n"):
        if not line.strip() or line.strip() == "...":
            flush()
            continue
        match = _DIFF_LINE.match(line)
        if match is None:
            return None
        sign, number, text = match.group(1), int(match.group(2)), match.group(3)
        if sign == "-":
            removed.append((number, text))
        elif sign == "+":
            added.append((number, text))
        else:
            flush()
    flush()
    if not hunks:
        return None
    out = [f"--- {path}", f"+++ {path}"]
    for start, new_start, old, new in hunks:
        old_start = start if old else start - 1  # an insertion goes after line start - 1
        out.append(f"@@ -{old_start},{len(old)} +{new_start},{len(new)} @@")
        out.extend("-" + t for t in old)
        out.extend("+" + t for t in new)
    return "\n".join(out) + "\n"


def _step(step_id: int, call: RecordedCall, cwd: str | None) -> Step:
    args, output = call.args, call.output
    path = args.get("path") or args.get("file_path")
    path = str(path) if isinstance(path, str) and path else None
    step: Step
    if call.name == "read":
        seen = [
            e
            for e in recognize(ToolCall(call.call_id, "read", args, output, call.is_error), cwd)
            if isinstance(e, Seen)
        ]
        if seen and seen[0].first is not None and seen[0].last is not None:
            view = seen[0]
            whole = "offset" not in args and "limit" not in args and not _MORE.search(output)
            step = Step(step_id, "seen", path=view.path, start=view.first, end=view.last)
            step.file_text, step.whole = view.text, whole
        else:
            step = Step(step_id, "other", command="read")
    elif call.name == "edit" and path:
        diff = call.recorded.get("diff")
        patch = diff_as_patch(path, diff) if isinstance(diff, str) else None
        edits = [obj(e) for e in items(args.get("edits"))]
        if not edits and isinstance(args.get("oldText"), str):
            edits = [args]
        if patch is not None:
            step = Step(step_id, "patch", path=path, diff=patch)
        elif len(edits) == 1 and isinstance(edits[0].get("oldText"), str):
            step = Step(step_id, "str_replace", path=path, old_str=edits[0]["oldText"])
            step.new_str = str(edits[0].get("newText") or "")
        else:
            step = Step(step_id, "opaque_edit", path=path)
    elif call.name == "write" and path and isinstance(args.get("content"), str):
        step = Step(step_id, "create", path=path, file_text=args["content"])
    elif call.name == "bash" and isinstance(args.get("command"), str):
        step = Step(step_id, "bash", command=args["command"])
        step.exit_code = 1 if call.is_error else 0
    else:
        step = Step(step_id, "other")
    step.command = step.command or call.name
    step.observation = output
    step.failed = call.is_error and step.tool != "bash"
    return step


def parse(data: Any, run: str, source: str) -> Transcript:
    if not looks_like(data):
        raise TranscriptError("not a Pi session: no session header and message records")
    transcript = Transcript(run=run, format=FORMAT, source=source, persistent_shell=False)
    cwd = data[0].get("cwd") if isinstance(data[0].get("cwd"), str) else None
    if cwd:
        transcript.roots.append(cwd)
        transcript.cwd = cwd
    log = CallLog()
    for record in data:
        if not isinstance(record, dict) or record.get("type") != "message":
            continue
        message = obj(record.get("message"))
        role = message.get("role")
        if role == "assistant":
            transcript.requests.append(len(log.calls))
            asked = log.response(message.get("content"), "toolCall", "arguments")
            transcript.request_steps.append(asked)
        elif role == "toolResult":
            answered = log.answered(message.get("toolCallId"))
            if answered is not None:
                answered.output = text_of(message.get("content"))
                answered.is_error = message.get("isError") is True
                answered.recorded = obj(message.get("details"))
    transcript.steps = [_step(i, call, cwd) for i, call in enumerate(log.calls)]
    return transcript
