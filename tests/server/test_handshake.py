"""The ``initialize`` answer sent before pygls loads (``fresh_ls.server.handshake``) is the
one pygls's own server gives, for every client shape it answers; for the rest it answers
nothing and leaves every byte it read to the server."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

from fresh_ls.client import initialize_params
from fresh_ls.server.connection import ConnectionInfo, FreshServer, dispatch_body
from fresh_ls.server.handshake import answer_first, answer_frame, initialize_result

#: What VS Code's language client sends (vscode-languageclient 9, abridged to the parts
#: that are objects; the handshake reads positionEncodings and synchronization).
VSCODE: dict[str, Any] = {
    "processId": 4242,
    "clientInfo": {"name": "Visual Studio Code", "version": "1.95.3"},
    "locale": "en",
    "rootPath": "/home/u/repo",
    "rootUri": "file:///home/u/repo",
    "capabilities": {
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]},
            "didChangeConfiguration": {"dynamicRegistration": True},
            "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True},
            "executeCommand": {"dynamicRegistration": True},
            "configuration": True,
            "workspaceFolders": True,
            "fileOperations": {
                "dynamicRegistration": True,
                "didCreate": True,
                "willCreate": True,
                "didRename": True,
                "willRename": True,
                "didDelete": True,
                "willDelete": True,
            },
        },
        "textDocument": {
            "synchronization": {
                "dynamicRegistration": True,
                "willSave": True,
                "willSaveWaitUntil": True,
                "didSave": True,
            },
            "hover": {"dynamicRegistration": True, "contentFormat": ["markdown", "plaintext"]},
            "rename": {"dynamicRegistration": True, "prepareSupport": True},
        },
        "window": {"showDocument": {"support": True}, "workDoneProgress": True},
        "general": {
            "staleRequestSupport": {"cancel": True, "retryOnContentModified": []},
            "regularExpressions": {"engine": "ECMAScript", "version": "ES2020"},
            "markdown": {"parser": "marked", "version": "1.1.0"},
            "positionEncodings": ["utf-16"],
        },
        "notebookDocument": {
            "synchronization": {"dynamicRegistration": True, "executionSummarySupport": True}
        },
    },
    "initializationOptions": {"budgetBytes": 65536, "policy": "all"},
    "trace": "off",
    "workspaceFolders": [{"uri": "file:///home/u/repo", "name": "repo"}],
}

KNOWN: dict[str, Any] = {
    "bare": {"capabilities": {}},
    "nulls": {"processId": None, "rootUri": None, "capabilities": {}},
    "python client": initialize_params(None, None, None),
    "python client with options": initialize_params("tok", 4096, "stale"),
    "vscode": VSCODE,
    "utf-8 first": {"capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}}},
    "utf-32 after an unknown": {
        "capabilities": {"general": {"positionEncodings": ["x", "utf-32"]}}
    },
    "only unknown encodings": {"capabilities": {"general": {"positionEncodings": ["utf-7"]}}},
    "willSave false": {"capabilities": {"textDocument": {"synchronization": {"willSave": False}}}},
}

LEFT_TO_THE_SERVER: dict[str, Any] = {
    "no capabilities": {"processId": None},
    "not an object": [1, 2],
    "unknown option": {"capabilities": {}, "initializationOptions": {"budget": 5}},
    "negative budget": {"capabilities": {}, "initializationOptions": {"budgetBytes": -1}},
    "bad policy": {"capabilities": {}, "initializationOptions": {"policy": "some"}},
    "string process id": {"processId": "12", "capabilities": {}},
    "encodings not a list": {"capabilities": {"general": {"positionEncodings": "utf-8"}}},
    "unknown top-level key": {"capabilities": {}, "extra": 1},
}


async def _pygls_answer(params: Any, early: Any = None) -> dict[str, Any] | None:
    """What the server's pygls-built protocol answers ``initialize`` with (None: nothing
    written, which it should do for a request answered early, ``early`` the answer sent)."""
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

        def close(self) -> None:
            pass

    conn = ConnectionInfo(
        engine=None,  # type: ignore[arg-type]  # initialize never reaches the engine
        name="stdio-test",
        token=None,
        on_exit=lambda: None,
        close=lambda: None,
        authorized=True,
    )
    server = FreshServer(conn)
    server.protocol.set_writer(Writer())
    if early is not None:
        server.fresh_protocol.answered_early[7] = early
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params})
    dispatch_body(server.fresh_protocol, body.encode())
    for _ in range(100 if early is None else 20):
        if written:
            break
        await asyncio.sleep(0.01)
    if early is not None:
        assert not written, "an answer sent early was sent again"
        assert server.conn.initialized and server.conn.policy == "all"
        return None
    assert written, "pygls never answered initialize"
    raw = b"".join(written)
    return dict(json.loads(raw.split(b"\r\n\r\n", 1)[1]))


@pytest.mark.parametrize("name", sorted(KNOWN))
async def test_early_answer_is_pyglss_answer(name: str) -> None:
    params = KNOWN[name]
    early = initialize_result(params)
    assert early is not None, f"{name}: the handshake should answer these params"
    pygls = await _pygls_answer(params)
    assert pygls is not None and "result" in pygls, pygls
    assert early == pygls["result"]
    # The frame too: same key order and spacing as pygls writes it.
    frame = answer_frame(7, early)
    assert json.loads(frame.split(b"\r\n\r\n", 1)[1]) == pygls


@pytest.mark.parametrize("name", sorted(LEFT_TO_THE_SERVER))
def test_params_it_does_not_know_are_left_to_the_server(name: str) -> None:
    assert initialize_result(LEFT_TO_THE_SERVER[name]) is None


def _frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def _through_pipes(
    data: bytes, close: bool = True, wait_s: float | None = None
) -> tuple[Any, bytes]:
    """Run ``answer_first`` on a pipe holding ``data`` (then closed, unless ``close`` is
    false: a client that stays silent); what it returned and what it wrote."""
    rin, win = os.pipe()
    rout, wout = os.pipe()
    os.write(win, data)
    if close:
        os.close(win)
    try:
        early = answer_first(rin, wout, 1 << 20, wait_s)
    finally:
        os.close(rin)
        os.close(wout)
        if not close:
            os.close(win)
    with os.fdopen(rout, "rb") as f:
        written = f.read()
    return early, written


def test_an_answered_initialize_hands_on_what_followed_it() -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    after = _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}) + b"Content-Le"
    early, written = _through_pipes(_frame(init) + after)
    assert early.body is not None and json.loads(early.body) == init
    assert early.msg_id == 1
    assert early.rest == after
    assert json.loads(written.split(b"\r\n\r\n", 1)[1])["result"] == early.result


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b'Content-Length: 5\r\n\r\n{"a"',  # the stream ends inside the body
        b"Bogus header\r\n\r\n{}",
        _frame({"jsonrpc": "2.0", "id": 1, "method": "fresh/status", "params": {}}),
        _frame(
            {"jsonrpc": "2.0", "id": 1.5, "method": "initialize", "params": {"capabilities": {}}}
        ),
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": "x"}}),
    ],
)
def test_anything_else_is_answered_by_the_server(data: bytes) -> None:
    early, written = _through_pipes(data)
    assert written == b""
    assert early.body is None
    if data.startswith(b"Content-Length") and b'{"a"' not in data:
        # The same message, framed again for the server's reader.
        assert json.loads(early.rest.split(b"\r\n\r\n", 1)[1]) == json.loads(
            data.split(b"\r\n\r\n", 1)[1]
        )
    else:
        assert early.rest == data


async def test_the_server_takes_an_answered_initialize_without_answering_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    params = {"capabilities": {}, "initializationOptions": {"policy": "all"}}
    good = initialize_result(params)
    assert await _pygls_answer(params, early=good) is None
    assert "initialize was answered before" not in caplog.text
    wrong = {**(good or {}), "serverInfo": {"name": "other"}}
    assert await _pygls_answer(params, early=wrong) is None
    assert "initialize was answered before the server loaded with" in caplog.text


@pytest.mark.parametrize("data", [b"", b'Content-Length: 80\r\n\r\n{"jsonrpc"'])
def test_a_silent_client_is_waited_for_only_as_long_as_asked(data: bytes) -> None:
    """With a listening endpoint the server must not wait on stdio without end: after
    ``wait_s`` it starts the usual way, with every byte read handed on."""
    early, written = _through_pipes(data, close=False, wait_s=0.05)
    assert written == b""
    assert early.body is None
    assert early.rest == data
