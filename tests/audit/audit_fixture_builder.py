"""Builds the small transcripts under ``fixtures/transcripts/`` (run it to regenerate them).

Every format gets the same story about one 30-line file ``src/calc.py`` (line i reads
``value_i = i``), so one table of expected counts covers them all:

0. view lines 1-10                        -> view A (strict)
1. shell read ``sed -n '17,19p'``         -> view D (only with --shell-reads)
2. edit line 18                           -> D stale; snippet C (14-22)
3. failed edit                            -> nothing changes
4. edit line 21                           -> C stale (wide); snippet E
5. view lines 15-20                       -> view F (strict)
6. edit line 4                            -> A stale (strict); snippet G (1-8)
7. insert two lines after line 2          -> G stale; F and E shift down by 2
8. edit the old line 14 (now line 16)     -> nothing stale: F moved to 17-22
9. finish / submit

Request i is sent after steps 0..i-1, so: strict stale in requests 7-9 (3), wide stale in
requests 5-9 (5), with shell reads in requests 3-9 (7). mini-swe-agent has bash only and
tells the same story with ``sed``. The OpenHands snippets follow the editor's rule (four
lines of context before the edit), SWE-agent windows are 10 lines.

``python tests/audit/audit_fixture_builder.py`` rewrites the files; a test checks that the
committed files are exactly what this script builds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FILE = "src/calc.py"
CONTEXT = 4
WINDOW = 10
OUT = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"

# (kind, arguments) of the story above; "replace" is old -> new text of one line.
STORY: list[tuple[str, tuple[Any, ...]]] = [
    ("view", (1, 10)),
    ("read", (17, 19)),
    ("replace", ("value_18 = 18", "value_18 = 180")),
    ("fail", ("value_99 = 99", "value_99 = 990")),
    ("replace", ("value_21 = 21", "value_21 = 210")),
    ("view", (15, 20)),
    ("replace", ("value_4 = 4", "value_4 = 40")),
    ("insert", (2, "# note a\n# note b")),
    ("replace", ("value_14 = 14", "value_14 = 140")),
    ("finish", ()),
]


class Sim:
    """The file as the agent's tools change it, to print exactly what a tool would."""

    def __init__(self) -> None:
        self.lines = [f"value_{i} = {i}" for i in range(1, 31)]

    def numbered(self, first: int, last: int) -> str:
        return "\n".join(f"{n:6}\t{self.lines[n - 1]}" for n in range(first, last + 1))

    def replace(self, old: str, new: str) -> tuple[int, int]:
        """Apply like str_replace_editor; return the snippet's first and last line."""
        text = "\n".join(self.lines)
        at = text.split(old)[0].count("\n")
        self.lines = text.replace(old, new, 1).split("\n")
        first = max(0, at - CONTEXT)
        last = min(len(self.lines) - 1, at + CONTEXT + new.count("\n"))
        return first + 1, last + 1

    def insert(self, after: int, text: str) -> tuple[int, int]:
        new = text.split("\n")
        self.lines = self.lines[:after] + new + self.lines[after:]
        first = max(1, after - CONTEXT + 1)
        return first, min(len(self.lines), after + len(new) + CONTEXT)

    def window(self, center: int) -> tuple[int, int]:
        first = max(1, center - WINDOW // 2)
        return first, min(len(self.lines), first + WINDOW - 1)

    def swe_window(self, path: str, center: int) -> str:
        first, last = self.window(center)
        out = [f"[File: {path} ({len(self.lines)} lines total)]"]
        if first > 1:
            out.append(f"({first - 1} more lines above)")
        out.extend(f"{n}:{self.lines[n - 1]}" for n in range(first, last + 1))
        if last < len(self.lines):
            out.append(f"({len(self.lines) - last} more lines below)")
        return "\n".join(out) + "\n"

    def plain(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first - 1 : last]) + "\n"


# -- OpenHands editor texts (also SWE-agent 1.x) -------------------------------------------


def oh_view(sim: Sim, path: str, first: int, last: int) -> str:
    return f"Here's the result of running `cat -n` on {path}:\n{sim.numbered(first, last)}\n"


def oh_replace(sim: Sim, path: str, old: str, new: str) -> str:
    first, last = sim.replace(old, new)
    return (
        f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet"
        f" of {path}:\n{sim.numbered(first, last)}\nReview the changes and make sure they are"
        " as expected. Edit the file again if necessary."
    )


def oh_insert(sim: Sim, path: str, after: int, text: str) -> str:
    first, last = sim.insert(after, text)
    return (
        f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet"
        f" of the edited file:\n{sim.numbered(first, last)}\nReview the changes and make sure"
        " they are as expected (correct indentation, no duplicate lines, etc). Edit the file"
        " again if necessary."
    )


def oh_fail(path: str, old: str) -> str:
    return (
        f"ERROR:\nNo replacement was performed, old_str `{old}` did not appear verbatim in {path}."
    )


def editor_story(root: str) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, result text) per step, for OpenHands and SWE-agent 1.x."""
    sim = Sim()
    path = f"{root}/{FILE}"
    calls: list[tuple[str, dict[str, Any], str]] = []
    for kind, args in STORY:
        if kind == "view":
            first, last = args
            call = {"command": "view", "path": path, "view_range": [first, last]}
            calls.append(("str_replace_editor", call, oh_view(sim, path, first, last)))
        elif kind == "read":
            command = f"sed -n '{args[0]},{args[1]}p' {FILE}"
            calls.append(("execute_bash", {"command": command}, sim.plain(*args)))
        elif kind in ("replace", "fail"):
            old, new = args
            call = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
            result = oh_replace(sim, path, old, new) if kind == "replace" else oh_fail(path, old)
            calls.append(("str_replace_editor", call, result))
        elif kind == "insert":
            after, text = args
            call = {"command": "insert", "path": path, "insert_line": after, "new_str": text}
            calls.append(("str_replace_editor", call, oh_insert(sim, path, after, text)))
        else:
            calls.append(("finish", {}, ""))
    return calls


# -- OpenHands completion logs ---------------------------------------------------------------

OH_ROOT = "/workspace/calc"
TASK = (
    f"<uploaded_files>\n{OH_ROOT}\n</uploaded_files>\nI've uploaded a python code repository in"
    " the directory calc. Make value_4 forty."
)


def oh_bash_result(command: str, output: str) -> str:
    body = output.replace("\n", "\r\n")
    return (
        f"{command}\r\n{body}[Python Interpreter: /opt/miniconda3/envs/testbed/bin/python]\n"
        f"root@openhands-workspace:{OH_ROOT} # \n[Command finished with exit code 0]"
    )


def completion_messages() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The conversation, and the assistant message of every request (the last is finish)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": [{"type": "text", "text": "You are OpenHands agent."}]},
        {"role": "user", "content": [{"type": "text", "text": TASK}]},
    ]
    replies = []
    for index, (tool, args, result) in enumerate(editor_story(OH_ROOT)):
        call_id = f"toolu_{index:02d}"
        reply = {
            "role": "assistant",
            "content": [{"type": "text", "text": f"Step {index}."}],
            "tool_calls": [
                {
                    "index": 1,
                    "function": {"arguments": json.dumps(args), "name": tool},
                    "id": call_id,
                    "type": "function",
                }
            ],
        }
        replies.append(reply)
        if tool == "finish":
            break
        messages.append(reply)
        text = oh_bash_result(args["command"], result) if tool == "execute_bash" else result
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "name": tool,
                "content": [{"type": "text", "text": text}],
            }
        )
    return messages, replies


def completion_log(messages: list[dict[str, Any]], reply: dict[str, Any], ts: float) -> dict:
    return {
        "messages": messages,
        "response": {
            "id": f"chatcmpl-{int(ts)}",
            "model": "litellm_proxy/claude-3-5-sonnet-20241022",
            "object": "chat.completion",
            "choices": [{"finish_reason": "tool_calls", "index": 0, "message": reply}],
        },
        "args": [],
        "kwargs": {"tools": []},
        "timestamp": ts,
        "cost": 0.0,
    }


def openhands_completion() -> dict[str, Any]:
    messages, replies = completion_messages()
    return completion_log(messages, replies[-1], 1733339000.0)


def openhands_completion_split() -> dict[str, dict[str, Any]]:
    """The same run as one log file per request, as ``llm_completions/<instance>/`` holds."""
    messages, replies = completion_messages()
    files = {}
    cut = 2
    for index, reply in enumerate(replies):
        ts = 1733339000.0 + index
        name = f"litellm_proxy__claude-3-5-sonnet-20241022-{ts:.1f}.json"
        files[name] = completion_log(messages[:cut], reply, ts)
        cut += 2
    return files


# -- OpenHands event history ---------------------------------------------------------------


def openhands_events() -> dict[str, Any]:
    history: list[dict[str, Any]] = [
        {
            "id": 0,
            "source": "agent",
            "action": "system",
            "message": "You are OpenHands agent.",
            "args": {"content": "You are OpenHands agent."},
        },
        {
            "id": 1,
            "source": "user",
            "action": "message",
            "message": TASK,
            "args": {"content": TASK},
        },
    ]
    next_id = 2
    for index, (tool, args, result) in enumerate(editor_story(OH_ROOT)):
        meta = {
            "function_name": tool,
            "tool_call_id": f"toolu_{index:02d}",
            "model_response": {
                "id": f"gen-{index}",
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": f"Step {index}.",
                            "tool_calls": [
                                {
                                    "index": 1,
                                    "function": {"arguments": json.dumps(args), "name": tool},
                                    "id": f"toolu_{index:02d}",
                                    "type": "function",
                                }
                            ],
                        }
                    }
                ],
            },
            "total_calls_in_response": 1,
        }
        action: dict[str, Any] = {"id": next_id, "source": "agent", "tool_call_metadata": meta}
        observation: dict[str, Any] = {
            "id": next_id + 1,
            "source": "agent",
            "cause": next_id,
            "tool_call_metadata": meta,
            "content": result,
        }
        if tool == "execute_bash":
            action.update(action="run", args={"command": args["command"], "is_input": False})
            observation.update(
                observation="run",
                extras={
                    "command": args["command"],
                    "metadata": {
                        "exit_code": 0,
                        "working_dir": OH_ROOT,
                        "suffix": "\n[The command completed with exit code 0.]",
                    },
                },
            )
        elif tool == "finish":
            action.update(action="finish", args={"final_thought": "Done."})
            observation = {}
        elif args["command"] == "view":
            action.update(
                action="read",
                args={
                    "path": args["path"],
                    "start": 0,
                    "end": -1,
                    "view_range": args["view_range"],
                },
            )
            observation.update(observation="read", extras={"path": args["path"]})
        else:
            action.update(action="edit", args=dict(args, file_text=None))
            observation.update(observation="edit", extras={"path": args["path"]})
        history.append(action)
        if observation:
            history.append(observation)
        next_id += 2
    return {
        "instance_id": "calc__calc-1",
        "instruction": TASK,
        "history": history,
        "metadata": {"agent_class": "CodeActAgent"},
        "error": None,
    }


# -- SWE-agent -----------------------------------------------------------------------------

SWE_ROOT = "/calc"
SYNTAX_ERROR = (
    "Your proposed edit has introduced new syntax error(s). Please understand the fixes and"
    " retry your edit commmand.\n\nERRORS:\n- E999 SyntaxError: '(' was never closed\n\n"
    "This is how your edit would have looked if applied\n"
    "-------------------------------------------------\n"
)
UPDATED = (
    "File updated. Please review the changes and make sure they are correct (correct"
    " indentation, no duplicate lines, etc). Edit the file again if necessary."
)


def sweagent_0x() -> dict[str, Any]:
    """The story with SWE-agent 0.x's windowed editor: open/goto windows, edit N:M."""
    sim = Sim()
    path = f"{SWE_ROOT}/{FILE}"
    entries: list[tuple[str, str]] = []
    open_file = "n/a"
    states = []
    for kind, args in STORY:
        states.append(json.dumps({"open_file": open_file, "working_dir": SWE_ROOT}))
        if kind == "view" and args[0] == 1:
            entries.append((f"open {FILE} 5\n", sim.swe_window(path, 5)))
            open_file = path
        elif kind == "view":
            entries.append(("goto 20\n", sim.swe_window(path, 20)))
        elif kind == "read":
            entries.append((f"sed -n '{args[0]},{args[1]}p' {FILE}\n", sim.plain(*args)))
        elif kind == "fail":
            preview = Sim()
            preview.lines = list(sim.lines)
            preview.lines[4] = "value_5 = ("
            entries.append(
                ("edit 5:5\nvalue_5 = (\nend_of_edit\n", SYNTAX_ERROR + preview.swe_window(path, 5))
            )
        elif kind == "replace":
            old, new = args
            number = sim.lines.index(old) + 1
            sim.lines[number - 1] = new
            entries.append(
                (
                    f"edit {number}:{number}\n{new}\nend_of_edit\n",
                    sim.swe_window(path, number) + UPDATED,
                )
            )
        elif kind == "insert":
            after, text = args
            kept = sim.lines[after - 1]
            sim.lines[after:after] = text.split("\n")
            entries.append(
                (
                    f"edit {after}:{after}\n{kept}\n{text}\nend_of_edit\n",
                    sim.swe_window(path, after) + UPDATED,
                )
            )
        else:
            entries.append(("submit\n", "\ndiff --git a/src/calc.py b/src/calc.py\n"))
    trajectory = [
        {
            "action": action,
            "observation": observation,
            "response": f"```\n{action}```",
            "state": state,
            "thought": f"Step {i}.",
        }
        for i, ((action, observation), state) in enumerate(zip(entries, states, strict=True))
    ]
    return {
        "environment": "swe_main",
        "trajectory": trajectory,
        "history": [],
        "info": {"exit_status": "submitted"},
    }


def sweagent_1x() -> dict[str, Any]:
    """The story with SWE-agent 1.x's str_replace_editor text commands."""
    root = "/testbed"
    trajectory = []
    for index, (tool, args, result) in enumerate(editor_story(root)):
        if tool == "execute_bash":
            action = args["command"]
        elif tool == "finish":
            action = "submit"
        else:
            words = ["str_replace_editor", args["command"], args["path"]]
            if "view_range" in args:
                words += ["--view_range", *(str(n) for n in args["view_range"])]
            for key in ("old_str", "new_str", "insert_line"):
                if key in args:
                    value = str(args[key]).replace("'", "'\\''")
                    words += [f"--{key}", f"'{value}'"]
            action = " ".join(words)
        trajectory.append(
            {
                "action": action,
                "observation": result,
                "response": action,
                "thought": "",
                "state": {"working_dir": root, "open_file": None},
                "execution_time": 0.1,
                "query": [{"role": "system", "content": f"request {index}"}],
            }
        )
    return {
        "trajectory": trajectory,
        "history": [],
        "info": {"exit_status": "submitted"},
        "replay_config": "{}",
        "environment": "main",
    }


# -- mini-swe-agent ------------------------------------------------------------------------

MINI_STORY: list[tuple[str, int, str]] = [
    # (command, return code, output); outputs of reads are filled from the simulation
    (f"sed -n '1,10p' {FILE}", 0, "read 1 10"),
    (f"sed -n '17,19p' {FILE}", 0, "read 17 19"),
    (f"sed -i 's/value_18 = 18$/value_18 = 180/' {FILE}", 0, "edit 18 value_18 = 180"),
    (
        "sed -i 's/value_99 = 99/x/' src/missing.py",
        2,
        "sed: can't read src/missing.py: No such file or directory\n",
    ),
    ("cat > notes.txt <<'EOF'\nvalue_4 is wrong\nEOF", 0, ""),
    (f"sed -n '15,20p' {FILE}", 0, "read 15 20"),
    (f"sed -i '4s/.*/value_4 = 40/' {FILE}", 0, "edit 4 value_4 = 40"),
    (f"sed -i '2a # note' {FILE}", 0, "insert 2 # note"),
    (f"sed -i '15s/.*/value_14 = 140/' {FILE}", 0, "edit 15 value_14 = 140"),
    ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff", 0, "diff --git a/src/calc.py\n"),
]


def mini_results() -> list[tuple[str, int, str]]:
    sim = Sim()
    out = []
    for command, code, script in MINI_STORY:
        kind, _, rest = script.partition(" ")
        output = script
        if kind == "read":
            first, last = (int(n) for n in rest.split())
            output = sim.plain(first, last)
        elif kind == "edit":
            number, text = rest.split(" ", 1)
            sim.lines[int(number) - 1] = text
            output = ""
        elif kind == "insert":
            number, text = rest.split(" ", 1)
            sim.lines.insert(int(number), text)
            output = ""
        out.append((command, code, output))
    return out


def mini_reply(code: int, output: str) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{output}</output>"


def mini_swe_agent() -> dict[str, Any]:
    """mini-swe-agent 1.1: actions in ``extra.actions``, results as tool messages."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "<pr_description>Make value_4 forty.</pr_description>"},
    ]
    for index, (command, code, output) in enumerate(mini_results()):
        call_id = f"call_{index:02d}"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {index}.",
                "tool_calls": [
                    {
                        "index": 0,
                        "function": {"arguments": json.dumps({"command": command}), "name": "bash"},
                        "id": call_id,
                        "type": "function",
                    }
                ],
                "extra": {"actions": [{"command": command, "tool_call_id": call_id}]},
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call_id,
                "content": mini_reply(code, output),
                "extra": {"returncode": code},
            }
        )
    return {
        "info": {
            "model_stats": {"api_calls": len(MINI_STORY)},
            "config": {"environment": {"cwd": "/testbed"}},
        },
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": "calc__calc-1",
    }


def mini_swe_agent_text() -> dict[str, Any]:
    """mini-swe-agent 0.x/1.0: the command is the ```bash block of the assistant's text."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "<pr_description>Make value_4 forty.</pr_description>"},
    ]
    for index, (command, code, output) in enumerate(mini_results()):
        messages.append(
            {"role": "assistant", "content": f"THOUGHT: step {index}.\n\n```bash\n{command}\n```"}
        )
        messages.append({"role": "user", "content": mini_reply(code, output)})
    return {"info": {"exit_status": "Submitted"}, "messages": messages}


# -- writing -------------------------------------------------------------------------------


def build() -> dict[str, Any]:
    """Relative path -> JSON document, for every fixture file."""
    files: dict[str, Any] = {
        "openhands-completion/calc-run.json": openhands_completion(),
        "openhands-events/output.jsonl": [openhands_events()],
        "swe-agent-traj/calc-windowed.traj": sweagent_0x(),
        "swe-agent-traj/calc-editor.traj": sweagent_1x(),
        "mini-swe-agent/calc.traj.json": mini_swe_agent(),
        "mini-swe-agent/calc-text.traj.json": mini_swe_agent_text(),
    }
    for name, log in openhands_completion_split().items():
        files[f"openhands-completion/llm_completions/calc-split/{name}"] = log
    return files


def serialize(relative: str, document: Any) -> str:
    if relative.endswith(".jsonl"):
        return "".join(json.dumps(record) + "\n" for record in document)
    return json.dumps(document, indent=1) + "\n"


def main(out: Path = OUT) -> None:
    for relative, document in build().items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(serialize(relative, document), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
