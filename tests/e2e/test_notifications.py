"""Notifications both ways: didOpen/didChange/didSave/didClose, didChangeWatchedFiles,
fresh/didWrite in; fresh/didInvalidate out.

These run without the watcher (``--no-watch``), so every fresh/didInvalidate seen here was
caused by the notification under test (the watcher has its own tests)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from ._support import (
    CART_PY,
    WAIT_S,
    Lsp,
    RawConn,
    eventually,
    read_endpoint,
    replace_in,
    short_socket_path,
)

pytestmark = pytest.mark.timeout(60)


def _is(session: str, path: str):
    return lambda p: p["session"] == session and p["path"] == path


async def test_did_write_pushes_did_invalidate_for_the_views_that_changed_status(
    quiet: Lsp, ws: Path
) -> None:
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.observe(path="cart.py", viewId="h", firstLine=13, lastLine=14)
    await quiet.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    await quiet.settle()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    quiet.did_write("cart.py", session="s")
    payload = await quiet.wait_invalidation(_is("s", "cart.py"))
    assert payload == {"session": "s", "viewIds": ["t"], "path": "cart.py"}
    await quiet.sync_point()
    assert quiet.invalidations == [payload]


async def test_observe_and_forget_push_did_invalidate(quiet: Lsp) -> None:
    """Editors list views: a new, replaced or forgotten view is news for their panels."""
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    await quiet.observe(path="cart.py", viewId="h", firstLine=13, lastLine=14)
    await quiet.sync_point()
    assert quiet.invalidations == [
        {"session": "s", "viewIds": ["t"], "path": "cart.py"},
        {"session": "s", "viewIds": ["u"], "path": "util.py"},
        {"session": "s", "viewIds": ["h"], "path": "cart.py"},
    ]
    await quiet.settle()
    assert await quiet.forget(viewIds=["h", "t", "u", "nope"]) == {"forgotten": 3}
    await quiet.sync_point()
    assert quiet.invalidations == [
        {"session": "s", "viewIds": ["h", "t"], "path": "cart.py"},
        {"session": "s", "viewIds": ["u"], "path": "util.py"},
    ]
    await quiet.settle()
    assert await quiet.forget(viewIds=["nope"]) == {"forgotten": 0}
    await quiet.sync_point()
    assert quiet.invalidations == []


async def test_pytest_lsp_wait_for_notification_sees_did_invalidate(quiet: Lsp, ws: Path) -> None:
    """pytest-lsp's own wait only sees future notifications: start it before the write."""
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.settle()
    waiting = quiet.client.wait_for_notification("fresh/didInvalidate")
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    quiet.did_write("cart.py", session="s")
    params = await asyncio.wait_for(waiting, WAIT_S)
    assert params == {"session": "s", "viewIds": ["t"], "path": "cart.py"}


async def test_did_invalidate_is_sent_per_session(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(session="a", path="cart.py", viewId="a1", firstLine=9, lastLine=9)
    await quiet.observe(session="b", path="cart.py", viewId="b1", firstLine=1, lastLine=14)
    await quiet.observe(session="b", path="cart.py", viewId="b2", firstLine=8, lastLine=9)
    await quiet.settle()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    quiet.did_write("cart.py", session="a")
    assert await quiet.wait_invalidation(_is("a", "cart.py")) == {
        "session": "a",
        "viewIds": ["a1"],
        "path": "cart.py",
    }
    assert await quiet.wait_invalidation(_is("b", "cart.py")) == {
        "session": "b",
        "viewIds": ["b1", "b2"],
        "path": "cart.py",
    }


async def test_a_revert_is_a_status_change_too(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.settle()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    quiet.did_write("cart.py", session="s")
    await quiet.wait_invalidation(_is("s", "cart.py"))
    (ws / "cart.py").write_text(CART_PY)
    quiet.did_write("cart.py", session="s")
    await quiet.sync_point()
    assert len(quiet.invalidations) == 2
    assert (await quiet.view("t"))["status"] == "fresh"


async def test_did_write_without_a_session_syncs_without_attribution(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.settle()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    quiet.did_write("cart.py")
    assert (await quiet.wait_invalidation(_is("s", "cart.py")))["viewIds"] == ["t"]
    assert (await quiet.view("t"))["units"][0]["changedBy"] == "outside"


async def test_did_write_accepts_an_absolute_path(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.settle()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    quiet.did_write(str(ws / "cart.py"), session="s")
    assert (await quiet.wait_invalidation(_is("s", "cart.py")))["viewIds"] == ["t"]
    assert (await quiet.view("t"))["units"][0]["changedBy"] == "self"


async def test_did_change_watched_files_syncs_the_files(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    await quiet.settle()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    (ws / "util.py").unlink()
    quiet.client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(
            changes=[
                lsp.FileEvent(uri=quiet.uri("cart.py"), type=lsp.FileChangeType.Changed),
                lsp.FileEvent(uri=quiet.uri("util.py"), type=lsp.FileChangeType.Deleted),
                lsp.FileEvent(uri="file:///etc/passwd", type=lsp.FileChangeType.Changed),
            ]
        )
    )
    assert await quiet.wait_invalidation(_is("s", "cart.py")) == {
        "session": "s",
        "viewIds": ["t"],
        "path": "cart.py",
    }
    assert await quiet.wait_invalidation(_is("s", "util.py")) == {
        "session": "s",
        "viewIds": ["u"],
        "path": "util.py",
    }
    statuses = {v["viewId"]: v["status"] for v in (await quiet.stale())["views"]}
    assert statuses == {"t": "changed", "u": "deleted"}


async def test_did_save_pushes_did_invalidate_and_attributes_to_the_editor(
    quiet: Lsp, ws: Path
) -> None:
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.settle()
    quiet.did_open("cart.py", CART_PY)
    quiet.did_change("cart.py", 2, ((8, 30), (8, 34), "RATE * 2"))
    await quiet.sync_point()
    assert quiet.invalidations == []  # an unsaved buffer changes no status
    (ws / "cart.py").write_text(CART_PY.replace("quantity * RATE", "quantity * RATE * 2"))
    quiet.did_save("cart.py")
    assert (await quiet.wait_invalidation(_is("s", "cart.py")))["viewIds"] == ["t"]
    unit = (await quiet.view("t"))["units"][0]
    assert (unit["status"], unit["changedBy"]) == ("changed", "editor")
    quiet.did_close("cart.py")
    assert (await quiet.view("t"))["editorDirty"] is False


async def test_editor_notifications_for_files_outside_the_root_are_ignored(
    quiet: Lsp, tmp_path: Path
) -> None:
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    uri = outside.as_uri()
    quiet.client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri, language_id="python", version=1, text="x = 2\n"
            )
        )
    )
    quiet.client.text_document_did_save(
        lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    quiet.client.text_document_did_close(
        lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    quiet.did_write(str(outside), session="s")
    quiet.did_write("../elsewhere.py", session="s")
    view = await quiet.view("t")
    assert (view["status"], view["editorDirty"]) == ("fresh", False)
    assert (await quiet.status())["sessions"] == [{"session": "s", "views": 1, "stale": 0}]


async def test_buffers_of_a_closed_connection_are_dropped(ws: Path, start) -> None:
    """An editor that disconnects without didClose leaves no dirty buffer behind: needs
    two connections on one engine, so it runs over a listening endpoint."""
    agent = await start(ws, "--no-watch", "--listen", f"unix:{short_socket_path()}")
    await agent.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    ep = read_endpoint(ws)
    assert ep is not None
    editor = RawConn.connect(str(ep["address"]))
    assert "result" in editor.initialize({"token": ep["token"]})
    editor.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    editor.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": (ws / "cart.py").as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": CART_PY.replace("RATE = 10", "RATE = 11"),
                }
            },
        }
    )
    assert "result" in editor.call("fresh/status", {})
    assert (await agent.view("t"))["editorDirty"] is True
    editor.close()

    async def clean() -> bool:
        return (await agent.view("t"))["editorDirty"] is False

    await eventually(clean)
