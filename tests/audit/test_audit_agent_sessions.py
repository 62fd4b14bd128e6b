"""`fresh-ls audit` on the session files real Claude Code, Codex and Pi write themselves.

Each test runs the real agent CLI (pinned, from ``make agents``) against the scripted model on
127.0.0.1, with a private home (``HOME``, ``CLAUDE_CONFIG_DIR`` / ``CODEX_HOME`` in the test's
temp dir; Pi keeps its sessions under ``HOME``), then audits the folder the agent wrote its
transcript into, as a user would audit ``~/.claude``, ``~/.codex`` or ``~/.pi``.

The stale script: the agent reads ``calc.py``; once that read has reached the model, the file
changes on disk outside the agent (a header line on top, a changed value); the agent's next
request still carries the old read; then it reads the file again, and that second read is
the evidence the transcript holds of the change. The audit must report the first read as a
stale view from then on, placed on the lines that changed. The control runs the same script
with no outside change and must report no stale view at all.

Without the agent CLIs these tests skip and say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.scripted_model import Reply, ScriptedModel
from tests.proxy.test_agents_e2e import (
    CALC,
    CALC_CHANGED,
    CLAUDE,
    CODEX,
    NOTES,
    PI,
    needs_claude,
    needs_codex,
    needs_pi,
)

REPO = Path(__file__).resolve().parents[2]


def _workspace(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "notes.md").write_text(NOTES)
    return root


def _audit(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", "audit", "--json", "--per-request", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return dict(json.loads(done.stdout))


def _audit_text(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", "audit", "--no-progress", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout


def _only_run(report: dict[str, Any], fmt: str) -> dict[str, Any]:
    assert report["problems"] == [], report["problems"]
    runs = report["runs"]
    assert [r["format"] for r in runs] == [fmt], [(r["run"], r["format"]) for r in runs]
    return dict(runs[0])


def _stale(run: dict[str, Any], kind: str = "strict") -> list[list[int]]:
    return [r["stale"][kind] for r in run["perRequest"]]


def _view(run: dict[str, Any], view_id: int) -> dict[str, Any]:
    (found,) = [v for v in run["viewList"] if v["id"] == view_id]
    return dict(found)


# -- Claude Code -----------------------------------------------------------------------------


def _run_claude(root: Path, config: Path, base_url: str, tools: str, *extra: str) -> None:
    config.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(config.parent),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-test-not-a-real-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
    }
    done = subprocess.run(
        [str(CLAUDE), "-p", "Look at calc.py.", "--output-format", "json",
         "--allowedTools", tools, "--model", "claude-sonnet-4-5", *extra],
        cwd=root, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout).get("is_error") is False, done.stdout


def _reread_script(root: Path, changed: bool, read: Any) -> list[Reply]:
    """Read calc.py; (the outside change); read notes.md; read calc.py again; done.
    ``read(name)`` is the agent's tool call that reads a file (tool and input)."""

    def change_outside() -> None:
        (root / "calc.py").write_text(CALC_CHANGED)

    return [
        Reply(**read("calc.py")),
        Reply(**read("notes.md"), after=change_outside if changed else None),
        Reply(**read("calc.py")),
        Reply(text="Read it."),
    ]


@needs_claude
@pytest.mark.parametrize("changed", [True, False], ids=["outside-change", "control"])
def test_claude_code_session_shows_the_outside_change(tmp_path: Path, changed: bool) -> None:
    root = _workspace(tmp_path)

    def read(name: str) -> dict[str, Any]:
        return {"tool": "Read", "input": {"file_path": str(root / name)}}

    config = tmp_path / "home" / "claude-config"
    with ScriptedModel(_reread_script(root, changed, read), root) as model:
        _run_claude(root, config, model.url, "Read")
        turns = [r.turn for r in model.model_requests if r.turn is not None]
    assert turns == [0, 1, 2, 3]
    assert list(config.glob("projects/*/*.jsonl")), "Claude Code wrote no session file"
    run = _only_run(_audit(str(config)), "claude-code")
    assert run["requests"] == 4
    assert run["edits"]["applied"] == 0
    if not changed:
        assert _stale(run) == [[], [], [], []]
        assert run["edits"]["outside"] == 0 and run["notes"] == []
        return
    # The second read of calc.py (step 2) shows the change: from then on the first read
    # (view 0) is stale; the second read itself is current.
    assert run["edits"]["outside"] == 1
    # A project folder under the config dir finds the same session; the table says it too.
    (project,) = config.glob("projects/*")
    assert _only_run(_audit(str(project)), "claude-code")["perRequest"] == run["perRequest"]
    text = _audit_text(str(project), "-v")
    (row,) = [line for line in text.splitlines() if " claude-code " in line]
    assert row.split()[1:7] == ["claude-code", "4", "3", "3", "1", "1"], row
    assert "1 change(s) made outside the agent were seen" in text
    assert "calc.py changed outside the agent (seen by step 2)" in text
    assert _stale(run) == [[], [], [], [0]]
    assert "changed outside the agent (seen by step 2)" in _view(run, 0)["staleReason"]
    assert _view(run, 2)["staleReason"] is None
    assert (_view(run, 0)["path"], _view(run, 0)["firstLine"], _view(run, 0)["lastLine"]) == (
        "calc.py",
        1,
        9,
    )


@needs_claude
def test_claude_code_session_tools(tmp_path: Path) -> None:
    """Read, Edit (placed from Claude Code's recorded patch), Grep (content mode), a shell
    read through Bash and Write, as the real agent records them; no outside change."""
    root = _workspace(tmp_path)
    calc = str(root / "calc.py")
    script = [
        Reply(tool="Read", input={"file_path": calc}),
        Reply(
            tool="Edit",
            input={
                "file_path": calc,
                "old_string": "return amount // 5",
                "new_string": "return amount // 4",
                "replace_all": False,
            },
        ),
        Reply(tool="Grep", input={"pattern": "RATE", "output_mode": "content", "-n": True}),
        Reply(tool="Bash", input={"command": "sed -n '1,3p' calc.py", "description": "head"}),
        Reply(tool="Write", input={"file_path": str(root / "new.py"), "content": "X = 1\n"}),
        Reply(text="Done."),
    ]
    config = tmp_path / "home" / "claude-config"
    with ScriptedModel(script, root) as model:
        _run_claude(root, config, model.url, "Read,Edit,Write,Bash,Grep")
        turns = [r.turn for r in model.model_requests if r.turn is not None]
    assert turns == [0, 1, 2, 3, 4, 5]
    assert (root / "calc.py").read_text() == CALC.replace("// 5", "// 4")
    run = _only_run(_audit(str(config), "--shell-reads"), "claude-code")
    assert run["requests"] == 6
    assert run["edits"] == {"applied": 2, "failed": 0, "unplaced": 0, "shell": 0, "outside": 0}
    # The Edit changed line 9, which the Read (view 0, lines 1-9) showed.
    assert _stale(run) == [[], [], [0], [0], [0], [0]]
    assert _view(run, 0)["staleReason"] == "edited by step 1 (lines placed from the recorded diff)"
    # Grep printed calc.py lines 1 and 5 (RATE), after the edit: current to the end.
    assert [(s["path"], s["lines"], s["stale"]) for s in run["searchList"]] == [
        ("calc.py", [1, 5], [])
    ]
    assert run["views"] == {"strict": 1, "wide": 2}  # the Bash sed -n read counts wide
    assert _view(run, 3)["staleReason"] is None


# -- Codex -----------------------------------------------------------------------------------


def _run_codex(root: Path, codex_home: Path, base_url: str, model: str, *argv: str) -> None:
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{model}"\nmodel_provider = "fake"\ncheck_for_update_on_startup = false\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{base_url}/v1"\n'
        'env_key = "FAKE_API_KEY"\nwire_api = "responses"\n[analytics]\nenabled = false\n'
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(codex_home.parent),
        "CODEX_HOME": str(codex_home),
        "FAKE_API_KEY": "sk-test-not-a-real-key",
    }
    done = subprocess.run(
        [str(CODEX), "exec", "--skip-git-repo-check", "--json",
         "--dangerously-bypass-approvals-and-sandbox", "--disable", "plugins",
         "--disable", "remote_plugin", "--disable", "apps", *argv],
        cwd=root, env=env, capture_output=True, text=True, timeout=240,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert any(e.get("type") == "turn.completed" for e in events), done.stdout


def _cat(name: str) -> dict[str, Any]:
    return {"tool": "exec_command", "input": {"cmd": f"cat -n {name}"}}


@needs_codex
@pytest.mark.parametrize("changed", [True, False], ids=["outside-change", "control"])
def test_codex_rollout_shows_the_outside_change(tmp_path: Path, changed: bool) -> None:
    root = _workspace(tmp_path)
    script = _reread_script(root, changed, _cat)
    codex_home = tmp_path / "home" / ".codex"
    with ScriptedModel(script, root) as model:
        _run_codex(root, codex_home, model.url, "fake-model", "Look at calc.py.")
        turns = [r.turn for r in model.model_requests if r.turn is not None]
    assert turns == [0, 1, 2, 3]
    assert list(codex_home.glob("sessions/*/*/*/rollout-*.jsonl")), "Codex wrote no rollout"
    # Codex reads files only through its shell: its reads are views with --shell-reads.
    run = _only_run(_audit(str(codex_home), "--shell-reads"), "codex")
    assert run["requests"] == 4
    if not changed:
        assert _stale(run, "wide") == [[], [], [], []]
        assert run["edits"]["outside"] == 0
        return
    assert run["edits"]["outside"] == 1
    assert _stale(run, "wide") == [[], [], [], [0]]
    assert "changed outside the agent (seen by step 2)" in _view(run, 0)["staleReason"]
    assert _view(run, 2)["staleReason"] is None
    # Without --shell-reads no view is counted, but the change is still found.
    plain = _only_run(_audit(str(codex_home)), "codex")
    assert plain["views"] == {"strict": 0, "wide": 0} and plain["edits"]["outside"] == 1


@needs_codex
@pytest.mark.parametrize("how", ["freeform", "heredoc"])
def test_codex_rollout_apply_patch_is_placed_on_lines(tmp_path: Path, how: str) -> None:
    """Codex's apply_patch (its freeform tool, or a heredoc through the shell) is an edit on
    the lines Codex recorded it changed; a shell search is read as search lines."""
    root = _workspace(tmp_path)
    envelope = (
        "*** Begin Patch\n*** Update File: calc.py\n@@ def tax(amount):\n"
        "-    return amount // 5\n+    return amount // 4\n*** End Patch\n"
    )
    if how == "freeform":
        edit, model_name = Reply(tool="apply_patch", custom=True, input=envelope), "gpt-5.5"
    else:
        heredoc = f"apply_patch <<'PATCH'\n{envelope}PATCH"
        edit, model_name = Reply(tool="exec_command", input={"cmd": heredoc}), "fake-model"
    script = [
        Reply(**_cat("calc.py")),
        Reply(tool="exec_command", input={"cmd": "sed -n '1,2p' calc.py"}),
        edit,
        Reply(tool="exec_command", input={"cmd": "grep -n RATE calc.py"}),
        Reply(text="Done."),
    ]
    codex_home = tmp_path / "home" / ".codex"
    with ScriptedModel(script, root) as model:
        _run_codex(root, codex_home, model.url, model_name, "Make tax() divide by 4.")
    assert (root / "calc.py").read_text() == CALC.replace("// 5", "// 4")
    run = _only_run(_audit(str(codex_home), "--shell-reads"), "codex")
    assert run["requests"] == 5
    assert run["edits"]["applied"] == 1 and run["edits"]["unplaced"] == 0
    assert run["edits"]["outside"] == 0
    # The patch changed line 9: the cat -n read (lines 1-9) went stale, sed's 1-2 did not.
    assert _stale(run, "wide") == [[], [], [], [0], [0]]
    assert _view(run, 0)["staleReason"] == "edited by step 2 (lines placed from the recorded diff)"
    assert _view(run, 1)["staleReason"] is None
    assert [(s["path"], s["lines"], s["stale"]) for s in run["searchList"]] == [
        ("calc.py", [1, 5], [])
    ]


# -- Pi --------------------------------------------------------------------------------------


def _run_pi(root: Path, home: Path, base_url: str) -> None:
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": base_url + "/v1",
        "api": "openai-completions",
        "apiKey": "sk-test-not-a-real-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model"}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "PI_OFFLINE": "1"}
    done = subprocess.run(
        [str(PI), "-p", "--provider", "fake", "--model", "fake-model", "--mode", "json",
         "Look at calc.py."],
        cwd=root, env=env, capture_output=True, text=True, timeout=240,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"isError":true' not in done.stdout, done.stdout[-2000:]


def _pi_read(name: str) -> dict[str, Any]:
    return {"tool": "read", "input": {"path": name}}


@needs_pi
@pytest.mark.parametrize("changed", [True, False], ids=["outside-change", "control"])
def test_pi_session_shows_the_outside_change(tmp_path: Path, changed: bool) -> None:
    root = _workspace(tmp_path)
    home = tmp_path / "home"
    with ScriptedModel(_reread_script(root, changed, _pi_read), root) as model:
        _run_pi(root, home, model.url)
        turns = [r.turn for r in model.model_requests if r.turn is not None]
    assert turns == [0, 1, 2, 3]
    assert list(home.glob(".pi/agent/sessions/*/*.jsonl")), "Pi wrote no session file"
    run = _only_run(_audit(str(home / ".pi")), "pi")
    assert run["requests"] == 4
    if not changed:
        assert _stale(run) == [[], [], [], []] and run["edits"]["outside"] == 0
        return
    assert run["edits"]["outside"] == 1
    assert _stale(run) == [[], [], [], [0]]
    assert "changed outside the agent (seen by step 2)" in _view(run, 0)["staleReason"]
    assert _view(run, 2)["staleReason"] is None


@needs_pi
def test_pi_session_edit_is_placed_from_its_diff(tmp_path: Path) -> None:
    """Pi's edit result numbers the lines it changed: the edit hits the read that showed
    line 9 and not the one that showed lines 1-2."""
    root = _workspace(tmp_path)
    script = [
        Reply(**_pi_read("calc.py")),
        Reply(tool="read", input={"path": "calc.py", "offset": 1, "limit": 2}),
        Reply(
            tool="edit",
            input={
                "path": "calc.py",
                "edits": [{"oldText": "return amount // 5", "newText": "return amount // 4"}],
            },
        ),
        Reply(tool="bash", input={"command": "grep -n RATE calc.py"}),
        Reply(text="Done."),
    ]
    home = tmp_path / "home"
    with ScriptedModel(script, root) as model:
        _run_pi(root, home, model.url)
    assert (root / "calc.py").read_text() == CALC.replace("// 5", "// 4")
    run = _only_run(_audit(str(home / ".pi")), "pi")
    assert run["edits"] == {"applied": 1, "failed": 0, "unplaced": 0, "shell": 0, "outside": 0}
    assert _stale(run) == [[], [], [], [0], [0]]
    assert _view(run, 0)["staleReason"] == "edited by step 2 (lines placed from the recorded diff)"
    assert _view(run, 1)["staleReason"] is None
    assert [(s["path"], s["lines"], s["stale"]) for s in run["searchList"]] == [
        ("calc.py", [1, 5], [])
    ]


# -- between two sessions of one conversation ------------------------------------------------


def _between_sessions_script(root: Path, read: Any) -> list[Reply]:
    """First session: read calc.py, answer. Second (the conversation resumed): read it again,
    answer. The test changes the file between the two, as a user or a formatter would."""
    return [
        Reply(**read("calc.py")),
        Reply(text="Read it."),
        Reply(**read("calc.py")),
        Reply(text="Read it again."),
    ]


@needs_codex
def test_codex_exec_resume_after_an_outside_change(tmp_path: Path) -> None:
    """`codex exec`, the file changes, `codex exec resume --last`: the resumed session's first
    request re-sends the old listing; its re-read shows the change, and the audit of the one
    rollout Codex appended both sessions to reports the first listing stale from then on."""
    root = _workspace(tmp_path)
    codex_home = tmp_path / "home" / ".codex"
    with ScriptedModel(_between_sessions_script(root, _cat), root) as model:
        _run_codex(root, codex_home, model.url, "fake-model", "Look at calc.py.")
        (root / "calc.py").write_text(CALC_CHANGED)
        _run_codex(root, codex_home, model.url, "fake-model", "resume", "--last", "Again.")
        turns = [r.turn for r in model.model_requests if r.turn is not None]
    assert turns == [0, 1, 2, 3]
    rollouts = list(codex_home.glob("sessions/*/*/*/rollout-*.jsonl"))
    assert len(rollouts) == 1, rollouts
    run = _only_run(_audit(str(codex_home), "--shell-reads"), "codex")
    assert run["requests"] == 4
    assert run["edits"]["outside"] == 1
    assert _stale(run, "wide") == [[], [], [], [0]]
    assert "changed outside the agent (seen by step 1)" in _view(run, 0)["staleReason"]
    # A session still being written ends mid-line: that line is reported, the rest audited.
    with rollouts[0].open("a") as handle:
        handle.write('{"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payl')
    report = _audit(str(codex_home), "--shell-reads")
    (problem,) = report["problems"]
    assert "not valid JSON" in problem["error"] and "line skipped" in problem["error"]
    assert [(r["format"], r["requests"]) for r in report["runs"]] == [("codex", 4)]


@needs_claude
def test_claude_code_continue_after_an_outside_change(tmp_path: Path) -> None:
    """`claude -p`, the file changes, `claude -p --continue`: the same, in Claude Code's
    session file."""
    root = _workspace(tmp_path)
    config = tmp_path / "home" / "claude-config"

    def read(name: str) -> dict[str, Any]:
        return {"tool": "Read", "input": {"file_path": str(root / name)}}

    with ScriptedModel(_between_sessions_script(root, read), root) as model:
        _run_claude(root, config, model.url, "Read")
        (root / "calc.py").write_text(CALC_CHANGED)
        _run_claude(root, config, model.url, "Read", "--continue")
        turns = [r.turn for r in model.model_requests if r.turn is not None]
    assert turns == [0, 1, 2, 3]
    report = _audit(str(config))
    assert report["problems"] == []
    stale = [r for r in report["runs"] if r["edits"]["outside"]]
    assert len(stale) == 1, [(r["run"], r["requests"]) for r in report["runs"]]
    run = stale[0]
    assert _view(run, 0)["path"] == "calc.py"
    assert "changed outside the agent" in _view(run, 0)["staleReason"]
    assert _stale(run)[-1] == [0]


# -- a session that ran through fresh-ls ------------------------------------------------------


@needs_claude
def test_claude_code_session_through_the_proxy_is_the_baseline(tmp_path: Path) -> None:
    """The proxy end-to-end script (read, outside change, read another file, re-read, edit)
    through `fresh-ls proxy`: the proxy refreshed the stale read on the wire, but the session
    file holds what Claude Code recorded, so the audit reports the stale view the outside
    change made, and the edit's hit on the re-read, as without fresh-ls."""
    from tests.proxy.conftest import ProxyProcess
    from tests.proxy.test_agents_e2e import _script

    root = _workspace(tmp_path)
    config = tmp_path / "home" / "claude-config"
    with ScriptedModel(_script(root), root) as model:
        proxy = ProxyProcess(root, model.url)
        try:
            _run_claude(root, config, proxy.url, "Read,Edit,Write")
        finally:
            proxy.stop()
        after_change = [r for r in model.model_requests if r.turn == 2]
    assert "return quantity * RATE * 2" in json.dumps(after_change[0].body)  # refreshed
    run = _only_run(_audit(str(config)), "claude-code")
    assert run["requests"] == 5
    assert run["edits"]["outside"] == 1 and run["edits"]["applied"] == 1
    assert _stale(run) == [[], [], [], [0], [0, 2]]
    assert "changed outside the agent (seen by step 2)" in _view(run, 0)["staleReason"]
    assert _view(run, 2)["staleReason"] == "edited by step 3 (lines placed from the recorded diff)"
