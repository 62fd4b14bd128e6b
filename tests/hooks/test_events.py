"""Claude Code hook events -> fresh-ls actions (``fresh_ls.hooks.claude_code``), on events
shaped as the pinned Claude Code 2.1.332 sends them."""

from __future__ import annotations

from typing import Any

from fresh_ls.hooks.claude_code import (
    SESSION_PREFIX,
    Note,
    Observe,
    Shell,
    Wrote,
    action_of,
)
from fresh_ls.hooks.shell import bash_actions

SID = "07fee5b9-9813-4427-bfea-8cf3bc4bf76e"
SESSION = SESSION_PREFIX + SID


def read_event(
    content: str, start: int = 1, num: int | None = None, total: int = 6, **tool_input: Any
) -> dict[str, Any]:
    return {
        "session_id": SID,
        "cwd": "/p",
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": "/p/calc.py", **tool_input},
        "tool_response": {
            "type": "text",
            "file": {
                "filePath": "/p/calc.py",
                "content": content,
                "numLines": num if num is not None else content.count("\n") + 1,
                "startLine": start,
                "totalLines": total,
            },
        },
        "tool_use_id": "toolu_0001",
    }


def test_a_whole_file_read_is_a_view_with_the_text_shown() -> None:
    text = "RATE = 10\n\n\ndef total(q):\n    return q * RATE\n"
    action = action_of(read_event(text))
    # numLines (6) counts the empty piece after the final newline: the file has 5 lines.
    assert action == Observe(SESSION, "/p/calc.py", "toolu_0001", 1, 5, text)


def test_a_range_read_keeps_its_first_line_and_count() -> None:
    text = "def total(q):\n    return q * RATE"
    action = action_of(read_event(text, start=4, num=2, offset=4, limit=2))
    # it stops before the file's end: the last line shown had its LF, which content drops
    assert action == Observe(SESSION, "/p/calc.py", "toolu_0001", 4, 5, text + "\n")


def test_a_range_ending_on_blank_lines_keeps_them() -> None:
    action = action_of(read_event("RATE = 10\n\n", start=1, num=3, limit=3))
    assert action == Observe(SESSION, "/p/calc.py", "toolu_0001", 1, 3, "RATE = 10\n\n\n")


def test_an_empty_file_is_a_whole_file_view() -> None:
    action = action_of(read_event("", num=1, total=1))
    assert action == Observe(SESSION, "/p/calc.py", "toolu_0001", None, None, "")


def test_a_relative_path_is_taken_from_the_event_cwd() -> None:
    event = read_event("x\n")
    event["tool_input"]["file_path"] = "src/a.py"
    action = action_of(event)
    assert isinstance(action, Observe) and action.path == "/p/src/a.py"


def test_reads_that_are_no_text_view_give_nothing() -> None:
    image = read_event("x")
    image["tool_response"] = {"type": "image", "file": {"base64": "..."}}
    notebook = read_event("x")
    notebook["tool_input"]["file_path"] = "/p/a.ipynb"
    broken = read_event("x")
    broken["tool_response"] = "Error: no such file"
    for event in (image, notebook, broken):
        assert action_of(event) is None


def test_edits_and_writes_are_writes_of_the_session() -> None:
    for tool in ("Edit", "MultiEdit", "Write"):
        event = {
            "session_id": SID,
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": {"file_path": "/p/calc.py", "old_string": "a", "new_string": "b"},
            "tool_response": {"filePath": "/p/calc.py"},
        }
        assert action_of(event) == Wrote(SESSION, "/p/calc.py")
    notebook = {
        "session_id": SID,
        "hook_event_name": "PostToolUse",
        "tool_name": "NotebookEdit",
        "tool_input": {"notebook_path": "/p/a.ipynb"},
    }
    assert action_of(notebook) == Wrote(SESSION, "/p/a.ipynb")


def test_a_prompt_asks_for_the_note() -> None:
    event = {"session_id": SID, "hook_event_name": "UserPromptSubmit", "prompt": "go"}
    assert action_of(event) == Note(SESSION)


def test_other_events_and_tools_and_sessionless_events_give_nothing() -> None:
    assert action_of({"session_id": SID, "hook_event_name": "Stop"}) is None
    grep = {
        "session_id": SID,
        "hook_event_name": "PostToolUse",
        "tool_name": "Grep",
        "tool_input": {"pattern": "x"},
    }
    assert action_of(grep) is None
    assert action_of({"hook_event_name": "UserPromptSubmit", "prompt": "go"}) is None
    assert action_of({"session_id": "", "hook_event_name": "UserPromptSubmit"}) is None


def bash(command: str, stdout: str = "") -> dict[str, Any]:
    return {
        "session_id": SID,
        "cwd": "/p",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "x"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False},
        "tool_use_id": "toolu_0009",
    }


def test_a_bash_write_is_a_write_of_the_session() -> None:
    action = action_of(bash("sed -i s/10/11/ calc.py && cat -n calc.py", "     1\tRATE = 11"))
    assert isinstance(action, Shell)
    assert bash_actions(action.event, SESSION) == [Wrote(SESSION, "/p/calc.py")]
    heredoc = bash("cat > src/new.py <<'EOF'\nx = 1\nEOF")
    assert bash_actions(heredoc, SESSION) == [Wrote(SESSION, "/p/src/new.py")]


def test_a_bash_read_of_numbered_lines_is_a_view() -> None:
    shown = "     1\tRATE = 10\n     2\t\n     3\t\n     4\tdef total(q):"
    [view] = bash_actions(bash("cat -n calc.py", shown), SESSION)
    assert isinstance(view, Observe) and view.path == "/p/calc.py"
    assert view.view_id == "toolu_0009"
    assert (view.first_line, view.last_line) == (1, 4)
    assert view.text == "RATE = 10\n\n\ndef total(q):\n"


def test_bash_calls_that_touch_no_file_give_nothing() -> None:
    for command in ("ls -la", "git status", "pytest -q", ""):
        assert bash_actions(bash(command, "whatever"), SESSION) == []


def test_a_bash_search_is_neither_a_view_nor_a_write() -> None:
    # recognize() now returns the lines a grep -n printed (Searched); the hook took every
    # effect that was not a Seen for a write, so a search marked calc.py as written
    event = bash("grep -n RATE calc.py", "1:RATE = 10")
    assert bash_actions(event, SESSION) == []
