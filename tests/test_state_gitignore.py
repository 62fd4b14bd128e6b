"""The state dir keeps itself out of git: ``git status`` of a repo whose server created its
state dir shows nothing of it (the token and the database stay out of ``git add .``)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from fresh_ls import statedir
from fresh_ls.server.endpoint import make_private_dir

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def test_a_new_state_dir_is_ignored_by_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "app.py").write_text("x = 1\n")
    state = statedir.default_state_dir(repo)
    make_private_dir(state)
    (state / statedir.ENDPOINT_FILE).write_text('{"token": "secret"}')
    (state / statedir.DATABASE_FILE).write_text("code")
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == "?? app.py\n"
    ignore = state / statedir.GITIGNORE_FILE
    assert ignore.read_text() == statedir.GITIGNORE_TEXT
    assert stat.S_IMODE(os.stat(ignore).st_mode) == 0o600


def test_an_edited_gitignore_is_kept_and_a_missing_one_comes_back(tmp_path: Path) -> None:
    state = tmp_path / "state"
    make_private_dir(state)
    ignore = state / statedir.GITIGNORE_FILE
    ignore.write_text("*\n!notes.txt\n")
    make_private_dir(state)
    assert ignore.read_text() == "*\n!notes.txt\n"
    ignore.unlink()
    make_private_dir(state)
    assert ignore.read_text() == statedir.GITIGNORE_TEXT


def test_a_foreign_directory_gets_no_gitignore(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    (shared / "someone-elses.txt").write_text("hi")
    make_private_dir(shared)
    assert not (shared / statedir.GITIGNORE_FILE).exists()


def test_a_private_foreign_directory_is_left_alone(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    (keys / "id_ed25519").write_text("secret")
    make_private_dir(keys)
    assert sorted(p.name for p in keys.iterdir()) == ["id_ed25519"]
