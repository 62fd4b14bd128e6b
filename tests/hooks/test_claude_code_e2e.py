"""The real Claude Code with fresh-ls's hooks (no proxy), offline against the scripted model.

In a scratch project with a HOME of its own: a listening server, the hooks installed with
``fresh-ls install claude-code``, then ``claude -p``. The scripted model makes Claude Code
Read ``calc.py`` (whole, then a range ending on a blank line) and change ``tax`` with a
``Bash`` ``sed -i``; after that run both views show in ``fresh-ls stale`` (the CLI) for
Claude Code's session: the range fresh, the whole file changed by the session itself. Then the test
changes the file outside the agent, and the next prompt of the same conversation
(``claude -p --continue``) reaches the model with the stale note: the path, the lines,
the diff, who changed it. A third prompt, with nothing new, carries no note.

Measured here: hooks in a project's ``.claude/settings.json`` run in ``-p`` mode with no
trust prompt and no extra permission (the workspace-trust dialog is interactive only).

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

from fresh_ls.hooks.claude_code import SESSION_PREFIX
from tests.hooks.conftest import ENV, REPO, Server
from tests.proxy.scripted_model import Record, Reply, ScriptedModel

CLAUDE = Path(
    os.environ.get("FRESH_LS_CLAUDE", REPO / ".cache/agents/claude-code/node_modules/.bin/claude")
)
needs_claude = pytest.mark.skipif(
    not CLAUDE.exists(),
    reason=f"Claude Code is not installed at {CLAUDE}: run `make agents` (the e2e tests need "
    "the real agent CLI)",
)

CALC = (
    "RATE = 10\n\n\ndef total(quantity):\n    return quantity * RATE\n\n\n"
    "def tax(amount):\n    return amount // 5\n"
)
CALC_CHANGED = CALC.replace("return quantity * RATE", "return quantity * RATE * 2").replace(
    "amount // 5", "amount // 4"
)


def _claude(root: Path, home: Path, url: str, *args: str) -> dict[str, Any]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PYTHONPATH": str(REPO),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-test-not-a-real-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
    }
    run = subprocess.run(
        [
            str(CLAUDE),
            "-p",
            *args,
            "--output-format",
            "json",
            "--allowedTools",
            "Read,Edit,Write,Bash",
            "--model",
            "claude-sonnet-4-5",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    outcome = json.loads(run.stdout)
    assert outcome.get("is_error") is False, outcome
    return dict(outcome)


def _fresh_ls(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "fresh_ls", *args],
        cwd=root,
        env={**ENV, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done


def _last_user_texts(record: Record) -> list[str]:
    """The text blocks of the request's last user message (where Claude Code puts a
    UserPromptSubmit hook's additional context, beside the prompt)."""
    message = [m for m in record.body["messages"] if m.get("role") == "user"][-1]
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content if b.get("type") == "text"]


@needs_claude
def test_claude_code_hooks_register_reads_and_note_what_went_stale(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    home = tmp_path / "home"
    root.mkdir()
    home.mkdir()
    root = Path(os.path.realpath(root))
    (root / "calc.py").write_text(CALC)
    calc = str(root / "calc.py")
    model = ScriptedModel(
        [
            Reply(tool="Read", input={"file_path": calc}),
            Reply(tool="Read", input={"file_path": calc, "offset": 4, "limit": 3}),
            Reply(
                tool="Bash",
                input={
                    "command": f"sed -i 's|amount // 5|amount // 4|' {calc}",
                    "description": "x",
                },
            ),
            Reply(text="I read calc.py and made tax divide by 4."),
            Reply(text="total now doubles the rate."),
            Reply(text="Nothing else changed."),
        ],
        root,
    )
    model.start()
    server = Server(root)
    try:
        installed = _fresh_ls(root, home, "install", "claude-code")
        assert ".claude/settings.json" in installed.stdout

        first = _claude(root, home, model.url, "Read calc.py.")
        session = SESSION_PREFIX + first["session_id"]
        # the id the proxy names its sessions by: hooks and proxy share one session
        headers = {k.lower(): v for k, v in model.model_requests[0].headers.items()}
        assert headers["x-claude-code-session-id"] == first["session_id"]
        shown = json.loads(_fresh_ls(root, home, "stale", "--session", session, "--json").stdout)
        views = shown["views"]
        assert [v["path"] for v in views] == ["calc.py", "calc.py"]
        # the range is fresh (the text shown matched); the whole file changed by the agent's
        # own Bash sed -i, and the Bash hook said so
        assert [v["status"] for v in views] == ["changed", "fresh"]
        whole = [u for u in views[0]["units"] if u["status"] != "fresh"]
        assert {u["changedBy"] for u in whole} == {"self"}
        assert [(v["observed"]["firstLine"], v["observed"]["lastLine"]) for v in views] == [
            (1, 9),
            (4, 6),
        ]
        tool_ids = [
            b["id"]
            for m in model.model_requests[-1].body["messages"]
            for b in (m["content"] if isinstance(m["content"], list) else [])
            if b.get("type") == "tool_use" and b.get("name") == "Read"
        ]
        assert [v["viewId"] for v in views] == tool_ids  # the tool calls' own ids
        # the first prompt had nothing stale: no note in it
        assert not any("[fresh-ls]" in t for t in _last_user_texts(model.model_requests[0]))

        assert (root / "calc.py").read_text() == CALC.replace("amount // 5", "amount // 4")
        (root / "calc.py").write_text(CALC_CHANGED)  # outside the agent: total changes
        second = _claude(root, home, model.url, "--continue", "What does total return now?")
        assert second["session_id"] == first["session_id"]
        texts = _last_user_texts(model.model_requests[-1])
        [note] = [t for t in texts if "[fresh-ls]" in t]
        assert "UserPromptSubmit hook additional context" in note
        assert "calc.py lines 4-6 (Read " in note  # the newer view (the range)
        assert "function total" in note and "changed outside the agent" in note
        assert "-    return quantity * RATE\n+    return quantity * RATE * 2\n" in note
        assert "What does total return now?" in texts[-1]

        third = _claude(root, home, model.url, "--continue", "Anything else?")
        assert third["session_id"] == first["session_id"]
        assert not any("[fresh-ls]" in t for t in _last_user_texts(model.model_requests[-1]))

        removed = _fresh_ls(root, home, "uninstall", "claude-code")
        assert "updated" in removed.stdout
        # it held only our entries (install created it): removed, not left as {}
        assert not (root / ".claude" / "settings.json").exists()
    finally:
        server.stop()
        model.stop()
