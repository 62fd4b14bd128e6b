"""Transport and lifecycle over real processes: shutdown/exit, end of input, pipelined
requests, full-document sync and URIs that need decoding."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from ._support import CART_PY, WAIT_S, Lsp, raw_stdio, serve_command

pytestmark = pytest.mark.timeout(60)

KEEP = {"session": "s", "path": "cart.py", "viewId": "keep", "firstLine": 9, "lastLine": 9}


def test_shutdown_then_exit_ends_the_server_with_code_0(ws: Path) -> None:
    with raw_stdio(ws, "--no-watch") as (conn, proc):
        assert "result" in conn.initialize({})
        assert conn.call("shutdown", None) == {"jsonrpc": "2.0", "id": 2, "result": None}
        conn.send({"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(timeout=WAIT_S) == 0


def test_a_request_after_shutdown_is_answered_with_an_error(ws: Path) -> None:
    """LSP: requests after ``shutdown`` are answered with InvalidRequest, never dropped
    (a dropped request leaves the client waiting forever)."""
    with raw_stdio(ws, "--no-watch") as (conn, proc):
        assert "result" in conn.initialize({})
        assert "result" in conn.call("fresh/observe", KEEP)
        assert "result" in conn.call("shutdown", None)
        reply = conn.call("fresh/status", {})
        assert reply["error"]["code"] == -32600
        conn.send({"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(timeout=WAIT_S) == 0


def test_end_of_input_ends_a_stdio_server(ws: Path) -> None:
    with raw_stdio(ws, "--no-watch") as (conn, proc):
        assert "result" in conn.initialize({})
        assert "result" in conn.call("fresh/observe", KEEP)
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=WAIT_S) == 0
    # and the view it acknowledged is still there for the next server
    with raw_stdio(ws, "--no-watch") as (conn, _):
        assert "result" in conn.initialize({})
        views = conn.call("fresh/stale", {"session": "s"})["result"]["views"]
        assert [v["viewId"] for v in views] == ["keep"]


def test_serve_needs_a_transport(ws: Path) -> None:
    done = subprocess.run(serve_command(ws), capture_output=True, timeout=WAIT_S)
    assert done.returncode != 0
    assert b"--stdio" in done.stderr and b"--listen" in done.stderr


async def test_pipelined_requests_are_all_answered(fresh: Lsp) -> None:
    results = await asyncio.gather(
        *(
            fresh.observe(path="cart.py", viewId=f"v{i}", firstLine=1 + i % 14, lastLine=14)
            for i in range(60)
        )
    )
    assert [r["viewId"] for r in results] == [f"v{i}" for i in range(60)]
    stale, status, projection = await asyncio.gather(
        fresh.stale(), fresh.status(), fresh.project(policy="all")
    )
    assert len(stale["views"]) == 60
    assert status["sessions"] == [{"session": "s", "views": 60, "stale": 0}]
    assert len(projection["markers"]) == 60


async def test_a_full_document_change_replaces_the_buffer(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(**KEEP)
    fresh.did_open("cart.py", CART_PY)
    new_text = CART_PY.replace("RATE = 10", "RATE = 12")
    fresh.client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=fresh.uri("cart.py"), version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=new_text)],
        )
    )
    assert (await fresh.view("keep"))["editorDirty"] is True
    (ws / "cart.py").write_text(new_text)
    assert (await fresh.view("keep"))["editorDirty"] is False


async def test_uris_and_paths_with_spaces_and_non_ascii(fresh: Lsp, ws: Path) -> None:
    name = "dir with space/café ü.py"
    (ws / "dir with space").mkdir()
    (ws / name).write_text("def f():\n    return 1\n")
    result = await fresh.observe(path=name, viewId="u", firstLine=2, lastLine=2)
    assert result["path"] == name
    assert [u.get("name") for u in result["units"]] == ["f"]
    uri = fresh.uri(name)
    assert "%20" in uri
    fresh.did_open(name, "def f():\n    return 2\n")
    assert (await fresh.view("u"))["editorDirty"] is True
    fresh.did_close(name)
    assert (await fresh.view("u"))["editorDirty"] is False
