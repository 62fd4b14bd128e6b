"""The harness clients in ``fresh_ls.client`` against real servers: attach through the
endpoint file (sync and async), spawn over stdio, errors carry the contract's codes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fresh_ls.client import AsyncClient, FreshClientError, SyncClient

from ._support import WAIT_S, Listening, make_workspace, replace_in, short_socket_path

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def listening(tmp_path: Path):
    root = make_workspace(tmp_path / "ws")
    server = Listening(root, f"unix:{short_socket_path()}", "--no-watch")
    yield server
    server.stop()


def test_sync_client_attach_runs_every_request(listening: Listening) -> None:
    root = listening.root
    with SyncClient.attach(root, budget_bytes=4096, policy="all") as client:
        result = client.observe("s", "cart.py", view_id="t", first_line=9, last_line=9)
        assert (result["viewId"], result["units"][0]["name"]) == ("t", "Cart.total")
        replace_in(root / "cart.py", "quantity * RATE", "quantity * RATE * 2")
        client.did_write("cart.py", session="s")
        view = client.stale("s", ["t"])["views"][0]
        assert (view["status"], view["units"][0]["changedBy"]) == ("changed", "self")
        plan = client.project("s")
        assert plan["budgetBytes"] == 4096  # from initializationOptions
        assert client.commit(plan["planId"]) == {"ok": True, "changed": []}
        assert client.forget("s", ["t", "x"]) == {"forgotten": 1}
        assert client.status()["sessions"] == []
        # notifications that arrived during calls are kept
        assert {"session": "s", "viewIds": ["t"], "path": "cart.py"} in [
            n["params"] for n in client.notifications if n["method"] == "fresh/didInvalidate"
        ]


def test_sync_client_errors_carry_the_code(listening: Listening) -> None:
    with SyncClient.attach(listening.root) as client:
        with pytest.raises(FreshClientError) as outside:
            client.observe("s", "../x.py")
        assert outside.value.code == -32010
        with pytest.raises(FreshClientError) as unknown:
            client.commit("p-none")
        assert unknown.value.code == -32012
        with pytest.raises(FreshClientError) as bad:
            client.observe("s", "cart.py", first_line=0)
        assert bad.value.code == -32602
        assert client.status()["version"]


def test_sync_client_attach_without_a_server_says_how_to_start_one(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    with pytest.raises(FreshClientError) as err:
        SyncClient.attach(root)
    assert err.value.code is None
    assert "serve" in err.value.message and "endpoint.json" in err.value.message


def test_sync_client_spawn_over_stdio(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    client = SyncClient.spawn(root, extra_args=["--no-watch"])
    try:
        client.observe("s", "util.py", view_id="u")
        assert client.stale("s")["views"][0]["status"] == "fresh"
    finally:
        client.close()
    process = client._closer
    assert process.wait(timeout=WAIT_S) == 0


async def test_async_client_attach_runs_every_request(listening: Listening) -> None:
    root = listening.root
    client = await AsyncClient.attach(root)
    try:
        await client.observe("s", "cart.py", view_id="t", first_line=9, last_line=9)
        await client.notifications.get()  # the observe's own fresh/didInvalidate
        replace_in(root / "cart.py", "quantity * RATE", "quantity * RATE * 2")
        await client.did_write("cart.py", session="other")
        pushed = await asyncio.wait_for(client.notifications.get(), WAIT_S)
        assert pushed["params"] == {"session": "s", "viewIds": ["t"], "path": "cart.py"}
        view = (await client.stale("s"))["views"][0]
        assert (view["status"], view["units"][0]["changedBy"]) == ("changed", "session:other")
        plan = await client.project("s", budget_bytes=10_000)
        assert plan["entries"][0]["name"] == "Cart.total"
        assert await client.commit(plan["planId"]) == {"ok": True, "changed": []}
        with pytest.raises(FreshClientError) as err:
            await client.stale("s", ["nope"])
        assert err.value.code == -32012
        assert await client.forget("s") == {"forgotten": 1}
        assert (await client.status())["sessions"] == []
    finally:
        await client.close()
