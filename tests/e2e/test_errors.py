"""Every error code of the contract, over a real server, each naming the offending field or
path; after every error the server still serves and the stored views are intact."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ._support import (
    WAIT_S,
    Listening,
    Lsp,
    frame,
    frame_json,
    raw_stdio,
    short_socket_path,
)

pytestmark = pytest.mark.timeout(60)

KEEP = {"session": "s", "path": "cart.py", "viewId": "keep", "firstLine": 9, "lastLine": 9}


def _observe(**params: Any) -> dict[str, Any]:
    """Observe params that reuse the stored view's id: a failed observe must not touch it."""
    return {"session": "s", "viewId": "keep", **params}


def _outside_link(ws: Path) -> None:
    outside = ws.parent / "outside_target.py"
    outside.write_text("SECRET = 1\n")
    (ws / "link.py").symlink_to(outside)


def _outside_dir_link(ws: Path) -> None:
    (ws.parent / "elsewhere").mkdir()
    (ws.parent / "elsewhere" / "mod.py").write_text("x = 1\n")
    (ws / "linked").symlink_to(ws.parent / "elsewhere", target_is_directory=True)


def _binary(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary\x00")


def _huge(ws: Path) -> None:
    line = b"x = 'a line of text that repeats to make a file of more than four MiB'\n"
    (ws / "huge.py").write_bytes(line * (4 * 1024 * 1024 // len(line) + 1))


def _not_utf8(ws: Path) -> None:
    (ws / "latin1.py").write_bytes("name = 'café'\n".encode("latin-1"))


def _nothing(ws: Path) -> None:
    pass


CASES = [
    # -32602: invalid params, naming the field
    ("fresh/observe", _observe(path="cart.py", firstLine="3"), -32602, "firstLine", _nothing),
    ("fresh/observe", _observe(path="cart.py", firstLine=True), -32602, "firstLine", _nothing),
    ("fresh/observe", _observe(path="cart.py", firstLine=0), -32602, "firstLine", _nothing),
    ("fresh/observe", _observe(path="cart.py", firstLine=99), -32602, "firstLine", _nothing),
    (
        "fresh/observe",
        _observe(path="cart.py", firstLine=5, lastLine=3),
        -32602,
        "lastLine",
        _nothing,
    ),
    ("fresh/observe", _observe(path="cart.py", lastLine=1.5), -32602, "lastLine", _nothing),
    ("fresh/observe", {"path": "cart.py", "viewId": "keep"}, -32602, "session", _nothing),
    ("fresh/observe", _observe(session="", path="cart.py"), -32602, "session", _nothing),
    ("fresh/observe", {"session": "s", "viewId": "keep"}, -32602, "path", _nothing),
    ("fresh/observe", _observe(path=["cart.py"]), -32602, "path", _nothing),
    ("fresh/observe", _observe(path="cart.py", kind="write"), -32602, "kind", _nothing),
    ("fresh/observe", _observe(path="cart.py", text=5), -32602, "text", _nothing),
    ("fresh/observe", [1, 2], -32602, "params", _nothing),
    ("fresh/stale", {"session": "s", "viewIds": "keep"}, -32602, "viewIds", _nothing),
    ("fresh/stale", {"session": "s", "viewIds": [1]}, -32602, "viewIds", _nothing),
    ("fresh/stale", {"session": 7}, -32602, "session", _nothing),
    ("fresh/project", {"session": "s", "policy": "x"}, -32602, "policy", _nothing),
    ("fresh/project", {"session": "s", "budgetBytes": -1}, -32602, "budgetBytes", _nothing),
    ("fresh/project", {"session": "s", "budgetBytes": "9"}, -32602, "budgetBytes", _nothing),
    ("fresh/project", {"session": "s", "viewIds": "keep"}, -32602, "viewIds", _nothing),
    ("fresh/commit", {"planId": 5}, -32602, "planId", _nothing),
    ("fresh/commit", {}, -32602, "planId", _nothing),
    ("fresh/forget", {"session": "s", "viewIds": "keep"}, -32602, "viewIds", _nothing),
    ("fresh/forget", {}, -32602, "session", _nothing),
    # -32010: outside the root, naming the path
    ("fresh/observe", _observe(path="../outside.py"), -32010, "../outside.py", _nothing),
    ("fresh/observe", _observe(path="/etc/passwd"), -32010, "/etc/passwd", _nothing),
    ("fresh/observe", _observe(path="link.py"), -32010, "link.py", _outside_link),
    ("fresh/observe", _observe(path="linked/mod.py"), -32010, "linked/mod.py", _outside_dir_link),
    ("fresh/observe", _observe(path="."), -32010, "path", _nothing),
    # -32011: missing or not readable as text, naming the path
    ("fresh/observe", _observe(path="missing.py"), -32011, "missing.py", _nothing),
    ("fresh/observe", _observe(path="blob.bin"), -32011, "blob.bin", _binary),
    ("fresh/observe", _observe(path="huge.py"), -32011, "huge.py", _huge),
    ("fresh/observe", _observe(path="latin1.py"), -32011, "latin1.py", _not_utf8),
    ("fresh/observe", _observe(path="web"), -32011, "web", _nothing),
    # -32012: unknown view id or plan
    ("fresh/stale", {"session": "s", "viewIds": ["keep", "nope"]}, -32012, "nope", _nothing),
    ("fresh/stale", {"session": "other", "viewIds": ["keep"]}, -32012, "keep", _nothing),
    ("fresh/project", {"session": "s", "viewIds": ["nope"]}, -32012, "nope", _nothing),
    ("fresh/commit", {"planId": "p-000000000000"}, -32012, "planId", _nothing),
]


@pytest.mark.parametrize(
    ("method", "params", "code", "named", "prepare"),
    [pytest.param(*case, id=f"{case[2]}-{case[0][6:]}-{i}") for i, case in enumerate(CASES)],
)
async def test_error_names_the_field_and_leaves_views_intact(
    quiet: Lsp,
    ws: Path,
    method: str,
    params: Any,
    code: int,
    named: str,
    prepare: Callable[[Path], None],
) -> None:
    prepare(ws)
    await quiet.observe(**KEEP)
    before = await quiet.stale()
    err = await quiet.error(method, params)
    assert err.code == code, err.message
    assert named in err.message, err.message
    # In JSON terms: no Python type names leak into a message meant for a harness author.
    for python_ism in ("typing.", "<class", "NoneType", "Literal["):
        assert python_ism not in err.message, err.message
    assert await quiet.stale() == before
    assert (await quiet.status())["sessions"] == [{"session": "s", "views": 1, "stale": 0}]
    again = await quiet.observe(path="util.py", viewId="after", firstLine=1, lastLine=2)
    assert again["status"] == "fresh"


async def test_first_line_past_the_end_names_first_line_only(quiet: Lsp) -> None:
    err = await quiet.error("fresh/observe", {"session": "s", "path": "cart.py", "firstLine": 99})
    assert err.code == -32602
    assert err.message.startswith("firstLine"), err.message
    assert "lastLine" not in err.message, err.message


async def test_an_invalid_policy_lists_the_choices(quiet: Lsp) -> None:
    err = await quiet.error("fresh/project", {"session": "s", "policy": "x"})
    assert err.code == -32602
    assert "policy" in err.message and "'stale'" in err.message and "'all'" in err.message


async def test_an_unknown_method_is_32601_and_the_server_goes_on(quiet: Lsp) -> None:
    await quiet.observe(**KEEP)
    err = await quiet.error("fresh/nope", {})
    assert err.code == -32601
    assert [v["viewId"] for v in (await quiet.stale())["views"]] == ["keep"]


async def test_bad_notifications_are_ignored(quiet: Lsp) -> None:
    await quiet.observe(**KEEP)
    quiet.notify("fresh/didWrite", {"path": 5})
    quiet.notify("fresh/didWrite", {})
    quiet.notify("fresh/didWrite", {"path": "/etc/passwd", "session": "s"})
    quiet.notify("fresh/didWrite", {"path": "missing.py", "session": "s"})
    quiet.notify("fresh/unknownNotification", {"x": 1})
    assert [v["viewId"] for v in (await quiet.stale())["views"]] == ["keep"]


# -- -32700: bodies that are not JSON --------------------------------------------------------


def test_a_body_that_is_not_json_gets_32700_with_a_null_id(ws: Path) -> None:
    with raw_stdio(ws, "--no-watch") as (conn, _):
        assert "result" in conn.initialize({})
        assert "result" in conn.call("fresh/observe", KEEP)
        conn.send_bytes(frame(b'{"jsonrpc": "2.0", "id": 9, "method": '))
        reply = conn.read()
        assert reply is not None
        assert (reply["jsonrpc"], reply["id"], reply["error"]["code"]) == ("2.0", None, -32700)
        assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
        stale = conn.call("fresh/stale", {"session": "s"})
        assert [v["viewId"] for v in stale["result"]["views"]] == ["keep"]


def test_a_body_that_is_not_utf8_gets_32700(ws: Path) -> None:
    with raw_stdio(ws, "--no-watch") as (conn, _):
        assert "result" in conn.initialize({})
        conn.send_bytes(frame(b"\xff\xfe{}"))
        reply = conn.read()
        assert reply is not None
        assert (reply["id"], reply["error"]["code"]) == (None, -32700)
        assert "result" in conn.call("fresh/status", {})


def test_json_that_is_no_message_between_messages_does_not_stop_the_server(ws: Path) -> None:
    with raw_stdio(ws, "--no-watch") as (conn, _):
        assert "result" in conn.initialize({})
        assert "result" in conn.call("fresh/observe", KEEP)
        conn.send_bytes(frame(b"[1, 2, 3]"))  # JSON, but no JSON-RPC message
        reply = conn.read()
        assert reply is not None and reply["id"] is None and reply["error"]["code"] == -32600
        conn.send_bytes(frame(b"null"))
        reply = conn.read()
        assert reply is not None and reply["id"] is None and reply["error"]["code"] == -32600
        stale = conn.call("fresh/stale", {"session": "s"})
        assert [v["viewId"] for v in stale["result"]["views"]] == ["keep"]


# -- -32013: a listening endpoint wants the token -------------------------------------------


@pytest.fixture
def listening(ws: Path):
    server = Listening(ws, f"unix:{short_socket_path()}", "--no-watch")
    yield server
    server.stop()


def _assert_closed(conn) -> None:
    """The server closes the connection: reads reach EOF (or a reset), never hang."""
    try:
        while (message := conn.read()) is not None:
            assert "id" not in message or message.get("method"), message
    except ConnectionResetError:
        pass


@pytest.mark.parametrize(
    "options",
    [{"token": "wrong"}, {}, None, {"token": ""}],
    ids=["wrong", "empty-opts", "no-opts", "empty-token"],
)
def test_a_wrong_or_missing_token_gets_32013_and_is_closed(
    listening: Listening, options: dict[str, Any] | None
) -> None:
    with_token = listening.connect()
    assert "result" in with_token.initialize({"token": listening.endpoint["token"]})
    assert "result" in with_token.call("fresh/observe", KEEP)

    intruder = listening.connect()
    reply = intruder.initialize(options)
    assert reply["error"]["code"] == -32013
    assert "token" in reply["error"]["message"]
    _assert_closed(intruder)
    intruder.close()

    stale = with_token.call("fresh/stale", {"session": "s"})
    assert [v["viewId"] for v in stale["result"]["views"]] == ["keep"]
    with_token.close()


def test_a_request_before_initialize_gets_32013_and_is_closed(listening: Listening) -> None:
    intruder = listening.connect()
    reply = intruder.call("fresh/stale", {"session": "s"})
    assert reply["error"]["code"] == -32013
    _assert_closed(intruder)
    intruder.close()
    ok = listening.connect()
    assert "result" in ok.initialize({"token": listening.endpoint["token"]})
    assert ok.call("fresh/status", {})["result"]["sessions"] == []
    ok.close()


def test_an_unauthorized_connection_cannot_notify(listening: Listening, ws: Path) -> None:
    agent = listening.connect()
    assert "result" in agent.initialize({"token": listening.endpoint["token"]})
    assert "result" in agent.call("fresh/observe", KEEP)
    intruder = listening.connect()
    # Notifications sent before the refused initialize are never honoured either.
    intruder.send_bytes(
        frame_json(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": (ws / "cart.py").as_uri(),
                        "languageId": "python",
                        "version": 1,
                        "text": "dirty\n",
                    }
                },
            }
        )
    )
    assert intruder.initialize({"token": "wrong"})["error"]["code"] == -32013
    _assert_closed(intruder)
    view = agent.call("fresh/stale", {"session": "s"})["result"]["views"][0]
    assert view["editorDirty"] is False
    agent.close()


def test_the_socket_is_private(listening: Listening) -> None:
    path = str(listening.endpoint["address"])[len("unix:") :]
    assert os.stat(path).st_mode & 0o777 == 0o600
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(WAIT_S)
    probe.connect(path)
    probe.close()


def test_an_unauthorized_connection_cannot_claim_a_save(listening: Listening, ws: Path) -> None:
    """Notifications from a connection that never presented the token change nothing: an
    editor save it claims must not take the credit for the next write."""
    agent = listening.connect()
    assert "result" in agent.initialize({"token": listening.endpoint["token"]})
    assert "result" in agent.call("fresh/observe", KEEP)
    intruder = listening.connect()
    uri = (ws / "cart.py").as_uri()
    intruder.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didSave",
            "params": {"textDocument": {"uri": uri}},
        }
    )
    # A request on the same connection: its answer proves the didSave was handled.
    assert intruder.call("fresh/status", {})["error"]["code"] == -32013
    text = (ws / "cart.py").read_text()
    (ws / "cart.py").write_text(text.replace("quantity * RATE", "quantity * RATE * 2"))
    unit = agent.call("fresh/stale", {"session": "s"})["result"]["views"][0]["units"][0]
    assert (unit["status"], unit["changedBy"]) == ("changed", "outside")
    intruder.close()
    agent.close()


def test_an_unauthorized_connection_cannot_dirty_a_view(listening: Listening, ws: Path) -> None:
    agent = listening.connect()
    assert "result" in agent.initialize({"token": listening.endpoint["token"]})
    assert "result" in agent.call("fresh/observe", KEEP)
    intruder = listening.connect()
    intruder.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": (ws / "cart.py").as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": "dirty\n",
                }
            },
        }
    )
    # Its answer proves the didOpen was handled; the connection is closed a moment later,
    # so look right away.
    assert intruder.call("fresh/status", {})["error"]["code"] == -32013
    view = agent.call("fresh/stale", {"session": "s"})["result"]["views"][0]
    assert view["editorDirty"] is False
    intruder.close()
    agent.close()
