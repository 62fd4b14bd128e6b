"""fresh_ls.client: one typed method per request, exceptions that name the code, both
clients, attach and spawn."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fresh_ls.client import (
    AsyncClient,
    ConnectionClosedError,
    FileUnreadableError,
    FreshClientError,
    InvalidParamsError,
    PathOutsideRootError,
    SyncClient,
    UnauthorizedError,
    UnknownIdError,
)


def test_errors_carry_their_code_and_class(fresh: SyncClient) -> None:
    cases = [
        (lambda: fresh.observe("s", "../x.py"), PathOutsideRootError, -32010),
        (lambda: fresh.observe("s", "pkg/missing.py"), FileUnreadableError, -32011),
        (lambda: fresh.commit("p-nope"), UnknownIdError, -32012),
        (lambda: fresh.stale("s", ["nope"]), UnknownIdError, -32012),
        (lambda: fresh.project("s", policy="some"), InvalidParamsError, -32602),
        (lambda: fresh.observe("s", "pkg/cart.py", first_line=0), InvalidParamsError, -32602),
    ]
    for call, kind, code in cases:
        with pytest.raises(kind) as raised:
            call()
        assert isinstance(raised.value, FreshClientError)
        assert raised.value.code == code and raised.value.method
        assert f"code {code}" in str(raised.value)


def test_every_request_has_a_typed_method(fresh: SyncClient) -> None:
    r = fresh.observe("s", "pkg/cart.py", view_id="v", first_line=8, last_line=10, kind="read")
    assert (r["viewId"], r["firstLine"], r["lastLine"]) == ("v", 8, 10)
    assert [v["viewId"] for v in fresh.stale("s")["views"]] == ["v"]
    plan = fresh.project("s", budget_bytes=4096, policy="all", view_ids=["v"])
    assert plan["budgetBytes"] == 4096 and plan["markers"][0]["viewId"] == "v"
    assert fresh.commit(plan["planId"]) == {"ok": True, "changed": []}
    assert fresh.view_text("s", "v")["firstLine"] == 8
    assert fresh.status()["sessions"] == [{"session": "s", "views": 1, "stale": 0}]
    fresh.did_write("pkg/cart.py", session="s")
    assert fresh.forget("s", ["v", "nope"]) == {"forgotten": 1}


def test_no_server_to_attach_to(tmp_path: Path) -> None:
    with pytest.raises(ConnectionClosedError, match="no running server"):
        SyncClient.attach(tmp_path)


@pytest.fixture
def listening(repo: Path) -> Iterator[Path]:
    """``fresh-ls serve --listen`` on the repo, stopped by its own pid afterwards."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fresh_ls", "serve", "--root", str(repo), "--listen"],
        stdin=subprocess.DEVNULL,
    )
    endpoint = repo / ".fresh-ls" / "endpoint.json"
    deadline = time.monotonic() + 30
    while not endpoint.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert endpoint.exists(), "the listening server wrote no endpoint.json"
        yield repo
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_attach_with_the_token_and_without(listening: Path) -> None:
    with SyncClient.attach(listening) as client:
        client.observe("s", "pkg/cart.py", view_id="v")
        assert client.status()["sessions"][0]["views"] == 1
    endpoint = listening / ".fresh-ls" / "endpoint.json"
    data = json.loads(endpoint.read_text())
    data["token"] = "wrong"
    forged = listening / "forged"
    forged.mkdir()
    (forged / "endpoint.json").write_text(json.dumps(data))
    with pytest.raises(UnauthorizedError) as raised:
        SyncClient.attach(state_dir=str(forged))
    assert raised.value.code == -32013


async def test_async_attach_and_spawn(listening: Path, tmp_path: Path) -> None:
    async with await AsyncClient.attach(listening) as client:
        r = await client.observe("s", "pkg/cart.py", view_id="v", first_line=13, last_line=14)
        assert r["units"][0]["name"] == "helper"
        with pytest.raises(PathOutsideRootError):
            await client.observe("s", "/etc/hostname")
        await client.did_write("pkg/cart.py", session="s")
        assert (await client.view_text("s", "v"))["lastLine"] == 14
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.py").write_text("def f():\n    return 1\n")
    async with await AsyncClient.spawn(other, budget_bytes=1024, policy="all") as child:
        await child.observe("s", "a.py", view_id="a")
        plan = await child.project("s")
        assert plan["budgetBytes"] == 1024 and plan["markers"]  # the connection's defaults
        assert (await child.commit(plan["planId"]))["ok"] is True
        assert (await child.forget("s")) == {"forgotten": 1}
        with pytest.raises(UnknownIdError):
            await child.commit("p-nope")


def test_spawn_on_a_live_root_says_why_it_failed(listening: Path) -> None:
    with pytest.raises(ConnectionClosedError, match="another server is live"):
        SyncClient.spawn(listening)
    assert os.path.exists(listening / ".fresh-ls" / "endpoint.json")
