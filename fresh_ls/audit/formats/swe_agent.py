"""SWE-agent trajectories (``*.traj``), both generations.

0.x drives a windowed editor: ``open FILE [LINE]``, ``goto N``, ``scroll_up``/``scroll_down``
print a window of numbered lines (a view), ``edit N:M`` + text + ``end_of_edit`` replaces lines
N..M of the open file and prints a window of the result (an edit-result view). 1.x uses the
``str_replace_editor`` tool with shell-style arguments. Each trajectory entry is one model
request followed by its action; the request carried every earlier observation.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from fresh_ls.audit.formats.common import as_int, editor_step, require_list, text_of
from fresh_ls.audit.steps import Step, Transcript, TranscriptError

FORMAT = "swe-agent-traj"
_WINDOW_COMMANDS = {"open", "goto", "scroll_up", "scroll_down"}
_NOT_SHELL = {"submit", "find_file", "search_dir", "search_file", "filemap", "exit_forfeit"}
_EDIT = re.compile(r"^edit\s+(\d+)\s*:\s*(\d+)\s*\n?(.*?)\n?end_of_edit\s*$", re.S)
_CURRENT_DIR = re.compile(r"\(Current directory: (/[^)\n]+)\)")
_INSERT = re.compile(r"^insert\s+(\d+)\s*\n?(.*?)\n?end_of_insert\s*$", re.S)


def looks_like(data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    trajectory = data.get("trajectory")
    if isinstance(trajectory, list):
        return not trajectory or (isinstance(trajectory[0], dict) and "action" in trajectory[0])
    history = data.get("history")
    return (
        isinstance(history, list)
        and bool(history)
        and isinstance(history[0], dict)
        and "role" in history[0]
        and any(isinstance(m, dict) and "action" in m for m in history)
    )


def _state(entry: dict[str, Any]) -> dict[str, Any]:
    state = entry.get("state")
    if isinstance(state, str):
        try:
            state = json.loads(state)
        except ValueError:
            return {}
    return state if isinstance(state, dict) else {}


def _editor_args(action: str) -> dict[str, Any] | None:
    """``str_replace_editor CMD PATH --flag value ...`` as editor arguments."""
    try:
        words = shlex.split(action)
    except ValueError:
        return None
    if len(words) < 3:
        return None
    args: dict[str, Any] = {"command": words[1], "path": words[2]}
    i = 3
    while i < len(words):
        flag = words[i]
        if flag == "--view_range" and i + 2 < len(words):
            first, last = as_int(words[i + 1]), as_int(words[i + 2])
            if first is not None and last is not None:
                args["view_range"] = [first, last]
            i += 3
            continue
        if flag.startswith("--") and i + 1 < len(words):
            args[flag[2:]] = words[i + 1]
            i += 2
            continue
        i += 1
    return args


def action_step(step_id: int, action: str) -> Step:
    """The ``Step`` of one SWE-agent action string."""
    text = action.strip()
    head = text.split(None, 1)[0] if text else ""
    if head in _WINDOW_COMMANDS:
        words = text.split()
        return Step(step_id, "window", path=words[1] if head == "open" and len(words) > 1 else None)
    if head == "create":
        words = text.split()
        return Step(step_id, "create", path=words[1] if len(words) > 1 else None, file_text="")
    edit = _EDIT.match(text)
    if edit:
        start, end, new_text = int(edit.group(1)), int(edit.group(2)), edit.group(3)
        return Step(step_id, "edit_lines", start=start, end=end, new_str=new_text, command=text)
    insert = _INSERT.match(text)
    if insert:
        after = int(insert.group(1))
        return Step(
            step_id, "edit_lines", start=after + 1, end=after, new_str=insert.group(2), command=text
        )
    if head == "str_replace_editor":
        args = _editor_args(text)
        if args is not None:
            step = editor_step(step_id, args)
            if step.tool != "other":
                return step
    if head in _NOT_SHELL or head.startswith("edit"):
        return Step(step_id, "other", command=text)
    return Step(step_id, "bash", command=text)


def _entries(data: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(action, observation, state) per model request."""
    trajectory = data.get("trajectory")
    if isinstance(trajectory, list):
        out = []
        for index, entry in enumerate(trajectory):
            if not isinstance(entry, dict) or not isinstance(entry.get("action"), str):
                raise TranscriptError(f"trajectory entry {index} has no 'action' text")
            out.append((entry["action"], text_of(entry.get("observation")), _state(entry)))
        return out
    history = require_list(data.get("history"), "'history'")
    out = []
    for index, message in enumerate(history):
        if not isinstance(message, dict) or message.get("is_demo"):
            continue
        if message.get("role") == "assistant" and isinstance(message.get("action"), str):
            following = history[index + 1] if index + 1 < len(history) else {}
            observation = text_of(following.get("content")) if isinstance(following, dict) else ""
            out.append((message["action"], observation, {}))
    return out


def _directories_in(history: Any) -> list[str]:
    """The first ``(Current directory: X)`` footer of a 0.x history: the repository root."""
    for message in history if isinstance(history, list) else []:
        if isinstance(message, dict) and not message.get("is_demo"):
            match = _CURRENT_DIR.search(text_of(message.get("content")))
            if match:
                return [match.group(1)]
    return []


def parse(data: Any, run: str, source: str) -> Transcript:
    if not looks_like(data):
        raise TranscriptError("not a SWE-agent trajectory: no 'trajectory' list of actions")
    entries = _entries(data)
    transcript = Transcript(run=run, format=FORMAT, source=source)
    for index, (action, observation, state) in enumerate(entries):
        step = action_step(index, action)
        step.observation = observation
        open_file = state.get("open_file")
        if isinstance(open_file, str) and open_file not in ("n/a", ""):
            step.open_file = open_file
        workdir = state.get("working_dir")
        if isinstance(workdir, str) and workdir.startswith("/"):
            if not transcript.roots:
                transcript.roots.append(workdir)
            if index > 0:
                transcript.steps[-1].cwd_after = workdir
        transcript.steps.append(step)
        transcript.requests.append(index)
        transcript.request_steps.append([index])
    if not transcript.roots:
        transcript.roots.extend(_directories_in(data.get("history")))
    transcript.roots.append("/testbed")
    transcript.cwd = transcript.roots[0]
    return transcript
