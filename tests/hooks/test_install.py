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
        "args": ["-P", "-m", "fresh_ls", "mcp", "--root", str(root)],
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
    assert state["mcpServers"][MCP_NAME]["args"] == ["-P", "-m", "fresh_ls", "mcp"]
    assert not (proj / ".claude").exists() and not (proj / ".mcp.json").exists()
    done = _cli("uninstall", "claude-code", "--user", cwd=proj, home=home)
    assert done.returncode == 0, done.stderr
    assert not (home / ".claude").exists()  # install created it; nothing else was in it
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
    assert not (proj / ".claude").exists()


# -- issue 21 (install) and issue 27 (-P) -------------------------------------------------

OLD_OURS = "'/opt/py/bin/python' -m fresh_ls hook claude-code"  # before -P


def test_the_command_runs_python_with_P_so_the_project_is_not_on_sys_path() -> None:
    assert OURS == "/opt/py/bin/python -P -m fresh_ls hook claude-code"
    assert is_ours(OURS) and is_ours(OLD_OURS)


def test_install_upgrades_an_older_entry_without_P_in_its_place() -> None:
    entry = {"type": "command", "command": OLD_OURS, "timeout": HOOK_TIMEOUT_S}
    before = {
        "hooks": {
            "PostToolUse": [
                {"matcher": "Read|Edit|MultiEdit|Write|NotebookEdit|Bash", "hooks": [entry]},
                {"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]},
            ],
            "UserPromptSubmit": [{"hooks": [dict(entry)]}],
        }
    }
    after = add_hooks(copy.deepcopy(before), OURS)
    post = after["hooks"]["PostToolUse"]
    assert [g["hooks"][0]["command"] for g in post] == [OURS, "fmt"]  # same place, -P now
    assert after["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == OURS
    assert remove_hooks(after) == {"hooks": {"PostToolUse": [before["hooks"]["PostToolUse"][1]]}}


def test_uninstall_recognizes_an_older_mcp_entry_without_P(tmp_path: Path) -> None:
    mcp = tmp_path / ".mcp.json"
    old = {"type": "stdio", "command": "/opt/py/bin/python", "args": ["-m", "fresh_ls", "mcp"]}
    mcp.write_text(json.dumps({"mcpServers": {"db": {"command": "db"}, MCP_NAME: old}}))
    t = targets(tmp_path, user=False)
    assert install(t, mcp=True, python="/opt/py/bin/python") != []
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert list(servers) == ["db", MCP_NAME] and servers[MCP_NAME]["args"][:3] == [
        "-P",
        "-m",
        "fresh_ls",
    ]
    mcp.write_text(json.dumps({"mcpServers": {"db": {"command": "db"}, MCP_NAME: old}}))
    assert str(mcp) in uninstall(t)
    assert json.loads(mcp.read_text()) == {"mcpServers": {"db": {"command": "db"}}}


def test_install_writes_into_settings_that_have_no_hooks_key(tmp_path: Path) -> None:
    """It said "already installed; nothing changed" and wrote nothing (issue 21, 3)."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "sonnet"}))
    t = targets(tmp_path, user=False)
    assert install(t, mcp=False, python="/opt/py/bin/python") == [str(settings)]
    data = json.loads(settings.read_text())
    assert data["model"] == "sonnet" and is_ours(
        data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    )


def test_a_symlinked_settings_file_stays_a_symlink(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps({"model": "sonnet"}))
    settings = tmp_path / "proj" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.symlink_to(dotfiles)
    t = targets(tmp_path / "proj", user=False)
    assert install(t, mcp=False, python="/opt/py/bin/python") == [str(settings)]
    assert settings.is_symlink() and settings.resolve() == dotfiles.resolve()
    assert "hooks" in json.loads(dotfiles.read_text())
    assert uninstall(t) == [str(settings)]
    assert settings.is_symlink() and json.loads(dotfiles.read_text()) == {"model": "sonnet"}


def test_uninstall_removes_the_files_install_created(tmp_path: Path) -> None:
    t = targets(tmp_path, user=False)
    assert len(install(t, mcp=True, python="/opt/py/bin/python")) == 2
    assert uninstall(t) == [str(t.settings), str(t.mcp)]
    assert list(tmp_path.iterdir()) == []  # no {} files, no empty .claude/


def test_install_keeps_numbers_as_written(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        '{"cleanupPeriodDays": 1e5, "ratio": 0.10, "n": 12, "big": 1E+400, "hooks": {}}\n'
    )
    t = targets(tmp_path, user=False)
    install(t, mcp=False, python="/opt/py/bin/python")
    text = settings.read_text()
    for spelled in ('"cleanupPeriodDays": 1e5', '"ratio": 0.10', '"n": 12', '"big": 1E+400'):
        assert spelled in text, text
    uninstall(t)
    assert json.loads(settings.read_text().replace("1E+400", "1")) == {
        "cleanupPeriodDays": 1e5,
        "ratio": 0.10,
        "n": 12,
        "big": 1,
    }  # our "hooks" went with our entries
    assert "1e5" in settings.read_text()


# -- issue 22, 6: the project's shared files -------------------------------------------------


def _path_without_fresh_ls() -> str:
    bins = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    return os.pathsep.join(d for d in bins if not (Path(d) / "fresh-ls").exists())


def test_project_files_get_the_portable_command_when_fresh_ls_is_on_path(tmp_path: Path) -> None:
    """It wrote this clone's absolute interpreter path into the committed settings, which
    breaks every teammate; and said nothing about the server the hooks need."""
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    scripts = Path(sys.executable).parent
    if not (scripts / "fresh-ls").exists():
        pytest.skip("no fresh-ls console script next to this interpreter")
    env_path = os.pathsep.join([str(scripts), _path_without_fresh_ls()])
    done = subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", "install", "claude-code", "--mcp"],
        cwd=proj,
        env={**ENV, "HOME": str(home), "PATH": env_path},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    shared = (proj / ".claude" / "settings.json").read_text() + (proj / ".mcp.json").read_text()
    assert sys.executable not in shared and str(proj) not in shared
    settings = json.loads((proj / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == "fresh-ls hook claude-code"
    server = json.loads((proj / ".mcp.json").read_text())["mcpServers"][MCP_NAME]
    assert server == {"type": "stdio", "command": "fresh-ls", "args": ["mcp"]}
    assert "fresh-ls serve --root . --listen" in done.stdout  # what the hooks need


def test_project_files_name_this_interpreter_with_a_warning_when_fresh_ls_is_not_on_path(
    tmp_path: Path,
) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    done = subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", "install", "claude-code"],
        cwd=proj,
        env={**ENV, "HOME": str(home), "PATH": _path_without_fresh_ls()},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settings = json.loads((proj / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == hook_command(sys.executable)
    assert "not on PATH" in done.stderr and "work here only" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "running fresh-ls server" in done.stdout
