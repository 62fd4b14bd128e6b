"""Persistence and the one-server-per-root rule, over real processes: SIGKILL and restart,
a second ``serve`` on a live root, stdio and socket clients sharing one engine, and the
endpoint file."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from fresh_ls.client import SyncClient

from ._support import (
    WAIT_S,
    Listening,
    RawConn,
    disk_lines,
    make_workspace,
    read_endpoint,
    replace_in,
    serve_command,
    short_socket_path,
    stop_lsp,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def servers():
    """Listening servers started by a test; each is stopped (or already dead) at the end."""
    started: list[Listening] = []
    yield started
    for server in started:
        server.stop()


def _listen(servers: list[Listening], root: Path, address: str, *args: str) -> Listening:
    server = Listening(root, address, *args)
    servers.append(server)
    return server


def _observe_set(client: SyncClient) -> None:
    client.observe("s", "cart.py", view_id="t", first_line=9, last_line=9)
    client.observe("s", "cart.py", view_id="h", first_line=13, last_line=14)
    client.observe("s", "util.py", view_id="w")
    client.observe("other", "notes.md", view_id="n", first_line=1, last_line=1, kind="editResult")


def _observed(stale: dict) -> dict[str, tuple]:
    return {
        v["viewId"]: (
            v["path"],
            v["kind"],
            v["observed"]["firstLine"],
            v["observed"]["lastLine"],
            v["observed"]["sha256"],
            tuple(u["unitId"] for u in v["units"]),
        )
        for v in stale["views"]
    }


def test_sigkill_then_restart_serves_every_acknowledged_view(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    sock = short_socket_path()
    first = _listen(servers, root, f"unix:{sock}")
    client = SyncClient.attach(root)
    _observe_set(client)
    before_s, before_other = client.stale("s"), client.stale("other")

    first.kill()
    with contextlib.suppress(Exception):
        client.close()
    state = root / ".fresh-ls"
    assert (state / "server.lock").exists()
    assert read_endpoint(root) == first.endpoint  # left behind by the dead server
    replace_in(root / "cart.py", "quantity * RATE", "quantity * RATE * 2")

    second = _listen(servers, root, f"unix:{sock}")
    assert second.pid != first.pid
    with SyncClient.attach(root) as again:
        after_s, after_other = again.stale("s"), again.stale("other")
        assert _observed(after_s) == _observed(before_s)
        assert _observed(after_other) == _observed(before_other)
        assert {v["viewId"]: v["status"] for v in after_s["views"]} == {
            "t": "changed",
            "h": "fresh",
            "w": "fresh",
        }
        assert [v["status"] for v in after_other["views"]] == ["fresh"]
        assert again.status()["sessions"] == [
            {"session": "other", "views": 1, "stale": 0},
            {"session": "s", "views": 3, "stale": 1},
        ]
        projection = again.project("s")
        [entry] = projection["entries"]
        assert entry["text"].encode() == disk_lines(root / "cart.py", 8, 10)
        assert again.commit(projection["planId"]) == {"ok": True, "changed": []}
    assert second.stop() == 0
    assert read_endpoint(root) is None


def test_what_a_session_wrote_still_counts_as_seen_after_sigkill(tmp_path: Path, servers) -> None:
    """``fresh/checkEdit`` knows the lines a session wrote itself (``fresh/didWrite``); a
    server killed and started again still does, rather than refusing the agent's next edit
    of the very lines it just wrote."""
    root = make_workspace(tmp_path / "ws")
    sock = short_socket_path()
    first = _listen(servers, root, f"unix:{sock}")
    client = SyncClient.attach(root)
    client.observe("a", "cart.py", view_id="read", first_line=8, last_line=10)
    replace_in(root / "cart.py", "return subtotal", "return subtotal + 1")
    client.did_write("cart.py", session="a")
    before = client.check_edit("a", "cart.py", old_text="return subtotal + 1")
    assert (before["verdict"], before["reason"]) == ("allow", "known")
    # The notification took its turn before this answer, so its write is committed.
    first.kill()
    with contextlib.suppress(Exception):
        client.close()

    _listen(servers, root, f"unix:{sock}")
    with SyncClient.attach(root) as again:
        after = again.check_edit("a", "cart.py", old_text="return subtotal + 1")
        assert (after["verdict"], after["reason"]) == ("allow", "known")
        # Another session never saw that write; forgetting "a" forgets its writes too.
        assert again.check_edit("b", "cart.py", old_text="return subtotal + 1")["reason"] == (
            "unseen"
        )
        assert again.forget("a")["forgotten"] == 1
        gone = again.check_edit("a", "cart.py", old_text="return subtotal + 1")
        assert gone["verdict"] == "deny"
        # A session that only wrote (a file it created) holds no view, and forgetting it
        # still forgets what it wrote.
        (root / "made.py").write_text("def made():\n    return 0\n")
        again.did_write("made.py", session="c")
        assert again.check_edit("c", "made.py", whole_file=True)["verdict"] == "allow"
        assert again.forget("c")["forgotten"] == 0
        assert again.check_edit("c", "made.py", whole_file=True)["verdict"] == "deny"


def test_every_acknowledged_observe_survives_sigkill(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    first = _listen(servers, root, f"unix:{short_socket_path()}")
    client = SyncClient.attach(root)
    for i in range(40):
        client.observe("s", "cart.py", view_id=f"v{i}", first_line=1 + i % 14, last_line=14)
    client.forget("s", ["v0", "v1"])
    first.kill()  # right after the last acknowledgement
    with contextlib.suppress(Exception):
        client.close()
    _listen(servers, root, f"unix:{short_socket_path()}")
    with SyncClient.attach(root) as again:
        ids = [v["viewId"] for v in again.stale("s")["views"]]
    assert ids == [f"v{i}" for i in range(2, 40)]


async def test_sigkill_then_restart_over_stdio(tmp_path: Path, servers, start) -> None:
    root = make_workspace(tmp_path / "ws")
    first = _listen(servers, root, f"unix:{short_socket_path()}")
    client = SyncClient.attach(root)
    _observe_set(client)
    before = client.stale("s")
    first.kill()
    with contextlib.suppress(Exception):
        client.close()
    (root / "util.py").unlink()

    conn = await start(root, "--no-watch")
    after = await conn.stale()
    assert _observed(after) == _observed(before)
    assert {v["viewId"]: v["status"] for v in after["views"]} == {
        "t": "fresh",
        "h": "fresh",
        "w": "deleted",
    }
    ep = read_endpoint(root)
    assert ep is None or ep.get("pid") != first.pid  # the dead server's endpoint is gone


async def test_views_survive_a_graceful_restart_too(tmp_path: Path, start) -> None:
    root = make_workspace(tmp_path / "ws")
    one = await start(root, "--no-watch")
    await one.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await one.observe(path="cart.py", viewId="gone", firstLine=1, lastLine=1)
    await one.forget(viewIds=["gone"])
    await stop_lsp(one)
    two = await start(root, "--no-watch")
    assert [v["viewId"] for v in (await two.stale())["views"]] == ["t"]


# -- one server per root ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", [["--stdio"], ["--listen", "unix:{sock}"], ["--listen"]])
def test_a_second_serve_on_a_live_root_exits_non_zero_naming_the_endpoint(
    tmp_path: Path, servers, mode: list[str]
) -> None:
    root = make_workspace(tmp_path / "ws")
    live = _listen(servers, root, f"unix:{short_socket_path()}")
    with SyncClient.attach(root) as client:
        client.observe("s", "cart.py", view_id="t", first_line=9, last_line=9)
    args = [a.replace("{sock}", str(short_socket_path())) for a in mode]
    second = subprocess.run(
        serve_command(root, *args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=WAIT_S,
    )
    assert second.returncode != 0
    message = second.stderr.decode()
    assert live.endpoint["address"] in message, message
    assert str(live.pid) in message, message
    assert live.endpoint["token"] not in message
    # The live server is untouched: same endpoint, same views.
    assert read_endpoint(root) == live.endpoint
    with SyncClient.attach(root) as client:
        assert [v["viewId"] for v in client.stale("s")["views"]] == ["t"]


async def test_a_second_serve_next_to_a_stdio_only_server_exits_non_zero(
    tmp_path: Path, start
) -> None:
    root = make_workspace(tmp_path / "ws")
    conn = await start(root, "--no-watch")
    await conn.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    second = subprocess.run(
        serve_command(root, "--stdio"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=WAIT_S,
    )
    assert second.returncode != 0
    assert "already" in second.stderr.decode()
    assert [v["viewId"] for v in (await conn.stale())["views"]] == ["t"]


# -- one engine for every connection ----------------------------------------------------------


async def test_stdio_and_socket_clients_share_one_engine(tmp_path: Path, start) -> None:
    root = make_workspace(tmp_path / "ws")
    sock = short_socket_path()
    stdio = await start(root, "--no-watch", "--listen", f"unix:{sock}")
    await stdio.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)

    with SyncClient.attach(root) as socket_client:
        socket_client.observe("other", "cart.py", view_id="o", first_line=13, last_line=14)
        replace_in(root / "cart.py", "quantity * RATE", "quantity * RATE * 2")
        socket_client.did_write("cart.py", session="other")
        socket_client.status()  # the didWrite before it has been handled

        seen_on_stdio = await stdio.view("t")
        seen_on_socket = socket_client.stale("s")["views"][0]
        for view in (seen_on_stdio, seen_on_socket):
            assert view["status"] == "changed"
            assert view["units"][0]["changedBy"] == "session:other"
        assert seen_on_stdio == seen_on_socket
        # The stdio client hears about it although the write came over the socket.
        payload = await stdio.wait_invalidation(lambda p: p["session"] == "s")
        assert payload == {"session": "s", "viewIds": ["t"], "path": "cart.py"}
        # And the socket client's own session is visible from stdio.
        assert (await stdio.status())["sessions"] == [
            {"session": "other", "views": 1, "stale": 0},
            {"session": "s", "views": 1, "stale": 1},
        ]
        other = (await stdio.stale("other"))["views"][0]
        assert other["status"] == "fresh"


async def test_an_editor_on_one_connection_dirties_views_seen_on_another(
    tmp_path: Path, start
) -> None:
    root = make_workspace(tmp_path / "ws")
    editor = await start(root, "--no-watch", "--listen", f"unix:{short_socket_path()}")
    editor.did_open("cart.py", (root / "cart.py").read_text())
    editor.did_change("cart.py", 2, ((0, 7), (0, 9), "11"))
    await editor.sync_point()
    with SyncClient.attach(root) as agent:
        agent.observe("s", "cart.py", view_id="t", first_line=9, last_line=9)
        view = agent.stale("s")["views"][0]
        assert (view["status"], view["editorDirty"]) == ("fresh", True)


# -- the endpoint file ------------------------------------------------------------------------


def test_endpoint_json_is_private_and_names_address_token_pid(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    sock = short_socket_path()
    server = _listen(servers, root, f"unix:{sock}")
    path = root / ".fresh-ls" / "endpoint.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert set(data) == {"address", "token", "pid"}
    assert data["address"] == f"unix:{sock}"
    assert data["pid"] == server.pid
    assert isinstance(data["token"], str) and len(data["token"]) >= 16
    conn = RawConn.connect(data["address"])
    assert "result" in conn.initialize({"token": data["token"]})
    conn.close()
    assert server.stop() == 0
    assert not path.exists()
    assert not sock.exists()


def test_tcp_port_zero_picks_a_free_port(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    server = _listen(servers, root, "tcp:127.0.0.1:0")
    m = re.fullmatch(r"tcp:127\.0\.0\.1:(\d+)", server.endpoint["address"])
    assert m and int(m.group(1)) > 0
    with SyncClient.attach(root) as client:
        client.observe("s", "cart.py", view_id="t", first_line=9, last_line=9)
        assert client.status()["sessions"] == [{"session": "s", "views": 1, "stale": 0}]
    conn = RawConn.connect(server.endpoint["address"])
    assert conn.initialize({"token": "wrong"})["error"]["code"] == -32013
    conn.close()


def test_listen_without_address_uses_a_unix_socket(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    server = _listen(servers, root, "")
    address = server.endpoint["address"]
    assert address.startswith("unix:")
    sock = Path(address[len("unix:") :])
    assert sock.is_absolute() and stat.S_ISSOCK(os.stat(sock).st_mode)
    with SyncClient.attach(root) as client:
        assert client.status()["root"] == str(root)


def test_sigterm_with_clients_connected_stops_cleanly(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    sock = short_socket_path()
    server = _listen(servers, root, f"unix:{sock}")
    clients = [server.connect() for _ in range(2)]
    for conn in clients:
        assert "result" in conn.initialize({"token": server.endpoint["token"]})
    assert "result" in clients[0].call(
        "fresh/observe", {"session": "s", "path": "cart.py", "viewId": "t", "firstLine": 9}
    )
    assert server.stop() == 0
    for conn in clients:
        while (message := conn.read()) is not None:  # end of stream, not a hang
            assert message.get("method") == "fresh/didInvalidate", message
        conn.close()
    assert read_endpoint(root) is None
    assert not sock.exists()
    assert "Traceback" not in server.log.read_text(), server.log.read_text()
