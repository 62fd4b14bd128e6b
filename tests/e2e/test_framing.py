"""Contract v1.1 over real subprocess servers: requests on one connection take effect in the
order sent, oversized and malformed frames close only their own connection, every readable
id gets its answer, no answer carries a traceback, and silent unauthenticated connections
are closed and capped while the token holder is served."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._support import (
    WAIT_S,
    Listening,
    RawConn,
    frame,
    frame_json,
    raw_stdio,
    read_endpoint,
    short_socket_path,
)

pytestmark = pytest.mark.timeout(120)

KEEP = {"session": "s", "path": "cart.py", "viewId": "keep", "firstLine": 9, "lastLine": 9}


def _request(msg_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def _responses(conn: RawConn, n: int) -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    while len(out) < n:
        message = conn.response()
        out[message["id"]] = message
    return out


def _assert_closed(conn: RawConn) -> None:
    """The server closed the connection: reads reach EOF (or a reset), never hang."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            if conn.read() is None:
                return
        except (OSError, ValueError):
            return
    pytest.fail("the server kept the connection open")


@pytest.fixture
def listening(ws: Path) -> Iterator[Listening]:
    server = Listening(
        ws,
        f"unix:{short_socket_path()}",
        "--no-watch",
        "--max-message-bytes",
        "4096",
        "--auth-timeout",
        "1",
        "--max-unauthenticated",
        "4",
    )
    yield server
    server.stop()


def _authed(server: Listening, ws: Path) -> RawConn:
    conn = server.connect()
    endpoint = read_endpoint(ws)
    assert endpoint is not None
    assert "result" in conn.initialize({"token": endpoint["token"]})
    return conn


# -- order on one connection ----------------------------------------------------------------


def _pipelined_observe_then_stale_and_project(conn: RawConn) -> None:
    conn.send_bytes(
        frame_json(_request(1, "fresh/observe", KEEP))
        + frame_json(_request(2, "fresh/stale", {"session": "s"}))
        + frame_json(_request(3, "fresh/project", {"session": "s", "policy": "all"}))
        + frame_json(_request(4, "fresh/forget", {"session": "s", "viewIds": ["keep"]}))
        + frame_json(_request(5, "fresh/stale", {"session": "s"}))
    )
    got = _responses(conn, 5)
    assert got[1]["result"]["viewId"] == "keep"
    assert [v["viewId"] for v in got[2]["result"]["views"]] == ["keep"]
    assert [e["viewIds"] for e in got[3]["result"]["entries"]] == [["keep"]]
    assert got[4]["result"] == {"forgotten": 1}
    assert got[5]["result"] == {"views": []}


def test_pipelined_requests_take_effect_in_order_on_stdio(ws: Path) -> None:
    with raw_stdio(ws, "--no-watch") as (conn, _):
        assert "result" in conn.initialize({})
        for _ in range(3):
            _pipelined_observe_then_stale_and_project(conn)


def test_pipelined_requests_take_effect_in_order_on_the_endpoint(
    listening: Listening, ws: Path
) -> None:
    conn = _authed(listening, ws)
    other = _authed(listening, ws)
    try:
        _pipelined_observe_then_stale_and_project(conn)
        assert "result" in other.call("fresh/status", {})
    finally:
        conn.close()
        other.close()


def test_a_did_write_sent_before_a_stale_is_seen_by_it(ws: Path) -> None:
    """A notification counts too: didWrite, then stale without waiting, names the writer."""
    with raw_stdio(ws, "--no-watch") as (conn, _):
        assert "result" in conn.initialize({})
        assert "result" in conn.call("fresh/observe", KEEP)
        path = ws / "cart.py"
        path.write_text(path.read_text().replace("quantity * RATE", "quantity * RATE * 2"))
        conn.send_bytes(
            frame_json(
                {"jsonrpc": "2.0", "method": "fresh/didWrite", "params": {"session": "s",
                                                                         "path": "cart.py"}}
            )
            + frame_json(_request(7, "fresh/stale", {"session": "s"}))
        )
        view = conn.response()["result"]["views"][0]
        assert view["status"] == "changed"
        assert view["units"][0]["changedBy"] == "self"


# -- oversized and malformed frames ---------------------------------------------------------


def _stdio(ws: Path, *args: str) -> Any:
    """A stdio server whose stderr is kept, to prove it ended without a traceback."""
    return raw_stdio(ws, "--no-watch", *args, keep_stderr=True)


def _ended_cleanly(proc: subprocess.Popen[bytes]) -> str:
    assert proc.wait(timeout=WAIT_S) == 0
    assert proc.stderr is not None
    err = proc.stderr.read().decode("utf-8", "replace")
    assert "Traceback" not in err, err
    return err


def test_an_oversized_message_on_stdio_is_refused_unread_and_nothing_is_lost(ws: Path) -> None:
    with _stdio(ws) as (conn, proc):
        assert "result" in conn.initialize({})
        assert "result" in conn.call("fresh/observe", KEEP)
        # 64 MiB announced, none of it sent: the answer must come without reading a byte.
        conn.send_bytes(b"Content-Length: 67108864\r\n\r\n")
        reply = conn.read()
        assert reply is not None and reply["id"] is None
        assert reply["error"]["code"] == -32600
        assert "16777216" in reply["error"]["message"]
        assert conn.read() is None  # that connection is closed
        _ended_cleanly(proc)
    with raw_stdio(ws, "--no-watch") as (conn, _):
        assert "result" in conn.initialize({})
        stale = conn.call("fresh/stale", {"session": "s"})
        assert [v["viewId"] for v in stale["result"]["views"]] == ["keep"]


def test_a_message_at_the_configured_limit_passes_and_one_byte_more_does_not(ws: Path) -> None:
    body = json.dumps(_request(1, "fresh/status", {})).encode()
    with _stdio(ws, "--max-message-bytes", str(len(body))) as (conn, proc):
        conn.send_bytes(frame(body))
        assert "result" in conn.response()
        bigger = json.dumps(_request(2, "fresh/status", {"pad": ""})).encode()
        conn.send_bytes(frame(bigger))
        reply = conn.read()
        assert reply is not None and reply["error"]["code"] == -32600
        assert str(len(body)) in reply["error"]["message"]
        _ended_cleanly(proc)


@pytest.mark.parametrize(
    "garbage",
    [
        b"X-Nonsense: 1\r\n\r\n",  # no Content-Length
        b"Content-Length: -5\r\n\r\n",
        b"Content-Length: 12abc\r\n\r\n",
        b"Content-Length 12\r\n\r\n",  # no colon
        b"Content-Length: 99999999999999999999999999\r\n\r\n",
        b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
        b"A" * 20000 + b"\r\n\r\n",  # one endless header line
        b"\x00\xff\xfe\r\n\r\n",
        b"Content-Length: 10\r\n\r\n{\"a\"",  # the stream ends inside the body
    ],
    ids=["no-length", "negative", "not-a-number", "no-colon", "huge-number", "two-lengths",
         "long-line", "binary", "short-body"],
)
def test_a_malformed_frame_on_stdio_ends_the_connection_not_the_server_badly(
    ws: Path, garbage: bytes
) -> None:
    with _stdio(ws) as (conn, proc):
        assert "result" in conn.initialize({})
        assert "result" in conn.call("fresh/observe", KEEP)
        conn.send_bytes(garbage)
        assert proc.stdin is not None
        proc.stdin.close()
        reply = conn.read()
        if reply is not None:
            assert reply["id"] is None and reply["error"]["code"] == -32600
        _ended_cleanly(proc)
    with raw_stdio(ws, "--no-watch") as (conn, _):
        assert "result" in conn.initialize({})
        stale = conn.call("fresh/stale", {"session": "s"})
        assert [v["viewId"] for v in stale["result"]["views"]] == ["keep"]


def test_oversized_and_malformed_frames_close_only_their_own_connection(
    listening: Listening, ws: Path
) -> None:
    good = _authed(listening, ws)
    try:
        assert "result" in good.call("fresh/observe", KEEP)
        for garbage in (
            b"Content-Length: 5000\r\n\r\n",  # over this server's 4096
            b"Content-Length: nope\r\n\r\n",
            b"garbage without a colon\r\n\r\n",
        ):
            bad = _authed(listening, ws)
            bad.send_bytes(garbage)
            reply = bad.read()
            assert reply is not None and reply["error"]["code"] == -32600
            if garbage.startswith(b"Content-Length: 5000"):
                assert "4096" in reply["error"]["message"]
            _assert_closed(bad)
            bad.close()
            stale = good.call("fresh/stale", {"session": "s"})
            assert [v["viewId"] for v in stale["result"]["views"]] == ["keep"]
        assert listening.proc.poll() is None
    finally:
        good.close()


# -- every readable id gets its answer, and no answer carries a traceback ----------------------


BAD_REQUESTS: list[tuple[Any, dict[str, Any]]] = [
    ("a", _request("a", "fresh/observe", {"session": 5, "path": "cart.py"})),
    (7, _request(7, "fresh/observe", [1, 2])),
    (8, _request(8, "fresh/project", {"session": "s", "budgetBytes": "many"})),
    (9, _request(9, "fresh/commit", {"planId": {"x": 1}})),
    (10, _request(10, "fresh/nope", {})),
    (11, {"jsonrpc": "1.0", "id": 11, "method": "fresh/status", "params": {}}),
    (12, {"jsonrpc": "2.0", "id": 12, "method": 42}),
    (13, {"jsonrpc": "2.0", "id": 13}),
    (14, _request(14, "textDocument/didOpen", {"textDocument": 3})),
    (15, _request(15, "fresh/observe", {"session": "s", "path": "cart.py", "firstLine": 1e309})),
    (16, _request(16, "fresh/stale", {"session": "\ud800"})),
    (2**70, _request(2**70, "fresh/status", {})),
    (None, {"jsonrpc": "2.0", "id": {"an": "object"}, "method": "fresh/status"}),
    (None, {"jsonrpc": "2.0", "id": [1], "method": "fresh/status"}),
]


def test_every_readable_id_gets_its_answer_without_a_traceback(ws: Path) -> None:
    with _stdio(ws) as (conn, proc):
        assert "result" in conn.initialize({})
        for want_id, message in BAD_REQUESTS:
            conn.send_bytes(frame(json.dumps(message).encode()))
            reply = conn.response()
            assert reply["id"] == want_id, (message, reply)
            text = json.dumps(reply)
            assert "Traceback" not in text and '.py"' not in text, reply
            assert "data" not in reply.get("error", {}), reply
        deep = b'{"jsonrpc": "2.0", "id": 99, "method": "fresh/status", "params": ' + (
            b"[" * 100_000
        ) + b"]" * 100_000 + b"}"
        conn.send_bytes(frame(deep))
        reply = conn.response()
        assert reply["error"]["code"] in (-32700, -32600, -32602)
        assert "Traceback" not in json.dumps(reply)
        assert "result" in conn.call("fresh/status", {})
        assert proc.poll() is None


# -- the token, and connections that never present it --------------------------------------


@pytest.mark.parametrize("token", [12, None, ["x"], {"t": 1}, True, "wrong", "\ud800"])
def test_any_wrong_token_is_32013_and_closes(listening: Listening, token: Any) -> None:
    conn = listening.connect()
    try:
        reply = conn.initialize({"token": token})
        assert reply["error"]["code"] == -32013
        _assert_closed(conn)
    finally:
        conn.close()


def test_options_that_are_not_an_object_are_32013_on_the_endpoint(listening: Listening) -> None:
    conn = listening.connect()
    try:
        params = {"processId": None, "rootUri": None, "capabilities": {},
                  "initializationOptions": "token"}
        conn.send(_request(1, "initialize", params))
        assert conn.response()["error"]["code"] == -32013
        _assert_closed(conn)
    finally:
        conn.close()


def _silent(address: str) -> socket.socket:
    assert address.startswith("unix:")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(WAIT_S)
    sock.connect(address[5:])
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def test_a_connection_that_never_authenticates_is_closed(listening: Listening, ws: Path) -> None:
    endpoint = read_endpoint(ws)
    assert endpoint is not None
    sock = _silent(endpoint["address"])
    try:
        started = time.monotonic()
        assert _closed_by_server(sock)
        assert time.monotonic() - started < WAIT_S
    finally:
        sock.close()


def test_a_flood_of_silent_connections_never_shuts_out_the_token_holder(
    listening: Listening, ws: Path
) -> None:
    endpoint = read_endpoint(ws)
    assert endpoint is not None
    flood = [_silent(endpoint["address"]) for _ in range(40)]
    try:
        conn = _authed(listening, ws)
        assert "result" in conn.call("fresh/observe", KEEP)
        # Past the cap of 4 the oldest silent ones were closed at once, not after the timeout.
        assert _closed_by_server(flood[0])
        conn.close()
    finally:
        for sock in flood:
            sock.close()
    # The authenticated connection outlives the auth timeout.
    conn = _authed(listening, ws)
    try:
        time.sleep(1.5)
        assert "result" in conn.call("fresh/status", {})
    finally:
        conn.close()
