"""``fresh-ls install claude-code`` / ``uninstall``: merged into settings that hold other
entries, idempotent, and removed exactly (``fresh_ls.hooks.install``, and the CLI with a
HOME of its own)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fresh_ls.hooks.install import (
    HOOK_TIMEOUT_S,
    MCP_NAME,
    add_hooks,
    hook_command,
    install,
    is_ours,
    remove_hooks,
    targets,
    uninstall,
)
from tests.hooks.conftest import ENV

OURS = hook_command("/opt/py/bin/python")

OTHERS: dict[str, Any] = {
    "model": "sonnet",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [{"type": "command", "command": 'prettier --write "$FILE"'}],
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def test_our_command_is_recognized_and_nobody_elses() -> None:
    assert is_ours(OURS)
    assert is_ours("'/home/a b/venv/bin/python' -m fresh_ls hook claude-code --budget-bytes 4096")
    assert is_ours("fresh-ls hook claude-code")
    for other in ("prettier --write x", "fresh-ls hook claude-codex", "echo fresh_ls hook", None):
        assert not is_ours(other)


def test_install_adds_both_hooks_beside_the_others() -> None:
    out = add_hooks(copy.deepcopy(OTHERS), OURS)
    assert out["model"] == "sonnet" and out["permissions"] == OTHERS["permissions"]
    post = out["hooks"]["PostToolUse"]
    assert post[0] == OTHERS["hooks"]["PostToolUse"][0]
    assert post[1] == {
        "matcher": "Read|Edit|MultiEdit|Write|NotebookEdit|Bash",
        "hooks": [{"type": "command", "command": OURS, "timeout": HOOK_TIMEOUT_S}],
    }
    assert out["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": OURS, "timeout": HOOK_TIMEOUT_S}]}
    ]
    assert out["hooks"]["Stop"] == OTHERS["hooks"]["Stop"]


def test_install_is_idempotent_and_replaces_our_old_command() -> None:
    once = add_hooks(copy.deepcopy(OTHERS), OURS)
    assert add_hooks(once, OURS) == once
    moved = add_hooks(once, hook_command("/new/python"))
    commands = json.dumps(moved)
    assert "/opt/py/bin/python" not in commands and commands.count("/new/python") == 2


def test_uninstall_removes_exactly_what_install_added() -> None:
    assert remove_hooks(add_hooks(copy.deepcopy(OTHERS), OURS)) == OTHERS
    assert remove_hooks({}) == {}
    assert remove_hooks(add_hooks({}, OURS)) == {}
    # our entry sharing a group with someone else's: only ours goes
    shared = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": OURS},
                        {"type": "command", "command": "date"},
                    ]
                }
            ]
        }
    }
    assert remove_hooks(shared) == {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}]}
    }
    # containers that were empty before stay as they were
    empty = {"hooks": {"Stop": []}}
    assert remove_hooks(add_hooks(copy.deepcopy(empty), OURS)) == empty


def test_files_project_scope_with_mcp(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    settings = root / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(OTHERS, indent=2))
    mcp = root / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"db": {"command": "db-mcp", "args": []}}}))
    before = (settings.read_text(), mcp.read_text())
    t = targets(root, user=False)
    assert install(t, mcp=True, python="/opt/py/bin/python") == [str(settings), str(mcp)]
    assert install(t, mcp=True, python="/opt/py/bin/python") == []  # idempotent
    data = json.loads(settings.read_text())
    assert data["enabledMcpjsonServers"] == [MCP_NAME]
    server = json.loads(mcp.read_text())["mcpServers"]
    assert server["db"] == {"command": "db-mcp", "args": []}
    assert server[MCP_NAME] == {
        "type": "stdio",
        "command": "/opt/py/bin/python",
        "args": ["-m", "fresh_ls", "mcp", "--root", str(root)],
    }
    assert uninstall(t) == [str(settings), str(mcp)]
    assert json.loads(settings.read_text()) == OTHERS
    assert json.loads(mcp.read_text()) == json.loads(before[1])
    assert uninstall(t) == []


def test_a_broken_settings_file_is_refused_not_overwritten(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        install(targets(tmp_path, user=False), mcp=False)
    assert settings.read_text() == "{not json"


def test_someone_elses_mcp_server_named_like_ours_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {MCP_NAME: {"command": "x"}}}))
    with pytest.raises(ValueError, match="not fresh-ls"):
        install(targets(tmp_path, user=False), mcp=True)


def _cli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fresh_ls", *args],
        cwd=cwd,
        env={**ENV, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_user_scope_writes_under_home_only(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    claude_json = home / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 3, "projects": {}}))
    done = _cli("install", "claude-code", "--user", "--mcp", cwd=proj, home=home)
    assert done.returncode == 0, done.stderr
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == hook_command(sys.executable)
    assert os.path.isabs(command.split(" ")[0].strip("'"))
    state = json.loads(claude_json.read_text())
    assert state["numStartups"] == 3
    assert state["mcpServers"][MCP_NAME]["args"] == ["-m", "fresh_ls", "mcp"]
    assert not (proj / ".claude").exists() and not (proj / ".mcp.json").exists()
    done = _cli("uninstall", "claude-code", "--user", cwd=proj, home=home)
    assert done.returncode == 0, done.stderr
    assert json.loads((home / ".claude" / "settings.json").read_text()) == {}
    assert json.loads(claude_json.read_text()) == {"numStartups": 3, "projects": {}}


def test_cli_project_scope_from_the_project_folder(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    done = _cli("install", "claude-code", cwd=proj, home=home)
    assert done.returncode == 0, done.stderr
    assert "updated" in done.stdout
    assert (proj / ".claude" / "settings.json").exists()
    assert not (proj / ".mcp.json").exists() and not (home / ".claude").exists()
    again = _cli("install", "claude-code", cwd=proj, home=home)
    assert "already installed" in again.stdout
    gone = _cli("uninstall", "claude-code", "--root", str(proj), cwd=tmp_path, home=home)
    assert gone.returncode == 0, gone.stderr
    assert json.loads((proj / ".claude" / "settings.json").read_text()) == {}
