"""OpenHands LLM completion logs (``llm_completions/<instance>/*.json``).

Each file is one model request: ``messages`` is what was sent, ``response`` what came back.
One file alone (often the last of a run, holding the whole conversation) is turned into the
sequence of requests that produced it: the request behind assistant message ``i`` carried every
message before it, and the file's own request carried them all. A directory of such files is
audited file by file elsewhere (``loader``), because each file is exactly one request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fresh_ls.audit.formats.common import (
    clean_openhands_bash,
    editor_step,
    ident,
    items,
    obj,
    parse_arguments,
    require_list,
    text_of,
    uploaded_roots,
)
from fresh_ls.audit.steps import Step, Transcript, TranscriptError

FORMAT = "openhands-completion"


def looks_like(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("messages"), list)
        and ("response" in data or "kwargs" in data or "fncall_messages" in data)
    )


def _tool_call_step(step_id: int, call: dict[str, Any]) -> Step:
    function = obj(call.get("function"))
    name = function.get("name", "")
    args = parse_arguments(function.get("arguments"))
    if name == "str_replace_editor":
        return editor_step(step_id, args)
    if name in ("execute_bash", "bash"):
        return Step(step_id, "bash", command=str(args.get("command", "")))
    if name == "edit_file" and isinstance(args.get("path"), str):
        return Step(step_id, "opaque_edit", path=args["path"], command=name)
    return Step(step_id, "other", command=name)


def parse(
    data: Any,
    run: str,
    source: str,
    step_id: Callable[[str | None, int], int] | None = None,
) -> Transcript:
    """The requests and steps of one completion log.

    ``step_id(tool_call_id, position)`` lets a caller auditing several log files of one run
    give the same tool call the same id in every file.
    """
    if not looks_like(data):
        raise TranscriptError("not an OpenHands completion log: no 'messages' with 'response'")
    messages = require_list(data["messages"], "'messages'")
    transcript = Transcript(run=run, format=FORMAT, source=source)
    by_call: dict[str, Step] = {}

    def new_step(call: dict[str, Any]) -> Step:
        position = len(transcript.steps)
        call_id = ident(call.get("id"))
        number = step_id(call_id, position) if step_id else position
        step = _tool_call_step(number, call)
        transcript.steps.append(step)
        if call_id is not None:
            by_call[call_id] = step
        return step

    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TranscriptError(f"message {index} is {type(message).__name__}, not an object")
        role = message.get("role")
        if role == "user" and not transcript.roots:
            transcript.roots.extend(uploaded_roots(text_of(message.get("content"))))
        if role == "assistant":
            transcript.requests.append(len(transcript.steps))
            calls = items(message.get("tool_calls"))
            made = [new_step(c) for c in calls if isinstance(c, dict)]
            transcript.request_steps.append([s.id for s in made])
        elif role == "tool":
            step = by_call.get(ident(message.get("tool_call_id")) or "")
            if step is not None:
                _observe(step, text_of(message.get("content")))
    transcript.requests.append(len(transcript.steps))
    final: list[int] = []
    for choice in items(obj(data.get("response")).get("choices"))[:1]:
        for call in items(obj(obj(choice).get("message")).get("tool_calls")):
            if isinstance(call, dict):
                final.append(new_step(call).id)
    transcript.request_steps.append(final)
    transcript.roots.append("/testbed")
    transcript.cwd = transcript.roots[0]
    if not any(s.tool != "other" for s in transcript.steps) and len(messages) > 2:
        transcript.notes.append("no str_replace_editor or bash tool calls found")
    return transcript


def _observe(step: Step, content: str) -> None:
    if step.tool == "bash":
        output, exit_code, cwd = clean_openhands_bash(step.command or "", content)
        step.observation, step.exit_code, step.cwd_after = output, exit_code, cwd
    else:
        step.observation = content
