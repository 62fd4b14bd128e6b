"""The recognizers, per agent: which tool results are file views (and which lines, with what
text), which calls wrote a file, and which are neither."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fresh_ls.toolcalls.agents import (
    Seen,
    ToolCall,
    Wrote,
    apply_patch_targets,
    codex_output,
    recognize,
)

CWD = "/ws"
FILE = "a\nb\nc\n"


def _text_of(path: str, cwd: str | None) -> str | None:
    return FILE if path.endswith("a.py") else None


def _codex(out: str, code: int = 0) -> str:
    return (
        f"Chunk ID: 1a2b\nWall time: 0.0102 seconds\nProcess exited with code {code}\n"
        f"Original token count: 12\nOutput:\n{out}"
    )


def _view(path: str, first: int | None, last: int | None, text: str | None, kind: str = "read"):
    return Seen(path, CWD, first, last, text, kind)


CASES: list[tuple[str, str, Any, str, bool, list[Any]]] = [
    # --- Claude Code -----------------------------------------------------------------------
    (
        "claude Read whole file: the trailing empty numbered line is the last newline",
        "Read",
        {"file_path": "/ws/a.py"},
        "1\ta\n2\tb\n3\tc\n4\t",
        False,
        [_view("/ws/a.py", 1, 3, "a\nb\nc\n")],
    ),
    (
        "claude Read offset/limit, padded numbers",
        "Read",
        {"file_path": "/ws/a.py", "offset": 2, "limit": 1},
        "     2\tb",
        False,
        [_view("/ws/a.py", 2, 2, "b\n")],
    ),
    (
        "claude Read with a system reminder after the listing",
        "Read",
        {"file_path": "/ws/a.py"},
        "1\ta\n2\tb\n\n<system-reminder>\nWhenever you read a file...\n</system-reminder>\n",
        False,
        [_view("/ws/a.py", 1, 2, "a\nb\n")],
    ),
    (
        "claude Read arrow numbering",
        "Read",
        {"file_path": "/ws/a.py"},
        "     1\u2192a\n     2\u2192b",
        False,
        [_view("/ws/a.py", 1, 2, "a\nb\n")],
    ),
    ("claude Read error", "Read", {"file_path": "/ws/x.py"}, "File does not exist.", True, []),
    (
        "claude Read of an empty file",
        "Read",
        {"file_path": "/ws/e.py"},
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
        False,
        [],
    ),
    (
        "claude Edit",
        "Edit",
        {"file_path": "/ws/a.py", "old_string": "a", "new_string": "A", "replace_all": False},
        "The file /ws/a.py has been updated successfully.",
        False,
        [Wrote("/ws/a.py", CWD)],
    ),
    (
        "claude Edit refused: nothing written",
        "Edit",
        {"file_path": "/ws/a.py", "old_string": "a", "new_string": "A"},
        "File has been modified since read, either by the user or by a linter.",
        True,
        [],
    ),
    (
        "claude MultiEdit",
        "MultiEdit",
        {"file_path": "/ws/a.py", "edits": [{"old_string": "a", "new_string": "A"}]},
        "Applied 1 edit to /ws/a.py",
        False,
        [Wrote("/ws/a.py", CWD)],
    ),
    (
        "claude Write",
        "Write",
        {"file_path": "/ws/n.py", "content": "x\n"},
        "File created successfully at: /ws/n.py",
        False,
        [Wrote("/ws/n.py", CWD)],
    ),
    (
        "claude Bash sed -n",
        "Bash",
        {"command": "sed -n '2,3p' a.py"},
        "b\nc\n",
        False,
        [_view("a.py", 2, 3, "b\nc\n")],
    ),
    ("claude Grep is no view", "Grep", {"pattern": "a"}, "a.py:1:a", False, []),
    # --- Codex -----------------------------------------------------------------------------
    (
        "codex cat -n",
        "exec_command",
        {"cmd": "cat -n a.py"},
        _codex("     1\ta\n     2\tb\n     3\tc\n"),
        False,
        [_view("a.py", 1, 3, "a\nb\nc\n")],
    ),
    (
        "codex sed -n range",
        "exec_command",
        {"cmd": "sed -n '2,2p' a.py"},
        _codex("b\n"),
        False,
        [_view("a.py", 2, 2, "b\n")],
    ),
    (
        "codex nl -ba",
        "exec_command",
        {"cmd": "nl -ba a.py", "workdir": "/ws"},
        _codex("     1\ta\n     2\tb\n     3\tc\n"),
        False,
        [Seen("a.py", "/ws", 1, 3, "a\nb\nc\n")],
    ),
    (
        "codex head",
        "exec_command",
        {"cmd": "head -n 2 a.py"},
        _codex("a\nb\n"),
        False,
        [_view("a.py", 1, 2, "a\nb\n")],
    ),
    (
        "codex tail (position from the file's length)",
        "exec_command",
        {"cmd": "tail -n 1 a.py"},
        _codex("c\n"),
        False,
        [_view("a.py", 3, 3, "c\n")],
    ),
    (
        "codex shell tool with argv",
        "shell",
        {"command": ["bash", "-lc", "cat -n a.py"]},
        _codex("     1\ta\n"),
        False,
        [_view("a.py", 1, 1, "a\n")],
    ),
    (
        "codex failed read is no view",
        "exec_command",
        {"cmd": "cat -n nope.py"},
        _codex("cat: nope.py: No such file or directory\n", 1),
        False,
        [],
    ),
    (
        "codex apply_patch heredoc",
        "exec_command",
        {
            "cmd": "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: a.py\n@@\n-a\n+A\n"
            "*** Add File: b.py\n+x\n*** End Patch\nPATCH"
        },
        _codex("Success. Updated the following files:\nM a.py\nA b.py\n"),
        False,
        [Wrote("a.py", CWD), Wrote("b.py", CWD)],
    ),
    (
        "codex heredoc write",
        "exec_command",
        {"cmd": "cat > c.py <<'EOF'\nprint(1)\nEOF"},
        _codex(""),
        False,
        [Wrote("c.py", CWD)],
    ),
    (
        "codex freeform apply_patch",
        "apply_patch",
        "*** Begin Patch\n*** Update File: src/m.py\n@@\n-a\n+b\n*** End Patch\n",
        "Success. Updated the following files:\nM src/m.py\n",
        False,
        [Wrote("src/m.py", CWD)],
    ),
    ("codex ls is no view", "exec_command", {"cmd": "ls"}, _codex("a.py\n"), False, []),
    # --- Pi --------------------------------------------------------------------------------
    (
        "pi read raw text",
        "read",
        {"path": "a.py"},
        "a\nb\nc",
        False,
        [_view("a.py", 1, 3, "a\nb\nc\n")],
    ),
    (
        "pi read offset/limit with a continuation notice",
        "read",
        {"path": "a.py", "offset": 2, "limit": 1},
        "b\n\n[Showing lines 2-2 of 3. Use offset=3 to continue]",
        False,
        [_view("a.py", 2, 2, "b\n")],
    ),
    ("pi read error", "read", {"path": "x.py"}, "ENOENT", True, []),
    (
        "pi edit",
        "edit",
        {"path": "a.py", "edits": [{"oldText": "a", "newText": "A"}]},
        "Successfully replaced text in a.py.",
        False,
        [Wrote("a.py", CWD)],
    ),
    (
        "pi write",
        "write",
        {"path": "n.py", "content": "x"},
        "Wrote 1 bytes",
        False,
        [Wrote("n.py", CWD)],
    ),
    (
        "pi bash cat -n",
        "bash",
        {"command": "cat -n a.py"},
        "     1\ta\n     2\tb\n     3\tc\n",
        False,
        [_view("a.py", 1, 3, "a\nb\nc\n")],
    ),
    # --- OpenHands -------------------------------------------------------------------------
    (
        "openhands view with view_range",
        "str_replace_editor",
        {"command": "view", "path": "/ws/a.py", "view_range": [2, 3]},
        "Here's the result of running `cat -n` on /ws/a.py:\n     2\tb\n     3\tc\n",
        False,
        [_view("/ws/a.py", 2, 3, "b\nc\n")],
    ),
    (
        "openhands str_replace: a write, and the snippet it printed",
        "str_replace_editor",
        {"command": "str_replace", "path": "/ws/a.py", "old_str": "b", "new_str": "B"},
        "The file /ws/a.py has been edited. Here's the result of running `cat -n` on a snippet "
        "of /ws/a.py:\n     1\ta\n     2\tB\n     3\tc\nReview the changes and make sure they "
        "are as expected.",
        False,
        [Wrote("/ws/a.py", CWD), _view("/ws/a.py", 1, 3, "a\nB\nc\n", "editResult")],
    ),
    (
        "openhands create",
        "str_replace_editor",
        {"command": "create", "path": "/ws/n.py", "file_text": "x\n"},
        "File created successfully at: /ws/n.py",
        False,
        [Wrote("/ws/n.py", CWD)],
    ),
    (
        "openhands bash",
        "execute_bash",
        {"command": "cat -n a.py"},
        "     1\ta\n",
        False,
        [_view("a.py", 1, 1, "a\n")],
    ),
    ("an unknown tool", "web_search", {"q": "x"}, "results", False, []),
]


@pytest.mark.parametrize(
    ("name", "args", "output", "is_error", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_recognize(name: str, args: Any, output: str, is_error: bool, expected: list[Any]) -> None:
    call = ToolCall("call_1", name, args, output, is_error)
    assert recognize(call, CWD, _text_of) == expected


def test_arguments_as_json_strings() -> None:
    """OpenAI shapes carry arguments as a JSON string."""
    from fresh_ls.proxy.shapes import tool_calls

    body = {
        "input": [
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "cat -n a.py"}),
            },
            {"type": "function_call_output", "call_id": "c1", "output": _codex("     1\ta\n")},
        ]
    }
    (call,) = tool_calls("responses", body)
    assert recognize(call, CWD, _text_of) == [_view("a.py", 1, 1, "a\n")]


def test_codex_preamble() -> None:
    assert codex_output(_codex("x\n", 2)) == ("x\n", 2)
    assert codex_output("plain") == ("plain", None)
    legacy = json.dumps({"output": "y\n", "metadata": {"exit_code": 0}})
    assert codex_output(legacy) == ("y\n", 0)


def test_apply_patch_targets_moves() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n*** End Patch"
    assert apply_patch_targets(patch) == ["a.py", "b.py"]
