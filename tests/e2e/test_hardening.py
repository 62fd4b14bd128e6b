"""Hardening over real processes: files swapped for symlinks that leave the root after they
were observed, private state files, and requests whose cost could explode with their size."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest

from fresh_ls.client import SyncClient

from ._support import Listening, make_workspace, short_socket_path

pytestmark = pytest.mark.timeout(120)

SECRET = "TOP-SECRET-abc123\n"


@pytest.fixture
def servers():
    started: list[Listening] = []
    yield started
    for server in started:
        server.stop()


def _outside(tmp_path: Path) -> Path:
    """A directory beside the root holding a secret file and a secret ``sub/`` tree."""
    out = tmp_path / "outside"
    (out / "sub").mkdir(parents=True)
    (out / "secret.py").write_text(SECRET)
    (out / "sub" / "mod.py").write_text(SECRET)
    return out


def _assert_unreadable_and_no_secret(stale: dict, projection: dict, view_ids: set[str]) -> None:
    statuses = {v["viewId"]: v["status"] for v in stale["views"]}
    for view_id in view_ids:
        assert statuses[view_id] == "unreadable", stale
    units = [u for v in stale["views"] if v["viewId"] in view_ids for u in v["units"]]
    assert units and all(u["status"] == "unreadable" for u in units), stale
    assert all(u["current"] is None and u["diff"] is None for u in units), stale
    assert "TOP-SECRET" not in repr(stale)
    assert "TOP-SECRET" not in repr(projection)
    served = {vid for e in projection["entries"] for vid in e["viewIds"]}
    assert not served & view_ids, projection
    omitted = [o for o in projection["omitted"] if set(o["viewIds"]) & view_ids]
    assert omitted and all(o["reason"] == "unreadable" for o in omitted), projection


def _swap(root: Path, out: Path) -> None:
    """cart.py becomes a symlink to a secret file outside the root; the directory ``pkg``
    becomes a symlink to a secret directory outside the root."""
    (root / "cart.py").unlink()
    os.symlink(out / "secret.py", root / "cart.py")
    shutil.rmtree(root / "pkg")
    os.symlink(out / "sub", root / "pkg")


def test_a_file_or_directory_swapped_for_a_symlink_outside_the_root_is_never_read(
    tmp_path: Path, servers
) -> None:
    root = make_workspace(tmp_path / "ws")
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    out = _outside(tmp_path)
    first = Listening(root, f"unix:{short_socket_path()}", "--no-watch")
    servers.append(first)
    client = SyncClient.attach(root)
    client.observe("s", "cart.py", view_id="whole")
    client.observe("s", "cart.py", view_id="range", first_line=8, last_line=10)
    client.observe("s", "pkg/mod.py", view_id="dir")
    assert {v["status"] for v in client.stale("s")["views"]} == {"fresh"}

    _swap(root, out)
    ids = {"whole", "range", "dir"}
    stale = client.stale("s")
    projection = client.project("s", policy="all")
    _assert_unreadable_and_no_secret(stale, projection, ids)
    assert client.commit(projection["planId"])["ok"] is True  # no entry depends on them

    first.kill()
    with contextlib.suppress(Exception):
        client.close()
    second = Listening(root, f"unix:{short_socket_path()}", "--no-watch")
    servers.append(second)
    with SyncClient.attach(root) as again:
        _assert_unreadable_and_no_secret(again.stale("s"), again.project("s", policy="all"), ids)


def test_a_symlink_swapped_in_that_stays_inside_the_root_is_still_followed(
    tmp_path: Path, servers
) -> None:
    root = make_workspace(tmp_path / "ws")
    server = Listening(root, f"unix:{short_socket_path()}", "--no-watch")
    servers.append(server)
    with SyncClient.attach(root) as client:
        client.observe("s", "util.py", view_id="u")
        shutil.copy(root / "util.py", root / "util_copy.py")
        (root / "util.py").unlink()
        os.symlink("util_copy.py", root / "util.py")
        [view] = client.stale("s")["views"]
        assert view["status"] == "fresh"
