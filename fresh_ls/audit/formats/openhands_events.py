"""OpenHands event histories (``output.jsonl`` records with a ``history`` list).

Every agent action (except the system prompt) came from a model request that carried all
earlier events. Actions made by one response (same ``model_response.id``) share a request. An
``error`` observation with no cause is a model call whose tool call could not be parsed: it
is a request that produced no step. Step ids count every agent action including the system
prompt, as the fixtures' ``steps.jsonl`` does.
"""

from __future__ import annotations

from typing import Any

from fresh_ls.audit.formats import common
from fresh_ls.audit.steps import Step, Transcript, TranscriptError

FORMAT = "openhands-events"
_NOT_REQUESTS = {"system", "change_agent_state", "recall", "condensation", "null"}


def looks_like(data: Any) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        return False
    for event in data["history"][:5]:
        if isinstance(event, list) and len(event) == 2:
            return True
        if isinstance(event, dict) and ("action" in event or "observation" in event):
            return True
    return False


def _events(history: list[Any]) -> list[dict[str, Any]]:
    """Events in order; old histories store ``[action, observation]`` pairs."""
    events: list[dict[str, Any]] = []
    for index, item in enumerate(history):
        if isinstance(item, list) and len(item) == 2:
            action, observation = item
            if isinstance(action, dict):
                action = dict(action, id=action.get("id", f"pair{index}"))
                events.append(action)
                if isinstance(observation, dict) and observation:
                    events.append(dict(observation, cause=action["id"]))
        elif isinstance(item, dict):
            events.append(item)
        else:
            raise TranscriptError(f"history item {index} is {type(item).__name__}")
    return events


def _call_arguments(event: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments the model sent for this action, from its tool-call metadata."""
    meta = common.obj(event.get("tool_call_metadata"))
    call_id = common.ident(meta.get("tool_call_id"))
    if call_id is None:
        return None
    for choice in common.items(common.obj(meta.get("model_response")).get("choices")):
        for call in common.items(common.obj(common.obj(choice).get("message")).get("tool_calls")):
            if isinstance(call, dict) and common.ident(call.get("id")) == call_id:
                return common.parse_arguments(common.obj(call.get("function")).get("arguments"))
    return None


def _step(step_id: int, event: dict[str, Any]) -> Step:
    action = event.get("action")
    args = event.get("args") if isinstance(event.get("args"), dict) else {}
    assert isinstance(args, dict)
    sent = _call_arguments(event)
    if action in ("read", "edit") and (sent or args.get("command") or action == "read"):
        editor_args = dict(sent or args)
        if action == "read" and not editor_args.get("command"):
            editor_args["command"] = "view"
        editor_args.setdefault("path", args.get("path"))
        step = common.editor_step(step_id, editor_args)
        if step.tool != "other":
            return step
    if action == "edit":
        return Step(step_id, "opaque_edit", path=args.get("path"), command="LLM-based edit")
    if action == "write":
        return Step(step_id, "create", path=args.get("path"), file_text=args.get("content"))
    if action == "run":
        return Step(step_id, "bash", command=str(args.get("command", "")))
    return Step(step_id, "other", command=str(action))


def parse(data: Any, run: str, source: str) -> Transcript:
    if not looks_like(data):
        raise TranscriptError("not an OpenHands event history: no 'history' list of events")
    events = _events(common.require_list(data["history"], "'history'"))
    transcript = Transcript(run=run, format=FORMAT, source=source)
    instruction = data.get("instruction")
    if isinstance(instruction, str):
        transcript.roots.extend(common.uploaded_roots(instruction))
    by_event: dict[str, Step] = {}
    last_response: object = None
    for event in events:
        source_of = event.get("source")
        if "action" in event and source_of == "agent":
            step = _step(len(transcript.steps), event)
            transcript.steps.append(step)
            event_id = common.ident(event.get("id"))
            if event_id is not None:
                by_event[event_id] = step
            if str(event.get("action")) in _NOT_REQUESTS:
                continue
            meta = common.obj(event.get("tool_call_metadata"))
            response_id = common.ident(common.obj(meta.get("model_response")).get("id"))
            if response_id is None or response_id != last_response:
                transcript.requests.append(len(transcript.steps) - 1)
                transcript.request_steps.append([])
            transcript.request_steps[-1].append(step.id)
            last_response = response_id
        elif "action" in event and source_of == "user" and not transcript.roots:
            content = (event.get("args") or {}).get("content") or event.get("message") or ""
            transcript.roots.extend(common.uploaded_roots(common.text_of(content)))
        elif "observation" in event:
            caused = by_event.get(common.ident(event.get("cause")) or "")
            if caused is None:
                if event.get("observation") == "error" and source_of == "agent":
                    transcript.requests.append(len(transcript.steps))
                    transcript.request_steps.append([])
                    last_response = None
                continue
            _observe(caused, event)
    transcript.roots.append("/testbed")
    transcript.cwd = transcript.roots[0]
    return transcript


def _observe(step: Step, event: dict[str, Any]) -> None:
    step.observation = common.text_of(event.get("content"))
    extras = event.get("extras") if isinstance(event.get("extras"), dict) else {}
    assert isinstance(extras, dict)
    if step.tool == "bash":
        meta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        step.exit_code = common.as_int(meta.get("exit_code", extras.get("exit_code")))
        step.cwd_after = meta.get("working_dir") or None
        suffix = meta.get("suffix")
        if isinstance(suffix, str) and suffix and step.observation.endswith(suffix):
            step.observation = step.observation[: -len(suffix)]
    diff = extras.get("diff")
    if isinstance(diff, str):
        step.diff = diff
