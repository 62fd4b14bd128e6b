"""A harness survives a restart of its server: the root keeps its token across restarts, and
an attached ``SyncClient`` / ``AsyncClient`` reconnects once, transparently, presenting the
token it attached with. Real server processes, killed with SIGKILL and started again."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from fresh_ls.client import AsyncClient, SyncClient, UnauthorizedError
from fresh_ls.server.endpoint import persistent_token
from fresh_ls.statedir import TOKEN_FILE

from ._support import Listening, make_workspace, read_endpoint, short_socket_path

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def servers():
    started: list[Listening] = []
    yield started
    for server in started:
        server.stop()


def _restart(servers: list[Listening], root: Path, address: str, delay_s: float = 0.0) -> None:
    """Start the root's server again, after ``delay_s`` (in the background when delayed, so
    the client's reconnection has to wait for it)."""

    def start() -> None:
        time.sleep(delay_s)
        servers.append(Listening(root, address))

    if delay_s:
        threading.Thread(target=start, daemon=True).start()
    else:
        start()


def test_the_token_is_kept_across_restarts_of_the_root(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    address = f"unix:{short_socket_path()}"
    first = Listening(root, address)
    servers.append(first)
    token = first.endpoint["token"]
    first.kill()
    _restart(servers, root, address)
    assert servers[-1].endpoint["token"] == token
    kept = root / ".fresh-ls" / TOKEN_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert kept.read_text().strip() == token


def test_a_token_file_that_is_not_private_is_replaced(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    token = persistent_token(state)
    assert persistent_token(state) == token
    os.chmod(state / TOKEN_FILE, 0o644)  # readable by others: it may have leaked
    fresh = persistent_token(state)
    assert fresh != token
    assert stat.S_IMODE((state / TOKEN_FILE).stat().st_mode) == 0o600
    (state / TOKEN_FILE).write_text("short\n")
    assert persistent_token(state) not in (fresh, "short")


def test_a_sync_client_survives_sigkill_and_restart(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    address = f"unix:{short_socket_path()}"
    servers.append(Listening(root, address))
    with SyncClient.attach(root) as client:
        client.observe("s", "cart.py", view_id="t", first_line=9, last_line=9)
        for _ in range(2):  # every drop gets its reconnection, not only the first
            pid = servers[-1].pid
            servers[-1].kill()
            _restart(servers, root, address, delay_s=0.5)
            views = client.stale("s")["views"]
            assert [v["viewId"] for v in views] == ["t"]
            assert read_endpoint(root)["pid"] != pid
        client.did_write("cart.py", session="s")
        assert client.status()["sessions"][0]["session"] == "s"


def test_an_async_client_survives_sigkill_and_restart(tmp_path: Path, servers) -> None:
    root = make_workspace(tmp_path / "ws")
    address = f"unix:{short_socket_path()}"
    servers.append(Listening(root, address))

    async def scenario() -> None:
        async with await AsyncClient.attach(root) as client:
            await client.observe("s", "cart.py", view_id="t", first_line=9, last_line=9)
            servers[-1].kill()
            _restart(servers, root, address, delay_s=0.5)
            # Requests that fail together share one reconnection.
            answers = await asyncio.gather(client.stale("s"), client.status(), client.stale("s"))
            assert [v["viewId"] for v in answers[0]["views"]] == ["t"]
            assert answers[1]["sessions"][0]["views"] == 1
            assert client._generation == 1
            await client.did_write("cart.py", session="s")
            assert (await client.stale("s"))["views"][0]["status"] == "fresh"

    asyncio.run(scenario())


def test_the_client_presents_the_token_it_attached_with(tmp_path: Path, servers) -> None:
    """A server that came back with another token (its token file was removed) refuses the
    reconnection: the client does not pick up whatever the new endpoint file says."""
    root = make_workspace(tmp_path / "ws")
    address = f"unix:{short_socket_path()}"
    servers.append(Listening(root, address))
    with SyncClient.attach(root) as client:
        client.status()
        servers[-1].kill()
        (root / ".fresh-ls" / TOKEN_FILE).unlink()
        _restart(servers, root, address)
        with pytest.raises(UnauthorizedError):
            client.status()


def test_an_observe_sent_again_replaces_its_view(tmp_path: Path, servers, monkeypatch) -> None:
    """A client mints the id of an observe that names none, so the same observe sent again
    (as after a reconnection whose answer was lost) replaces the view instead of adding a
    second one. Two sends with the one id the client minted: one view."""
    from fresh_ls import ids

    root = make_workspace(tmp_path / "ws")
    servers.append(Listening(root, f"unix:{short_socket_path()}"))
    monkeypatch.setattr(ids, "view_id", lambda: "v-minted0000")
    with SyncClient.attach(root) as client:
        first = client.observe("s", "cart.py", first_line=9, last_line=9)
        again = client.observe("s", "cart.py", first_line=9, last_line=9)
        assert first["viewId"] == again["viewId"] == "v-minted0000"
        assert [v["viewId"] for v in client.stale("s")["views"]] == ["v-minted0000"]
    monkeypatch.undo()
    with SyncClient.attach(root) as client:  # the real minting: a new id each time
        a = client.observe("s", "cart.py", first_line=9, last_line=9)["viewId"]
        b = client.observe("s", "cart.py", first_line=9, last_line=9)["viewId"]
        assert a != b and a.startswith("v-") and len(a) == 14
