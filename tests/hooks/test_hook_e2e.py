"""``python -m fresh_ls hook claude-code`` as a child process against a real listening
server: events on stdin, as Claude Code sends them; the server's answers through the CLI
and the client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from fresh_ls.client import SyncClient
from fresh_ls.hooks.claude_code import SESSION_PREFIX
from tests.hooks.conftest import ENV, Server, run_hook

SID = "2b7c9d1e-0000-4000-8000-000000000001"
SESSION = SESSION_PREFIX + SID
CALC = "RATE = 10\n\n\ndef total(q):\n    return q * RATE\n\n\ndef tax(a):\n    return a // 5\n"


def read(root: Path, call: str, start: int = 1, limit: int | None = None) -> dict[str, Any]:
    lines = (root / "calc.py").read_text().split("\n")
    shown = lines[start - 1 : start - 1 + limit] if limit else lines[start - 1 :]
    tool_input: dict[str, Any] = {"file_path": str(root / "calc.py")}
    if limit:
        tool_input |= {"offset": start, "limit": limit}
    return {
        "session_id": SID,
        "transcript_path": str(root / "t.jsonl"),
        "cwd": str(root),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": tool_input,
        "tool_response": {
            "type": "text",
            "file": {
                "filePath": str(root / "calc.py"),
                "content": "\n".join(shown),
                "numLines": len(shown),
                "startLine": start,
                "totalLines": len(lines),
            },
        },
        "tool_use_id": call,
    }


def prompt(root: Path) -> dict[str, Any]:
    return {
        "session_id": SID,
        "cwd": str(root),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
    }


def stale(root: Path) -> dict[str, Any]:
    with SyncClient.attach(root) as client:
        return client.stale(SESSION)


def test_reads_are_views_and_fresh(project: Path, server: Server) -> None:
    (project / "calc.py").write_text(CALC)
    for event in (read(project, "toolu_1"), read(project, "toolu_2", start=4, limit=2)):
        done = run_hook(event)
        assert (done.code, done.stdout, done.stderr) == (0, "", "")
    views = {v["viewId"]: v for v in stale(project)["views"]}
    assert views["toolu_1"]["status"] == "fresh"
    assert views["toolu_1"]["observed"]["lastLine"] == 9
    assert views["toolu_2"]["status"] == "fresh"
    assert (
        views["toolu_2"]["observed"]["firstLine"],
        views["toolu_2"]["observed"]["lastLine"],
    ) == (4, 5)


def test_a_range_ending_on_a_blank_line_is_fresh(project: Path, server: Server) -> None:
    (project / "calc.py").write_text(CALC)
    assert run_hook(read(project, "toolu_1", start=1, limit=3)).code == 0
    [view] = stale(project)["views"]
    assert view["status"] == "fresh"
    assert (view["observed"]["firstLine"], view["observed"]["lastLine"]) == (1, 3)


def test_an_outside_change_is_noted_once_with_its_diff(project: Path, server: Server) -> None:
    (project / "calc.py").write_text(CALC)
    assert run_hook(read(project, "toolu_1", start=4, limit=2)).code == 0
    assert run_hook(prompt(project)).context() is None  # nothing stale yet
    (project / "calc.py").write_text(CALC.replace("q * RATE", "q * RATE * 2"))
    note = run_hook(prompt(project)).context()
    assert note is not None
    assert "calc.py lines 4-5 (Read toolu_1): changed" in note
    assert "function total" in note and "changed outside the agent" in note
    assert "-    return q * RATE\n+    return q * RATE * 2\n" in note
    assert run_hook(prompt(project)).context() is None  # announced already
    (project / "calc.py").write_text(CALC.replace("q * RATE", "q * RATE * 3"))
    again = run_hook(prompt(project)).context()
    assert again is not None and "+    return q * RATE * 3" in again


def test_the_sessions_own_edit_is_no_news(project: Path, server: Server) -> None:
    (project / "calc.py").write_text(CALC)
    assert run_hook(read(project, "toolu_1")).code == 0
    (project / "calc.py").write_text(CALC.replace("a // 5", "a // 4"))
    edit = {
        "session_id": SID,
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {
            "file_path": str(project / "calc.py"),
            "old_string": "a // 5",
            "new_string": "a // 4",
        },
        "tool_response": {"filePath": str(project / "calc.py")},
        "tool_use_id": "toolu_2",
    }
    assert run_hook(edit).code == 0
    [view] = stale(project)["views"]
    assert view["status"] == "changed"
    assert {u["changedBy"] for u in view["units"] if u["status"] != "fresh"} == {"self"}
    assert run_hook(prompt(project)).context() is None


def test_the_budget_flag_bounds_the_note(project: Path, server: Server) -> None:
    big = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(200))
    (project / "calc.py").write_text(big)
    assert run_hook(read(project, "toolu_1")).code == 0
    (project / "calc.py").write_text(big.replace("return x +", "return x -"))
    note = run_hook(prompt(project), "--budget-bytes", "2048").context()
    assert note is not None and len(note.encode()) <= 2048
    assert "left out to fit" in note


def test_without_a_server_the_hook_says_how_to_start_one(project: Path) -> None:
    (project / "calc.py").write_text(CALC)
    done = run_hook(read(project, "toolu_1"))
    assert done.code == 0 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert "no fresh-ls server runs for" in line and f"fresh-ls serve --root {project}" in line


def test_a_dead_server_or_garbage_never_fails_the_hook(project: Path) -> None:
    state = project / ".fresh-ls"
    state.mkdir()
    (state / "endpoint.json").write_text(
        json.dumps({"address": f"unix:{state}/gone.sock", "token": "x", "pid": 1})
    )
    done = run_hook(prompt(project))
    assert done.code == 0 and done.stdout == "" and len(done.stderr.splitlines()) == 1
    garbage = run_hook("not json at all")
    assert garbage.code == 0 and garbage.stdout == ""


def test_deeply_nested_json_never_fails_the_hook(project: Path) -> None:
    """JSON nested past the parser's recursion limit is no event: exit 0, one line."""
    done = run_hook("[" * 200_000 + "]" * 200_000)
    assert done.code == 0 and done.stdout == ""
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_the_server_of_a_parent_folder_is_found(project: Path, server: Server) -> None:
    (project / "calc.py").write_text(CALC)
    sub = project / "pkg"
    sub.mkdir()
    (sub / "m.py").write_text("def f():\n    return 1\n")
    event = read(project, "toolu_1")
    event["cwd"] = str(sub)
    event["tool_input"] = {"file_path": str(sub / "m.py")}
    event["tool_response"]["file"] |= {
        "content": "def f():\n    return 1\n",
        "numLines": 3,
        "totalLines": 3,
    }
    done = run_hook(event, cwd=sub)
    assert (done.code, done.stderr) == (0, "")
    [view] = stale(project)["views"]
    assert view["path"] == "pkg/m.py" and view["status"] == "fresh"


def test_a_file_outside_the_root_is_quietly_no_view(
    project: Path, server: Server, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    (project / "calc.py").write_text(CALC)
    event = read(project, "toolu_1")
    event["tool_input"] = {"file_path": str(outside)}
    event["tool_response"]["file"] |= {"content": "x = 1\n", "numLines": 2, "totalLines": 2}
    done = run_hook(event)
    assert (done.code, done.stdout, done.stderr) == (0, "", "")
    assert stale(project)["views"] == []


def test_the_hook_path_imports_nothing_heavy(project: Path, server: Server) -> None:
    """A hook runs per tool call: no pygls, tree-sitter, SQLite, asyncio, audit parsers,
    and not even the full client (benchmarks/bench_hooks.py measures the wall time)."""
    (project / "calc.py").write_text(CALC)
    probe = (
        "import io, json, sys\n"
        "from fresh_ls.cli import main\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(read(project, 'toolu_1'))!r}"
        ".encode()))\n"
        "code = main(['hook', 'claude-code'])\n"
        "heavy = ('tree_sitter', 'rapidfuzz', 'aiosqlite', 'watchfiles', 'pygls', 'cattrs',\n"
        "         'asyncio', 'fresh_ls.audit', 'fresh_ls.replay', 'fresh_ls.client',\n"
        "         'fresh_ls.protocol', 'dataclasses', 'subprocess')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(heavy))\n"
        "print(json.dumps([code, loaded]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=ENV
    )
    assert done.returncode == 0, done.stderr
    code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0 and loaded == []
    assert [v["status"] for v in stale(project)["views"]] == ["fresh"]


def test_a_bash_hook_loads_the_command_parser_without_the_audit(
    project: Path, server: Server
) -> None:
    """A Bash event loads the proxy's command recognizer (``fresh_ls.toolcalls``), which
    shares two small shapes with the transcript audit: they live in ``toolcalls.lines``,
    so the audit package (about 30 ms of imports) stays out of the hook."""
    (project / "calc.py").write_text(CALC)
    bash = {
        "session_id": SID,
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "sed -i 's|a // 5|a // 4|' calc.py", "description": "x"},
        "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
        "tool_use_id": "toolu_3",
    }
    probe = (
        "import io, json, sys\n"
        "from fresh_ls.cli import main\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(bash)!r}.encode()))\n"
        "code = main(['hook', 'claude-code'])\n"
        "heavy = ('fresh_ls.audit', 'fresh_ls.replay', 'fresh_ls.client', 'pygls', 'asyncio')\n"
        "print(json.dumps([code, 'fresh_ls.toolcalls.agents' in sys.modules,\n"
        "                  sorted(m for m in sys.modules if m.startswith(heavy))]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=ENV
    )
    assert done.returncode == 0, done.stderr
    code, parsed, loaded = json.loads(done.stdout.splitlines()[-1])
    assert (code, parsed, loaded) == (0, True, [])


def test_a_bash_write_by_the_agent_is_its_own_not_outside(project: Path, server: Server) -> None:
    (project / "calc.py").write_text(CALC)
    assert run_hook(read(project, "toolu_1", start=8, limit=2)).code == 0
    (project / "calc.py").write_text(CALC.replace("a // 5", "a // 4"))  # what sed -i did
    bash = {
        "session_id": SID,
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "sed -i 's|a // 5|a // 4|' calc.py", "description": "x"},
        "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
        "tool_use_id": "toolu_2",
    }
    done = run_hook(bash)
    assert (done.code, done.stderr) == (0, "")
    [view] = stale(project)["views"]
    assert view["status"] == "changed"
    assert {u["changedBy"] for u in view["units"] if u["status"] != "fresh"} == {"self"}
    assert run_hook(prompt(project)).context() is None


def test_a_bash_call_that_touches_no_file_needs_no_server(project: Path) -> None:
    bash = {
        "session_id": SID,
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls -la"},
        "tool_response": {"stdout": "total 0", "stderr": "", "interrupted": False},
    }
    done = run_hook(bash)
    assert (done.code, done.stdout, done.stderr) == (0, "", "")
