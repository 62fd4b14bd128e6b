"""SIGKILL at a random moment of a stream of observes: after the restart, every view the
server acknowledged is served (contract: Persistence), and nothing that was never sent
appears."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from ._support import FULL, WAIT_S, Closed, RawConn, Server, count, report, unix_address

KILLS = count(10, 100)

pytestmark = pytest.mark.timeout(1200 if FULL else 150)

#: (path, firstLine, lastLine) of the views streamed; None: the whole file.
SHAPES = [
    ("cart.py", 9, 9),
    ("cart.py", 4, 10),
    ("cart.py", 1, 14),
    ("cart.py", None, None),
    ("util.py", 1, 2),
    ("util.py", None, None),
    ("web/price.ts", 6, 8),
    ("notes.md", 1, 3),
]


def _stream(conn: RawConn, session: str, sent: dict[str, tuple], stop: threading.Event) -> None:
    """Pipeline observes as fast as the socket takes them, until the server dies."""
    n = 0
    try:
        while not stop.is_set():
            n += 1
            path, first, last = SHAPES[n % len(SHAPES)]
            view_id = f"{session}-{n}"
            params: dict = {"session": session, "path": path, "viewId": view_id}
            if first is not None:
                params.update(firstLine=first, lastLine=last)
            sent[view_id] = (path, first, last)
            conn.send({"jsonrpc": "2.0", "id": n, "method": "fresh/observe", "params": params})
    except (Closed, OSError):
        pass


def _stored(conn: RawConn, session: str) -> dict[str, tuple]:
    views = conn.result("fresh/stale", {"session": session})["views"]
    return {
        v["viewId"]: (v["path"], v["observed"]["firstLine"], v["observed"]["lastLine"])
        for v in views
    }


def _check_session(
    conn: RawConn, session: str, acked: dict[str, tuple], sent: dict[str, tuple]
) -> tuple[int, list[str]]:
    """(views lost, problems): every acknowledged view is stored with its lines, and every
    stored view was sent."""
    stored = _stored(conn, session)
    problems = []
    lost = [vid for vid in acked if vid not in stored]
    for vid, shape in acked.items():
        if vid in stored and stored[vid] != shape:
            problems.append(f"{vid}: stored {stored[vid]}, acknowledged {shape}")
    problems += [f"{vid}: stored but never sent" for vid in stored if vid not in sent]
    return len(lost), problems + [f"{vid}: acknowledged, lost" for vid in lost[:5]]


def test_random_sigkill_during_observe_streams_loses_no_acknowledged_view(ws: Path) -> None:
    rng = random.Random(20261201)
    acked: dict[str, dict[str, tuple]] = {}
    sent: dict[str, dict[str, tuple]] = {}
    problems: list[str] = []
    lost = 0
    started = time.monotonic()
    server = Server(ws, unix_address())
    try:
        for k in range(KILLS):
            session = f"k{k}"
            if k:  # the previous session, right after the restart
                conn = server.client()
                n_lost, found = _check_session(conn, f"k{k - 1}", acked[f"k{k - 1}"],
                                               sent[f"k{k - 1}"])
                lost += n_lost
                problems += found
                conn.close()
            conn = server.client()
            sent[session], acked[session] = {}, {}
            stop = threading.Event()
            writer = threading.Thread(
                target=_stream, args=(conn, session, sent[session], stop), daemon=True
            )
            killer = threading.Timer(rng.uniform(0.05, 0.6), server.kill)
            writer.start()
            killer.start()
            conn.settimeout(WAIT_S)
            try:
                while True:
                    message = conn.response()
                    if "result" in message:
                        result = message["result"]
                        vid = f"{session}-{message['id']}"
                        assert result["viewId"] == vid, message
                        path, first, last = sent[session][vid]
                        acked[session][vid] = (
                            result["path"],
                            result["firstLine"],
                            result["lastLine"],
                        )
                        assert result["path"] == path
                        if first is not None:
                            assert (result["firstLine"], result["lastLine"]) == (first, last)
                    else:
                        problems.append(f"observe failed: {message}")
            except (Closed, OSError):
                pass  # the kill
            killer.join()
            stop.set()
            writer.join(WAIT_S)
            conn.close()
            assert not server.alive()
            server = Server(ws, unix_address())
        # Every session, after every later restart.
        conn = server.client()
        final_lost = 0
        for session in acked:
            n_lost, found = _check_session(conn, session, acked[session], sent[session])
            final_lost += n_lost
            problems += found
        conn.close()
    finally:
        server.stop()
    total = sum(len(a) for a in acked.values())
    report(
        "sigkill-observe-stream",
        kills=KILLS,
        acknowledged=total,
        sent=sum(len(s) for s in sent.values()),
        lost=lost,
        lost_at_end=final_lost,
        seconds=round(time.monotonic() - started, 1),
    )
    assert total > 0, "no observe was acknowledged before any kill"
    assert lost == 0 and final_lost == 0 and not problems, problems[:10]
