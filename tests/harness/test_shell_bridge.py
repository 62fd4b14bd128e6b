"""ShellBridge: which shell commands become views and writes, run for real in a scratch repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fresh_ls.client import SyncClient
from fresh_ls.harness.shell import ShellBridge


def _run(repo: Path, command: str) -> tuple[str, int]:
    done = subprocess.run(
        command, shell=True, cwd=repo, capture_output=True, text=True, check=False
    )
    return done.stdout + done.stderr, done.returncode


def _record(bridge: ShellBridge, repo: Path, view_id: str, command: str):  # type: ignore[no-untyped-def]
    output, code = _run(repo, command)
    return bridge.record(view_id, command, output, code)


@pytest.mark.parametrize(
    ("command", "first", "last"),
    [
        ("cat pkg/cart.py", 1, 14),
        ("cat -n pkg/cart.py", 1, 14),
        ("nl -ba pkg/cart.py", 1, 14),
        ("sed -n '8,10p' pkg/cart.py", 8, 10),
        ("nl -ba pkg/cart.py | sed -n '8,10p'", 8, 10),
        ("cat -n pkg/cart.py | sed -n '13,14p'", 13, 14),
        ("head -n 4 pkg/cart.py", 1, 4),
        ("tail -n 2 pkg/cart.py", 13, 14),
        ("cd pkg && sed -n '2,3p' cart.py", 2, 3),
        ("cat pkg/cart.py | head -n 2", 1, 2),
    ],
)
def test_reads_become_views(
    fresh: SyncClient, repo: Path, command: str, first: int, last: int
) -> None:
    bridge = ShellBridge(fresh, repo, "s")
    done = _record(bridge, repo, "call_1", command)
    assert done.wrote == [] and done.skipped == []
    [view] = done.views
    assert (view["viewId"], view["path"]) == ("call_1", "pkg/cart.py")
    assert (view["firstLine"], view["lastLine"], view["status"]) == (first, last, "fresh")


@pytest.mark.parametrize(
    "command",
    [
        "grep -n RATE pkg/cart.py",  # lines whose numbers are not a range
        "cat pkg/cart.py notes.md",  # two files
        "nl pkg/cart.py",  # plain nl skips blank lines: its numbers are not line numbers
        "cat pkg/missing.py",  # failed
        "ls pkg",
        "cat pkg/cart.py | grep def",
    ],
)
def test_other_commands_are_no_views(fresh: SyncClient, repo: Path, command: str) -> None:
    bridge = ShellBridge(fresh, repo, "s")
    done = _record(bridge, repo, "call_1", command)
    assert done.views == []
    assert fresh.stale("s") == {"views": []}


def test_a_read_outside_the_root_is_skipped(fresh: SyncClient, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("hello\n")
    bridge = ShellBridge(fresh, repo, "s")
    done = _record(bridge, repo, "call_1", f"cat {outside}")
    assert done.views == [] and done.skipped and "outside" in done.skipped[0]


def test_writes_are_reported_and_attributed(fresh: SyncClient, repo: Path) -> None:
    bridge = ShellBridge(fresh, repo, "s")
    _record(bridge, repo, "call_1", "sed -n '13,14p' pkg/cart.py")
    done = _record(bridge, repo, "call_2", "sed -i 's/return 1/return 2/' pkg/cart.py")
    assert done.wrote == ["pkg/cart.py"] and done.views == []
    done = _record(bridge, repo, "call_3", "echo '# more' >> notes.md")
    assert done.wrote == ["notes.md"]
    [view] = fresh.stale("s")["views"]
    assert view["status"] == "changed"
    assert view["units"][0]["changedBy"] == "self"


def test_an_agent_root_other_than_the_host_path(fresh: SyncClient, repo: Path) -> None:
    """Commands name the repository /testbed (a container); the server runs on ``repo``."""
    bridge = ShellBridge(fresh, repo, "s", agent_root="/testbed")
    assert bridge.rel("pkg/cart.py") == "pkg/cart.py"
    assert bridge.rel("/testbed/pkg/cart.py") == "pkg/cart.py"
    assert bridge.rel("/etc/passwd") is None
    output, code = _run(repo, "sed -n '8,10p' pkg/cart.py")
    done = bridge.record("call_1", "sed -n '8,10p' /testbed/pkg/cart.py", output, code)
    assert [v["path"] for v in done.views] == ["pkg/cart.py"]


def test_a_view_whose_text_already_differs_is_recorded_changed(
    fresh: SyncClient, repo: Path
) -> None:
    """The file changed between the command and the observe: the view is stale at once."""
    bridge = ShellBridge(fresh, repo, "s")
    output, code = _run(repo, "sed -n '8,10p' pkg/cart.py")
    (repo / "pkg" / "cart.py").write_text(
        (repo / "pkg" / "cart.py").read_text().replace("* RATE", "* RATE * 3")
    )
    done = bridge.record("call_1", "sed -n '8,10p' pkg/cart.py", output, code)
    assert done.views[0]["status"] == "changed"
