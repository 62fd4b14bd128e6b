"""Hardening over real processes: files swapped for symlinks that leave the root after they
were observed, private state files, and requests whose cost could explode with their size."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fresh_ls.client import InvalidParamsError, SyncClient

from ._support import (
    CART_PY,
    WAIT_S,
    Listening,
    make_workspace,
    serve_command,
    short_socket_path,
)

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


# -- private state files -----------------------------------------------------------------------


@pytest.fixture
def open_umask():
    """The laxest umask, so every mode the server ends with is one it set itself."""
    old = os.umask(0)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _assert_private(state: Path) -> None:
    assert _mode(state) == 0o700
    db = state / "views.sqlite3"
    sides = [state / "views.sqlite3-wal", state / "views.sqlite3-shm"]
    for path in [db, *sides, state / "server.lock", state / "endpoint.json"]:
        assert path.exists(), path
        assert _mode(path) == 0o600, (path, oct(_mode(path)))


def test_the_state_dir_and_database_files_are_private(tmp_path: Path, servers, open_umask) -> None:
    root = make_workspace(tmp_path / "ws")
    server = Listening(root, f"unix:{short_socket_path()}", "--no-watch")
    servers.append(server)
    state = root / ".fresh-ls"
    _assert_private(state)
    with SyncClient.attach(root) as client:
        for i in range(20):
            client.observe("s", "cart.py", view_id=f"v{i}", first_line=1 + i % 14)
        client.forget("s", ["v0"])
        _assert_private(state)


def test_an_existing_lax_state_dir_and_database_are_tightened(
    tmp_path: Path, servers, open_umask
) -> None:
    root = make_workspace(tmp_path / "ws")
    server = Listening(root, f"unix:{short_socket_path()}", "--no-watch")
    with SyncClient.attach(root) as client:
        client.observe("s", "cart.py", view_id="kept")
    assert server.stop() == 0
    state = root / ".fresh-ls"
    os.chmod(state, 0o755)  # as an older fresh-ls left them
    for path in state.iterdir():
        os.chmod(path, 0o644)
    server = Listening(root, f"unix:{short_socket_path()}", "--no-watch")
    servers.append(server)
    with SyncClient.attach(root) as client:
        assert [v["viewId"] for v in client.stale("s")["views"]] == ["kept"]
        client.observe("s", "util.py", view_id="new")
        _assert_private(state)


def test_a_state_dir_that_is_not_ours_is_left_as_it_is(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "someone-elses.txt").write_text("hello\n")
    os.chmod(shared, 0o755)
    cmd = serve_command(root, "--listen", f"unix:{short_socket_path()}", "--no-watch")
    proc = subprocess.Popen([*cmd, "--state-dir", str(shared)], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + WAIT_S
        while not (shared / "endpoint.json").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        assert _mode(shared) == 0o755
        assert _mode(shared / "views.sqlite3") == 0o600
    finally:
        proc.terminate()
        proc.wait(timeout=WAIT_S)


# -- one request cannot stall the others -------------------------------------------------------

#: A sanity bound for one cheap request while another client sends a costly one (never a
#: performance threshold: unbounded, these requests took many seconds).
ANSWER_S = 2.0


def _answered_meanwhile(root: Path, heavy: Callable[[SyncClient], object]) -> object:
    """Run ``heavy`` on one client while another asks ``fresh/status`` over and over;
    every status must be answered within ``ANSWER_S``. Returns what ``heavy`` returned."""
    outcome: dict[str, object] = {}

    def run() -> None:
        with SyncClient.attach(root) as busy:
            try:
                outcome["result"] = heavy(busy)
            except Exception as exc:
                outcome["error"] = exc

    with SyncClient.attach(root) as other:
        other.status()
        worker = threading.Thread(target=run)
        worker.start()
        time.sleep(0.1)  # let the heavy request reach the server first
        slowest = 0.0
        while worker.is_alive() or slowest == 0.0:
            t0 = time.monotonic()
            other.status()
            slowest = max(slowest, time.monotonic() - t0)
            assert slowest < ANSWER_S, f"fresh/status took {slowest:.1f} s meanwhile"
            time.sleep(0.05)
        worker.join(WAIT_S)
    if "error" in outcome:
        return outcome["error"]
    return outcome["result"]


def test_a_very_long_path_is_refused_before_it_is_resolved(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    servers.append(Listening(root, f"unix:{short_socket_path()}", "--no-watch"))
    long_path = "a/" * 200_000 + "cart.py"  # about 400 KiB

    def heavy(client: SyncClient) -> object:
        client.did_write(long_path, session="s")
        return client.observe("s", long_path, view_id="long")

    error = _answered_meanwhile(root, heavy)
    assert isinstance(error, InvalidParamsError), error
    assert "path" in error.message and "4096 bytes" in error.message, error.message
    with SyncClient.attach(root) as client:
        assert client.observe("s", "cart.py", view_id="ok")["status"] == "fresh"
        assert [v["viewId"] for v in client.stale("s")["views"]] == ["ok"]


def test_an_observe_whose_text_is_one_huge_line_does_not_stall_other_clients(
    tmp_path: Path, servers
) -> None:
    root = make_workspace(tmp_path / "ws", {"big.py": CART_PY * 200})  # 2800 lines
    servers.append(Listening(root, f"unix:{short_socket_path()}", "--no-watch"))
    huge = "x" * (4 * 1024 * 1024 - 64)  # one line, just under the size limit of a file

    def heavy(client: SyncClient) -> object:
        # line 1 is text outside any definition, line 9 is inside Cart.total
        text_view = client.observe("s", "big.py", view_id="t", first_line=1, last_line=1, text=huge)
        symbol_view = client.observe(
            "s", "big.py", view_id="m", first_line=9, last_line=9, text=huge
        )
        return text_view, symbol_view, client.stale("s"), client.project("s")

    result = _answered_meanwhile(root, heavy)
    assert isinstance(result, tuple), result
    text_view, symbol_view, stale, projection = result
    assert text_view["status"] in ("deleted", "ambiguous", "changed")
    assert symbol_view["status"] == "changed"
    assert {v["viewId"]: v["status"] != "fresh" for v in stale["views"]} == {"t": True, "m": True}
    assert all("x" * 100 not in e["text"] for e in projection["entries"])


def test_an_observe_text_larger_than_a_file_may_be_is_refused(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    servers.append(Listening(root, f"unix:{short_socket_path()}", "--no-watch"))
    with SyncClient.attach(root) as client:
        with pytest.raises(InvalidParamsError) as info:
            client.observe("s", "cart.py", first_line=1, last_line=1, text="x" * (5 << 20))
        assert "text" in info.value.message and "4194304 bytes" in info.value.message
        assert client.stale("s") == {"views": []}
