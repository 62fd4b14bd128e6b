"""mini-swe-agent trajectories (``*.traj.json``): bash is the only tool.

Every assistant message is one model request that carried all earlier messages; its action
is a bash command, found in ``extra.actions`` (1.x), in a ``bash`` tool call, or in the single
```` ```bash ```` block of the message text (0.x). The reply to it holds
``<returncode>N</returncode>`` and ``<output>...</output>``. Each command runs in a fresh
shell in the repository root, so a ``cd`` never carries over.
"""

from __future__ import annotations

import re
from typing import Any

from fresh_ls.audit.formats.common import (
    as_int,
    ident,
    obj,
    parse_arguments,
    require_list,
    text_of,
)
from fresh_ls.audit.steps import Step, Transcript, TranscriptError

FORMAT = "mini-swe-agent"
_BASH_BLOCK = re.compile(r"```(?:bash|sh)\s*\n(.*?)\n```", re.S)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)</output>", re.S)
_OUTPUT_HEAD = re.compile(r"<output_head>\n?(.*?)</output_head>", re.S)


def looks_like(data: Any) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return False
    if str(data.get("trajectory_format", "")).startswith("mini-swe-agent"):
        return True
    return any(
        isinstance(m, dict)
        and m.get("role") == "assistant"
        and _BASH_BLOCK.search(text_of(m.get("content")))
        for m in data["messages"]
    )


def _commands(message: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(command, tool_call_id) of one assistant message."""
    extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
    assert isinstance(extra, dict)
    actions = extra.get("actions")
    if isinstance(actions, list) and actions:
        return [
            (str(a.get("command", "")), ident(a.get("tool_call_id")))
            for a in actions
            if isinstance(a, dict)
        ]
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        found = []
        for call in calls:
            if isinstance(call, dict):
                args = parse_arguments(obj(call.get("function")).get("arguments"))
                found.append((str(args.get("command", "")), ident(call.get("id"))))
        return found
    blocks = _BASH_BLOCK.findall(text_of(message.get("content")))
    return [(blocks[0], None)] if len(blocks) == 1 else []


def split_result(text: str) -> tuple[str, int | None]:
    """The output and return code of one command's reply."""
    code = _RETURNCODE.search(text)
    output = _OUTPUT.search(text)
    if output is None:
        output = _OUTPUT_HEAD.search(text)  # a long output, cut by the agent
        body = output.group(1) + "<response clipped>" if output else ""
    else:
        body = output.group(1)
    return body, as_int(code.group(1)) if code else None


def parse(data: Any, run: str, source: str) -> Transcript:
    if not looks_like(data):
        raise TranscriptError("not a mini-swe-agent trajectory: no bash actions in 'messages'")
    messages = require_list(data["messages"], "'messages'")
    transcript = Transcript(run=run, format=FORMAT, source=source, persistent_shell=False)
    by_call: dict[str, Step] = {}
    waiting: list[Step] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TranscriptError(f"message {index} is {type(message).__name__}, not an object")
        role = message.get("role")
        if role == "assistant":
            transcript.requests.append(len(transcript.steps))
            made = []
            for command, call_id in _commands(message):
                step = Step(len(transcript.steps), "bash", command=command)
                transcript.steps.append(step)
                made.append(step.id)
                if isinstance(call_id, str):
                    by_call[call_id] = step
                else:
                    waiting.append(step)
            transcript.request_steps.append(made)
        elif role in ("tool", "user") and index > 1:
            answered = by_call.pop(ident(message.get("tool_call_id")) or "", None)
            if answered is None and waiting:
                answered = waiting.pop(0)
            if answered is not None:
                result = split_result(text_of(message.get("content")))
                answered.observation, answered.exit_code = result
    cwd = _configured_cwd(data) or "/testbed"
    transcript.roots.extend([cwd, "/testbed"])
    transcript.cwd = cwd
    return transcript


def _configured_cwd(data: dict[str, Any]) -> str | None:
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    assert isinstance(info, dict)
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    assert isinstance(config, dict)
    environment = config.get("environment") if isinstance(config.get("environment"), dict) else {}
    assert isinstance(environment, dict)
    cwd = environment.get("cwd")
    return cwd if isinstance(cwd, str) and cwd.startswith("/") else None
