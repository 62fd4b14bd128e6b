"""Protocol fuzzing of every method and of the framing, over a real listening server.

Invariants (contract: Conventions, Errors, Transport):
- the server never dies;
- every request whose id was readable (a JSON string, or an integer within LSP's int32)
  gets exactly one answer carrying that same id; an answer never names an id that was not
  sent (answers to unreadable ids carry ``null`` or that same value);
- no answer carries a Python traceback or a path into the server's code;
- a stored view is never lost, and another connection keeps being served;
- a broken frame closes only its own connection; an oversized one is answered -32600 naming
  the limit, then closed.
"""

from __future__ import annotations

import json
import random
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from ._support import (
    FULL,
    WAIT_S,
    Closed,
    RawConn,
    Server,
    count,
    frame,
    leaks,
    report,
    serving,
)

BATCHES = count(15, 150)
BATCH = 20
#: How long a batch's answers may take (a sanity bound), and how long the fuzzing may run.
ANSWER_S = 10.0
FUZZ_S = 600.0 if FULL else 45.0
pytestmark = pytest.mark.timeout(900 if FULL else 90)

KEEP_SESSION = "keep-session-never-fuzzed"
LIMIT = 16 * 1024 * 1024

# -- values ------------------------------------------------------------------------------------

STRINGS = [
    "",
    "s",
    "t",
    "cart.py",
    "util.py",
    "web/price.ts",
    "notes.md",
    "missing.py",
    "../outside.py",
    "/etc/passwd",
    "/",
    ".",
    "..",
    "web",
    ".fresh-ls/views.sqlite3",
    ".fresh-ls/endpoint.json",
    "\x00",
    "cart.py\x00.txt",
    "\ud800",
    "\udfff",
    "a\ud800b",
    "é" * 300,
    "\u2028\u2029",
    "file:///etc/passwd",
    "p-000000000000",
    "x" * 70_000,
    "C:\\Windows\\win.ini",
    "%s%n%x",
    "{}",
    "null",
]
NUMBERS: list[Any] = [0, -1, 1, 2, 7, 14, 2**31, 2**53 + 1, 2**63, 10**30, -(10**30), 1.5, -0.0,
                      1e308, 10**400]


def value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(STRINGS)
    if roll < 0.6:
        return rng.choice(NUMBERS)
    if roll < 0.7:
        return rng.choice([None, True, False])
    if roll < 0.85 and depth < 3:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if depth < 3:
        return {rng.choice(STRINGS[:12]): value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return rng.choice(STRINGS)


def _range() -> dict[str, Any]:
    return {"firstLine": 9, "lastLine": 9}


def valid(method: str, rng: random.Random) -> dict[str, Any]:
    """Params that the method accepts, to be broken one field at a time."""
    session = rng.choice(["s", "t"])
    path = rng.choice(["cart.py", "util.py", "web/price.ts", "notes.md"])
    uri_rel = rng.choice(["cart.py", "util.py"])
    uri = f"file:///{uri_rel}"  # a relative-looking uri: the server maps or refuses it
    table: dict[str, dict[str, Any]] = {
        "fresh/observe": {"session": session, "path": path, "viewId": f"v{rng.randint(0, 9)}",
                          **_range(), "text": "subtotal = quantity * RATE\n", "kind": "read"},
        "fresh/stale": {"session": session, "viewIds": ["v1"]},
        "fresh/statuses": {"session": session, "viewIds": ["v1"]},
        "fresh/project": {"session": session, "budgetBytes": 4096, "policy": "all"},
        "fresh/commit": {"planId": "p-000000000000"},
        "fresh/forget": {"session": session, "viewIds": ["v2"]},
        "fresh/status": {},
        "fresh/viewText": {"session": session, "viewId": "v1"},
        "fresh/checkEdit": {"session": session, "path": path, "oldText": "return a + b"},
        "fresh/gate": {"session": session},
        "fresh/didWrite": {"session": session, "path": path},
        "initialize": {"processId": 1, "rootUri": None, "capabilities": {}},
        "textDocument/didOpen": {"textDocument": {"uri": uri, "languageId": "python",
                                                  "version": 1, "text": "x = 1\n"}},
        "textDocument/didChange": {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                          "end": {"line": 0, "character": 1}}, "text": "y"}],
        },
        "textDocument/didSave": {"textDocument": {"uri": uri}},
        "textDocument/didClose": {"textDocument": {"uri": uri}},
        "textDocument/hover": {"textDocument": {"uri": uri},
                               "position": {"line": 0, "character": 0}},
        "workspace/didChangeWatchedFiles": {"changes": [{"uri": uri, "type": 2}]},
        "fresh/nope": {},
    }
    return table[method]


METHODS = [
    "fresh/observe",
    "fresh/stale",
    "fresh/statuses",
    "fresh/project",
    "fresh/commit",
    "fresh/forget",
    "fresh/status",
    "fresh/viewText",
    "fresh/checkEdit",
    "fresh/gate",
    "fresh/didWrite",
    "initialize",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didSave",
    "textDocument/didClose",
    "textDocument/hover",
    "workspace/didChangeWatchedFiles",
    "fresh/nope",
]

#: Methods that are notifications: fuzzed as such (without an id) in the main fuzz; sent
#: with an id they are requests, which ``test_notification_methods_sent_with_an_id...``
#: covers on its own.
NOTIFICATIONS = {
    "fresh/didWrite",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didSave",
    "textDocument/didClose",
    "workspace/didChangeWatchedFiles",
}


def mutate(params: dict[str, Any], rng: random.Random) -> Any:
    roll = rng.random()
    out = dict(params)
    if roll < 0.1:
        return value(rng)  # params of the wrong type altogether
    if roll < 0.2 and out:
        out.pop(rng.choice(list(out)))
        return out
    if roll < 0.3:
        out[rng.choice(STRINGS[:12])] = value(rng)  # an unknown field
        return out
    for _ in range(rng.randint(1, 3)):
        if out:
            key = rng.choice(list(out))
            inner = out[key]
            if isinstance(inner, dict) and inner and rng.random() < 0.5:
                inner = dict(inner)
                inner[rng.choice(list(inner))] = value(rng)
                out[key] = inner
            else:
                out[key] = value(rng)
    return out


# -- ids ---------------------------------------------------------------------------------------

UNREADABLE_IDS: list[Any] = [{}, {"a": 1}, [], [1], 1.5, 10**30, -(10**30), True, None]


def readable(rid: Any) -> bool:
    if isinstance(rid, str):
        return True
    return type(rid) is int and -(2**31) <= rid < 2**31


# -- messages ----------------------------------------------------------------------------------


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


class Batch:
    """Messages of one batch as bytes, with the ids whose answers are owed."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.owed: dict[str, str] = {}  # json of a readable id -> a short description
        self.unreadable: list[str] = []  # json of unreadable ids sent
        self.shown: list[str] = []

    def add(self, body: bytes, rid: Any = "absent", what: str = "") -> None:
        self.frames.append(frame(body))
        self.shown.append(f"{what} {body[:200]!r}")
        if rid == "absent":
            return
        key = json.dumps(rid)
        if readable(rid):
            self.owed[key] = f"{what} {body[:300]!r}"
        else:
            self.unreadable.append(key)


def build_batch(rng: random.Random, serial: int, ws: Path) -> Batch:
    batch = Batch()
    for i in range(BATCH):
        method = rng.choice(METHODS)
        params = mutate(valid(method, rng), rng) if rng.random() < 0.85 else valid(method, rng)
        roll = rng.random()
        if method in NOTIFICATIONS:
            rid: Any = "absent"
        elif roll < 0.08:
            rid = rng.choice(UNREADABLE_IDS)
        elif roll < 0.2:
            rid = "absent"  # a notification (or a request sent without its id)
        elif roll < 0.6:
            rid = serial * 1000 + i
        else:
            rid = f"r-{serial}-{i}-" + rng.choice(["", "é", "\u2028", "x" * 50])
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if rid != "absent":
            message["id"] = rid
        if rng.random() < 0.05:  # a broken envelope, its id readable
            message[rng.choice(["jsonrpc", "method", "params"])] = value(rng)
        try:
            body = json.dumps(message).encode("utf-8")
        except (ValueError, OverflowError):
            continue
        batch.add(body, rid, method)
    # Bodies a JSON encoder would not produce.
    special = serial % 8
    rid = f"special-{serial}"
    if special == 0:
        batch.add(b'{"jsonrpc": "2.0", "id": 5, "method": ', what="not JSON")
    elif special == 1:
        batch.add(b"\xff\xfe\x00{}", what="not UTF-8")
    elif special == 2:
        batch.add(nested(100_000), what="nesting 100000")
    elif special == 3:  # deep, but within what a JSON parser reads: the id is readable
        body = (
            b'{"jsonrpc": "2.0", "id": "%s", "method": "fresh/observe", "params": '
            b'{"session": "s", "path": %s}}' % (rid.encode(), nested(400))
        )
        batch.add(body, rid, "nesting 400 in path")
    elif special == 4:
        body = (
            b'{"jsonrpc": "2.0", "id": "%s", "method": "fresh/stale", "params": '
            b'{"session": "s", "viewIds": %s}}' % (rid.encode(), nested(100_000))
        )
        batch.add(body, what="nesting 100000 in params")  # unparseable: id unreadable
    elif special == 5:  # a big but legal message
        size = (15 if FULL else 4) * 1024 * 1024
        text = "z" * size
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "fresh/observe",
                           "params": {"session": "s", "path": "cart.py", "text": text}})
        batch.add(body.encode(), rid, "a big observe")
    elif special == 6:
        body = b'{"jsonrpc": "2.0", "id": "%s", "method": "fresh/observe", "params": ' \
               b'{"session": "s\\u0000", "path": "cart.py\\ud800", "firstLine": 1%s}}' % (
                   rid.encode(), b"0" * 4000)
        batch.add(body, rid, "NUL, lone surrogate, a 4000-digit number")
    else:
        batch.add(b'{"jsonrpc": "2.0", "id": "%s", "method": "fresh/status", "params": {}, '
                  b'"id": "%s-dup"}' % (rid.encode(), rid.encode()), f"{rid}-dup",
                  "duplicate id key")
    rng.shuffle(batch.frames)
    return batch


def check_answer(message: dict[str, Any]) -> list[str]:
    problems = []
    if message.get("jsonrpc") != "2.0":
        problems.append(f"no jsonrpc 2.0: {message}")
    if ("result" in message) == ("error" in message):
        problems.append(f"not exactly one of result/error: {str(message)[:300]}")
    error = message.get("error")
    if error is not None:
        if not isinstance(error, dict) or type(error.get("code")) is not int or not isinstance(
            error.get("message"), str
        ):
            problems.append(f"malformed error: {str(message)[:300]}")
        found = leaks(message)
        if found:
            problems.append(f"leaks {found}: {str(message)[:500]}")
    return problems


def run_batch(conn: RawConn, batch: Batch, serial: int) -> list[str]:
    sync = f"sync-{serial}"
    try:
        conn.send_bytes(b"".join(batch.frames))
        conn.send({"jsonrpc": "2.0", "id": sync, "method": "fresh/status", "params": {}})
    except Closed:
        return ["the server closed the fuzzed connection while the batch was sent"]
    owed = dict(batch.owed)
    owed[json.dumps(sync)] = "the sync status"
    answered: set[str] = set()
    problems: list[str] = []
    deadline = time.monotonic() + ANSWER_S
    while owed:
        left = deadline - time.monotonic()
        if left <= 0:
            problems.append(f"no answer in {ANSWER_S} s for {list(owed.values())[:5]}")
            break
        conn.settimeout(left)
        try:
            message = conn.read()
        except TimeoutError:
            continue
        except Closed:
            problems.append(f"the server closed the fuzzed connection; owed {list(owed)[:5]}")
            break
        if "method" in message and "id" not in message:
            continue  # a notification (fresh/didInvalidate)
        if "method" in message:
            continue  # a request from the server
        problems += check_answer(message)
        key = json.dumps(message.get("id"))
        if key in owed:
            owed.pop(key)
            answered.add(key)
        elif key in answered:
            problems.append(f"two answers for id {key}")
        elif key != "null" and key not in batch.unreadable:
            problems.append(f"an answer for an id never sent: {str(message)[:300]}")
    return problems


def test_fuzzed_requests_never_crash_and_every_readable_id_is_answered(ws: Path) -> None:
    rng = random.Random(88)
    problems: list[str] = []
    messages = 0
    started = time.monotonic()
    with serving(ws) as server:
        bystander = server.client()
        kept = bystander.result(
            "fresh/observe",
            {"session": KEEP_SESSION, "path": "cart.py", "viewId": "keep", "firstLine": 8,
             "lastLine": 10},
        )
        before = bystander.result("fresh/stale", {"session": KEEP_SESSION})
        fuzz = server.client()
        done = 0
        for serial in range(BATCHES):
            if time.monotonic() - started > FUZZ_S or len(problems) >= 30:
                break  # bounded: the verdict stands on what ran
            done += 1
            batch = build_batch(rng, serial, ws)
            messages += len(batch.frames)
            found = run_batch(fuzz, batch, serial)
            if found:
                problems += [f"batch {serial}: {p}" for p in found]
                if any("closed" in p for p in found):
                    problems.append(f"batch {serial} held: {batch.shown[:40]}")
                    fuzz.close()
                    fuzz = server.client()
            assert server.alive(), f"the server died in batch {serial}: {server.log_tail()}"
            bystander.settimeout(WAIT_S)
            after = bystander.result("fresh/stale", {"session": KEEP_SESSION})
            assert after == before, f"the stored view changed in batch {serial}: {after}"
        assert kept["viewId"] == "keep"
        assert server.alive()
    report(
        "protocol-fuzz",
        batches=done,
        messages=messages,
        problems=len(problems),
        seconds=round(time.monotonic() - started, 1),
    )
    assert not problems, "\n".join(problems[:15])


def test_notification_methods_sent_with_an_id_are_answered(ws: Path) -> None:
    """A message with an id is a request (JSON-RPC 2.0): even for a method LSP defines as a
    notification, the server answers it with that id (a result or an error)."""
    rng = random.Random(5)
    missing = []
    with serving(ws) as server:
        conn = server.client()
        for n, method in enumerate(sorted(NOTIFICATIONS)):
            conn.send({"jsonrpc": "2.0", "id": 700 + n, "method": method,
                       "params": valid(method, rng)})
            conn.send({"jsonrpc": "2.0", "id": f"after-{n}", "method": "fresh/status",
                       "params": {}})
            ids = set()
            conn.settimeout(5.0)
            try:
                while f"after-{n}" not in ids:
                    message = conn.response()
                    ids.add(message.get("id"))
                    assert not check_answer(message), message
            except (TimeoutError, Closed) as exc:
                missing.append(f"{method}: {exc}")
                conn = server.client()
                continue
            # The answer to a request sent first may come after a later one's: wait briefly.
            if 700 + n not in ids:
                try:
                    conn.settimeout(1.0)
                    ids.add(conn.response().get("id"))
                except (TimeoutError, Closed):
                    pass
            if 700 + n not in ids:
                missing.append(method)
        assert server.alive()
    report("notification-as-request", methods=len(NOTIFICATIONS), unanswered=len(missing))
    assert not missing, f"no answer to these requests: {missing}"


# -- framing -----------------------------------------------------------------------------------

#: (name, bytes sent after initialize, must the server close the connection?, half-close after)
#: A case that need not close must go on answering.
FRAMING = [
    ("non-numeric length", b"Content-Length: abc\r\n\r\n{}", True, False),
    ("negative length", b"Content-Length: -5\r\n\r\n{}", True, False),
    ("no Content-Length", b"Content-Type: application/json\r\n\r\n{}", True, False),
    ("a header line without a colon", b"Garbage header line\r\n\r\n{}", True, False),
    ("a 30-digit length", b"Content-Length: 999999999999999999999999999999\r\n\r\n", True,
     False),
    ("EOF inside a header", b"Content-Len", True, True),
    ("EOF inside a body", b'Content-Length: 100\r\n\r\n{"jsonrpc": ', True, True),
    ("a 100000-byte header line", b"X-Pad: " + b"a" * 100_000 + b"\r\n", False, False),
    ("300 header lines", b"X-Pad: 1\r\n" * 300, False, False),
    ("NUL in a header", b"Content-Length: 2\x00\r\n\r\n{}", False, False),
    ("LF-only header", b"Content-Length: 2\n\n{}", False, False),
    ("an empty body", b"Content-Length: 0\r\n\r\n", False, False),
]


def _status_frame(rid: str) -> bytes:
    return frame(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "fresh/status",
                             "params": {}}).encode())


def _outcome(conn: RawConn, must_close: bool, timeout: float) -> str:
    """'closed', 'served' or a problem; reads every answer until one of the first two."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "neither closed nor served in time"
        conn.settimeout(left)
        try:
            message = conn.read()
        except Closed:
            return "closed"
        except TimeoutError:
            return "neither closed nor served in time"
        except (ValueError, AssertionError):
            continue
        found = check_answer(message) if "method" not in message else []
        if found:
            return "; ".join(found)
        if message.get("id") == "after" and "result" in message:
            return "served" if not must_close else f"served though it must close: {message}"


def test_broken_frames_close_only_their_own_connection(ws: Path) -> None:
    started = time.monotonic()
    problems: list[str] = []
    with serving(ws) as server:
        bystander = server.client()
        bystander.result("fresh/observe", {"session": KEEP_SESSION, "path": "util.py",
                                           "viewId": "keep"})
        before = bystander.result("fresh/stale", {"session": KEEP_SESSION})
        conns = []
        for name, data, must_close, half_close in FRAMING:
            conn = server.client()
            try:
                conn.send_bytes(data)
                if half_close:
                    conn.sock.shutdown(socket.SHUT_WR)
                elif not must_close:
                    conn.send_bytes(_status_frame("after"))
            except (Closed, OSError):
                pass  # closed already, as fast as it may: _outcome reads the EOF
            conns.append((name, conn, must_close))
        # An oversized frame: the body is never sent, the answer must come anyway.
        big = server.client()
        big.send_bytes(b"Content-Length: %d\r\n\r\n" % (LIMIT + 1))
        unauth = RawConn.connect(server.address)
        unauth.send_bytes(b"Content-Length: %d\r\n\r\n" % (LIMIT + 1))
        for name, conn, must_close in conns:
            outcome = _outcome(conn, must_close, 10.0)
            if outcome not in ("closed", "served"):
                problems.append(f"{name}: {outcome}")
            conn.close()
        for name, conn in (("oversized", big), ("oversized, unauthenticated", unauth)):
            try:
                conn.settimeout(10.0)
                reply = conn.response()
                error = reply.get("error") or {}
                if error.get("code") != -32600 or (str(LIMIT) not in error.get("message", "") \
                        and "16 MiB" not in error.get("message", "")):
                    problems.append(f"{name}: not -32600 naming the limit: {reply}")
                if not conn.wait_closed(10.0):
                    problems.append(f"{name}: answered but not closed")
            except (Closed, TimeoutError) as exc:
                problems.append(f"{name}: no -32600 answer ({exc})")
            conn.close()
        assert server.alive(), server.log_tail()
        bystander.settimeout(WAIT_S)
        assert bystander.result("fresh/stale", {"session": KEEP_SESSION}) == before
        fresh = server.client()
        assert "version" in fresh.result("fresh/status", {})
        fresh.close()
    report("framing-fuzz", cases=len(FRAMING) + 2, problems=len(problems),
           seconds=round(time.monotonic() - started, 1))
    assert not problems, "\n".join(problems)


def test_max_message_bytes_bounds_a_frame_and_closes_only_that_connection(ws: Path) -> None:
    limit = 65536
    with serving(ws, None, "--max-message-bytes", str(limit)) as server:
        bystander = server.client()
        ok = server.client()
        text = "y" * (limit - 500)
        reply = ok.call("fresh/observe", {"session": "s", "path": "cart.py", "text": text})
        assert "result" in reply or reply["error"]["code"] != -32600, reply
        over = server.client()
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "fresh/observe",
                           "params": {"session": "s", "path": "cart.py",
                                      "text": "y" * (limit + 10)}}).encode()
        over.send_bytes(frame(body))
        reply = over.response()
        assert reply["error"]["code"] == -32600, reply
        assert str(limit) in reply["error"]["message"], reply
        assert over.wait_closed(10.0), "the oversized connection stayed open"
        assert "version" in bystander.result("fresh/status", {})
        assert "version" in ok.result("fresh/status", {})
        assert server.alive()


def test_the_server_process_outlives_every_fuzzed_connection(ws: Path) -> None:
    """Connections that vanish mid-request (reset with data unread) do not end the server."""
    rounds = count(20, 200)
    with serving(ws) as server:
        for i in range(rounds):
            conn = server.client()
            conn.send(
                {"jsonrpc": "2.0", "id": i, "method": "fresh/project",
                 "params": {"session": "s", "policy": "all"}}
            )
            conn.send_bytes(b"Content-Length: 50\r\n\r\n{")
            conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00"
                                 b"\x00\x00\x00\x00")
            conn.close()  # an RST, not a FIN
        assert server.alive(), server.log_tail()
        last = server.client()
        assert "version" in last.result("fresh/status", {})
    report("vanishing-connections", connections=rounds, survived=int(Server is not None))
