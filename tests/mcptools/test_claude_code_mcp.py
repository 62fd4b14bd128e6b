"""The real Claude Code with ``fresh-ls mcp`` (``--mcp-config``), against the scripted model.

1. The model reads ``calc.py`` with the MCP ``read``; another process then changes a
   *different* function of the file; the model's MCP ``edit`` lands and both changes are on
   disk.
2. The same with a change to the *same* function: the ``edit`` is denied with the current
   code, the outside change survives, and the model's retry after the deny lands.

Both check what reaches the model: Claude Code 2.1.332 hands the model the JSON of a
successful result's structured content instead of its text, so the readable text must be
in it (``text``, first), and a deny's text as it is.

The agent CLI comes from ``make agents`` (pinned, under ``.cache/agents``); without it these
tests skip and say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.scripted_model import Record, Reply, ScriptedModel

REPO = Path(__file__).resolve().parents[2]
CLAUDE = Path(
    os.environ.get("FRESH_LS_CLAUDE", REPO / ".cache/agents/claude-code/node_modules/.bin/claude")
)
needs_claude = pytest.mark.skipif(
    not CLAUDE.exists(),
    reason=f"Claude Code is not installed at {CLAUDE}: run `make agents`",
)
pytestmark = [needs_claude, pytest.mark.timeout(300)]

CALC = (
    "RATE = 10\n\n\ndef total(quantity):\n    return quantity * RATE\n\n\n"
    "def tax(amount):\n    return amount // 5\n"
)
SERVER = "fresh"


def _tool_results(record: Record) -> list[tuple[str, bool, str]]:
    """(tool name, is_error, text) of every tool result in a request, in order."""
    names: dict[str, str] = {}
    out = []
    for message in record.body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                names[block["id"]] = block["name"]
            elif block.get("type") == "tool_result":
                raw = block.get("content")
                text = (
                    "".join(p.get("text", "") for p in raw if isinstance(p, dict))
                    if isinstance(raw, list)
                    else str(raw or "")
                )
                name = names.get(block["tool_use_id"], "?")
                out.append((name, bool(block.get("is_error")), text))
    return out


def _structured_seen(text: str) -> dict[str, Any]:
    """The structured content a successful result reached the model as: its JSON, first
    in the tool result (Claude Code appends a reminder of its own after it)."""
    seen, _ = json.JSONDecoder().raw_decode(text)
    assert isinstance(seen, dict), text
    assert next(iter(seen)) == "text", seen  # the readable text comes first
    return seen


def _run(
    root: Path, home: Path, url: str, tools: str, mcp: bool
) -> subprocess.CompletedProcess[str]:
    home.mkdir(exist_ok=True)
    config = home / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    SERVER: {
                        "command": sys.executable,
                        "args": ["-m", "fresh_ls", "mcp", "--root", str(root)],
                        "env": {"PYTHONPATH": str(REPO)},
                    }
                }
            }
        )
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-test-not-a-real-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
    }
    argv = [str(CLAUDE), "-p", "Double the total.", "--output-format", "json"]
    argv += ["--allowedTools", tools, "--model", "claude-sonnet-4-5"]
    if mcp:
        argv += ["--mcp-config", str(config), "--strict-mcp-config"]
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=240)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(CALC)
    return Path(os.path.realpath(ws))


def _tool(name: str) -> str:
    return f"mcp__{SERVER}__{name}"


def test_an_edit_lands_after_a_change_to_another_function(root: Path, tmp_path: Path) -> None:
    def change_tax() -> None:
        (root / "calc.py").write_text(CALC.replace("// 5", "// 4"))

    script: list[Any] = [
        Reply(tool=_tool("read"), input={"path": "calc.py"}),
        Reply(
            tool=_tool("edit"),
            input={
                "path": "calc.py",
                "old_text": "return quantity * RATE",
                "new_text": "return quantity * RATE * 2",
            },
            after=change_tax,
        ),
        Reply(text="Done."),
    ]
    with ScriptedModel(script, root) as model:
        run = _run(root, tmp_path / "home", model.url, f"{_tool('read')},{_tool('edit')}", True)
    assert run.returncode == 0, run.stderr
    assert (root / "calc.py").read_text() == CALC.replace("// 5", "// 4").replace(
        "quantity * RATE", "quantity * RATE * 2"
    )
    results = _tool_results(model.model_requests[-1])
    assert [(name, err) for name, err, _ in results] == [
        (_tool("read"), False),
        (_tool("edit"), False),
    ], results
    read = _structured_seen(results[0][2])
    assert "     5\t    return quantity * RATE\n" in read["text"]  # numbered lines
    assert (read["verdict"], read["path"], read["viewId"]) == (
        "allow", "calc.py", read["text"].split("[view ")[1].split("]")[0],
    )  # fmt: skip
    edited = _structured_seen(results[1][2])
    assert edited["text"].startswith("Edited calc.py. Lines 5-5 now read:\n"), edited
    assert (edited["verdict"], edited["reason"]) == ("allow", "known")


def test_a_change_to_the_same_function_is_denied_then_the_retry_lands(
    root: Path, tmp_path: Path
) -> None:
    guarded = "def total(quantity):\n    quantity = max(quantity, 0)\n"

    def change_total() -> None:  # the same function; old_text still occurs once
        (root / "calc.py").write_text(CALC.replace("def total(quantity):\n", guarded))

    def retry(body: dict[str, Any]) -> Reply:
        # The deny is the last tool result: the model reads the current code from it.
        last = body["messages"][-1]["content"][-1]
        text = (
            "".join(p.get("text", "") for p in last["content"])
            if isinstance(last["content"], list)
            else str(last["content"])
        )
        if not ("DENIED" in text and "quantity = max(quantity, 0)" in text):
            return Reply(text=f"unexpected tool result: {text}")
        return Reply(
            tool=_tool("edit"),
            input={"path": "calc.py", "old_text": "return quantity * RATE",
                   "new_text": "return quantity * RATE * 2"},
        )  # fmt: skip

    script: list[Any] = [
        Reply(tool=_tool("read"), input={"path": "calc.py"}),
        Reply(
            tool=_tool("edit"),
            input={
                "path": "calc.py",
                "old_text": "return quantity * RATE",
                "new_text": "return quantity * RATE * 2",
            },
            after=change_total,
        ),
        retry,
        Reply(text="Done."),
    ]
    with ScriptedModel(script, root) as model:
        run = _run(root, tmp_path / "home", model.url, f"{_tool('read')},{_tool('edit')}", True)
    assert run.returncode == 0, run.stderr
    assert (root / "calc.py").read_text() == CALC.replace(
        "def total(quantity):\n", guarded
    ).replace("quantity * RATE", "quantity * RATE * 2")
    results = _tool_results(model.model_requests[-1])
    assert [(name, err) for name, err, _ in results] == [
        (_tool("read"), False),
        (_tool("edit"), True),
        (_tool("edit"), False),
    ], results
    denied = results[1][2]
    assert denied.startswith("DENIED: the edit of calc.py"), denied  # the text, not JSON
    assert "function total (lines 4-6) changed since you read it" in denied
    assert "by a process outside the tools" in denied
    assert "+    quantity = max(quantity, 0)\n" in denied  # the diff
