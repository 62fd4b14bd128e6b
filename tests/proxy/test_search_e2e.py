"""Search results through `fresh-ls proxy`, with the real agents against the scripted model.

The script searches (Claude Code's Grep tool in content mode, and ``grep -n`` through its
Bash tool; Codex's ``rg -n`` through its shell tool); once that result has reached the
model, a line it printed changes outside the agent; the model then reads another file and
finishes. On what the model server received:

- no search result shows a line that differs from the disk at that moment;
- the request after the change carries the line's current text, in the search result's
  place, under fresh-ls's note that it was refreshed.

The controls run the same scripts straight at the model and show the stale line reaching it.
The agent CLIs come from ``make agents``; without them these tests skip and say so.

Claude Code 2.1.332 (the pinned release) offers its Grep tool only when the launch names it
(``--allowedTools ...,Grep``; otherwise a call answers "Grep is not available in this
session — search file contents with `grep` via the Bash tool instead"), so its test names
it; a second test searches the way the release tells its model to by default, ``grep -n``
in Bash.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.scripted_model import Record, Reply
from tests.proxy.test_agents_e2e import (
    _codex_finished,
    _run_claude,
    _run_codex,
    needs_claude,
    needs_codex,
)

CALC = (
    "RATE = 10\n\n\ndef total(quantity):\n    return quantity * RATE\n\n\n"
    "def tax(amount):\n    return amount // 5\n"
)
CALC_CHANGED = CALC.replace("return quantity * RATE", "return quantity * RATE * 2")
NOTES = "Totals are computed in calc.py.\n"
NOTE = "[fresh-ls] This search result was refreshed"

#: ``path:N:text``, ``N:text`` or a context line ``N-text`` (rg and grep print the same)
_HIT = re.compile(r"^(?:(?P<path>[^\n:]+?):)?(?P<n>\d+)(?P<sep>[:-])(?P<text>.*)$")


def _setup(root: Path) -> None:
    (root / "calc.py").write_text(CALC)
    (root / "notes.md").write_text(NOTES)


def search_lines(output: str, default: str | None) -> list[tuple[str, int, str]]:
    """(path, line, text) of every numbered line a search printed (an independent reading
    of grep's and rg's ``path:N:text`` / ``N:text`` shapes)."""
    found = []
    for line in output.split("\n"):
        m = _HIT.match(line)
        if m and (m.group("path") or default):
            found.append((m.group("path") or default or "", int(m.group("n")), m.group("text")))
    return found


def stale_search_lines(results: list[tuple[str, str]], record: Record, root: Path) -> list[str]:
    """Every printed line of the given search outputs that differs from the disk."""
    problems = []
    for output, default in results:
        for path, number, text in search_lines(output, default):
            rel = Path(path) if Path(path).is_absolute() else root / path
            key = rel.resolve().relative_to(root).as_posix()
            disk = record.files.get(key, "").split("\n")
            if number <= len(disk) and disk[number - 1] != text:
                problems.append(f"{key} line {number}: shows {text!r}, disk {disk[number - 1]!r}")
    return problems


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


# -- Claude Code: the Grep tool (content mode) and grep -n through Bash -----------------------

GREP = "grep -n RATE calc.py"
GREP_TOOL = {"pattern": "RATE", "output_mode": "content", "-n": True}
#: per way of searching: the tool call, what the launch must allow, and a line the first
#: result must hold (each tool's own output shape)
CLAUDE_SEARCHES: dict[str, tuple[str, dict[str, Any], str, str]] = {
    "grep-tool": ("Grep", GREP_TOOL, "Read,Grep", "calc.py:5:    return quantity * RATE"),
    "bash-grep-n": (
        "Bash",
        {"command": GREP, "description": "Find RATE"},
        "Read,Bash",
        "5:    return quantity * RATE",
    ),
}


def claude_search_results(record: Record) -> list[tuple[str, str]]:
    """(output, the file searched when the output names none) of every search result:
    Grep's (over the workspace: its lines name their file) and ``grep -n calc.py``'s."""
    calls: set[str] = set()
    found = []
    for message in record.body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use" and (
                block.get("name") == "Grep" or block.get("input", {}).get("command") == GREP
            ):
                calls.add(block["id"])
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                found.append((_text(block.get("content")), "calc.py"))
    return found


def _claude_script(root: Path, how: str) -> list[Any]:
    def change_outside() -> None:
        (root / "calc.py").write_text(CALC_CHANGED)

    tool, args, _, _ = CLAUDE_SEARCHES[how]
    if tool == "Grep":
        args = {**args, "path": str(root)}
    return [
        Reply(tool=tool, input=args),
        Reply(tool="Read", input={"file_path": str(root / "notes.md")}, after=change_outside),
        Reply(text="Done."),
    ]


@needs_claude
@pytest.mark.parametrize("how", sorted(CLAUDE_SEARCHES))
def test_claude_code_search_through_the_proxy(
    workspace: Path, start_model, start_proxy, how: str
) -> None:
    _setup(workspace)
    model = start_model(_claude_script(workspace, how))
    proxy = start_proxy(workspace, model.url)
    allowed, shape = CLAUDE_SEARCHES[how][2:]
    run = _run_claude(workspace, workspace.parent / "home", proxy.url, allowed)
    proxy.stop()
    assert run.returncode == 0, run.stderr
    scripted = [r for r in model.model_requests if r.turn is not None]
    assert [r.turn for r in scripted] == [0, 1, 2]
    (first, default), *_ = claude_search_results(scripted[1])
    assert shape in first and search_lines(first, default), first
    for record in scripted:
        found = claude_search_results(record)
        assert stale_search_lines(found, record, workspace) == [], record.turn
    (after, _), *_ = claude_search_results(scripted[2])
    assert NOTE in after and "return quantity * RATE * 2" in after, after


@needs_claude
@pytest.mark.parametrize("how", sorted(CLAUDE_SEARCHES))
def test_claude_code_search_control_without_the_proxy(
    workspace: Path, start_model, how: str
) -> None:
    _setup(workspace)
    model = start_model(_claude_script(workspace, how))
    run = _run_claude(workspace, workspace.parent / "home", model.url, CLAUDE_SEARCHES[how][2])
    assert run.returncode == 0, run.stderr
    scripted = [r for r in model.model_requests if r.turn is not None]
    stale = stale_search_lines(claude_search_results(scripted[2]), scripted[2], workspace)
    assert stale and "calc.py" in stale[0], stale


# -- Codex: rg -n through exec_command -------------------------------------------------------

RG = "rg -n RATE calc.py"


def rg_results(record: Record) -> list[tuple[str, str]]:
    calls: set[str] = set()
    found = []
    for item in record.body.get("input", []):
        if item.get("type") == "function_call" and item.get("name") == "exec_command":
            if json.loads(item["arguments"]).get("cmd") == RG:
                calls.add(item["call_id"])
        elif item.get("type") == "function_call_output" and item.get("call_id") in calls:
            output = _text(item["output"])
            body = output.split("Output:\n", 1)[1] if "Output:\n" in output else output
            found.append((body, "calc.py"))
    return found


def _codex_script(root: Path) -> list[Any]:
    def change_outside() -> None:
        (root / "calc.py").write_text(CALC_CHANGED)

    return [
        Reply(tool="exec_command", input={"cmd": RG}),
        Reply(tool="exec_command", input={"cmd": "cat -n notes.md"}, after=change_outside),
        Reply(text="Done."),
    ]


def _codex_done(run: Any) -> None:
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert any(e.get("type") == "turn.completed" for e in events), run.stdout


@needs_codex
def test_codex_rg_through_the_proxy(workspace: Path, start_model, start_proxy) -> None:
    _setup(workspace)
    model = start_model(_codex_script(workspace))
    proxy = start_proxy(workspace, model.url)
    run = _run_codex(workspace, workspace.parent / "home", proxy.url)
    proxy.stop()
    _codex_done(run)
    scripted = [r for r in model.model_requests if r.turn is not None]
    assert [r.turn for r in scripted] == [0, 1, 2]
    first = rg_results(scripted[1])
    assert first and search_lines(*first[0]), first
    for record in scripted:
        assert stale_search_lines(rg_results(record), record, workspace) == [], record.turn
    (after, _), *_ = rg_results(scripted[2])
    assert "return quantity * RATE * 2" in after, after


@needs_codex
def test_codex_rg_control_without_the_proxy(workspace: Path, start_model) -> None:
    _setup(workspace)
    model = start_model(_codex_script(workspace))
    run = _run_codex(workspace, workspace.parent / "home", model.url)
    _codex_done(run)
    scripted = [r for r in model.model_requests if r.turn is not None]
    stale = stale_search_lines(rg_results(scripted[2]), scripted[2], workspace)
    assert stale and "calc.py" in stale[0], stale


_ = _codex_finished  # the module's own finish check edits calc.py; these scripts do not
