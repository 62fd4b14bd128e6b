"""No tracked file may name an absolute path of the machine it was written on.

A clone in another folder must pass ``make test``: a hard-coded interpreter or a shared
folder cited by its absolute path works only where it was written, and CI stayed green
once only because that folder happened to exist. This test reads every tracked file and
fails on the prefixes developer machines use, and on this clone's own location.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: Prefixes of developer and CI machines (the workplace, root's home, macOS homes, a
#: Windows profile). ``/home/<name>`` is not listed: tests use it as made-up data.
# Spelled in pieces so this file does not name the paths it looks for.
_S = "/"
MACHINE_PREFIXES = re.compile(
    r"(?<![\w.~])("
    + "|".join(f"{_S}{top}{_S}[\\w.-]+" for top in ("work", "root", "Users"))
    + r"|[A-Z]:\\Users\\)"
)


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: nothing tracked to check")
    return [REPO / name for name in out.decode().split("\0") if name]


def _local_paths() -> list[str]:
    """This clone's own folder, its parent and the home folder: any of them in a tracked
    file means the file was written for this machine only."""
    paths = {str(REPO) + "/", str(REPO.parent) + "/"}
    home = os.environ.get("HOME")
    if home and home not in ("/", ""):
        paths.add(home.rstrip("/") + "/")
    # A clone straight under a shared system folder says nothing about the machine.
    common = {"/", "//", "/tmp/", "/var/tmp/", "/home/"}
    return sorted(p for p in paths if p not in common)


def test_no_tracked_file_names_a_machine_path() -> None:
    local = _local_paths()
    found: list[str] = []
    for path in _tracked_files():
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(REPO)
        for n, line in enumerate(text.splitlines(), 1):
            m = MACHINE_PREFIXES.search(line)
            hit = m.group(0) if m else next((p for p in local if p in line), None)
            if hit:
                found.append(f"{rel}:{n}: names {hit!r}")
    assert not found, (
        "tracked files name absolute paths of a machine; use sys.executable, paths relative "
        "to the repo, or ../shared/...:\n" + "\n".join(found[:50])
    )


def test_the_check_catches_what_it_should() -> None:
    """The pattern must fire on the forms that broke a clone once, and not on made-up data."""
    w, r = _S + "work" + _S, _S + "root" + _S
    assert MACHINE_PREFIXES.search(f'DEFAULT_PYTHON = "{w}main/.venv/bin/python"')
    assert MACHINE_PREFIXES.search(f"see {w}shared/design/PROTOCOL.md")
    assert MACHINE_PREFIXES.search(f"{r}.cache/x")
    assert MACHINE_PREFIXES.search("C:\\Users\\me")
    assert not MACHINE_PREFIXES.search("../shared/design/PROTOCOL.md")
    assert not MACHINE_PREFIXES.search('home: "/home/me"')
