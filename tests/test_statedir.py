"""The state dir's names are defined once per language, and the two definitions agree."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from fresh_ls import statedir

REPO = Path(__file__).resolve().parents[1]


def test_the_extension_names_the_same_state_dir_and_endpoint_file() -> None:
    config = (REPO / "vscode-ext" / "src" / "config.ts").read_text("utf-8")
    found = dict(re.findall(r'^export const (STATE_DIR|ENDPOINT_FILE) = "([^"]+)";$', config, re.M))
    assert found == {"STATE_DIR": statedir.STATE_DIR_NAME, "ENDPOINT_FILE": statedir.ENDPOINT_FILE}


def test_no_other_python_module_spells_the_state_dir() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "fresh_ls"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    spelled = []
    for rel in tracked:
        if not rel.endswith(".py") or rel == "fresh_ls/statedir.py":
            continue
        text = (REPO / rel).read_text("utf-8")
        if re.search(r"""["']\.fresh-ls["']|["']endpoint\.json["']|["']views\.sqlite3["']""", text):
            spelled.append(rel)
    assert spelled == [], spelled
