"""A file tree-sitter-python parses in quadratic time (a run of comment lines after an
indented block) over a real listening server: the parse runs off the event loop within a
time budget, so another client's request answers meanwhile, and the file over the budget
is served as one ``file`` unit instead of stalling everyone."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fresh_ls.client import SyncClient

from ._support import WAIT_S, Listening, make_workspace, short_socket_path

pytestmark = pytest.mark.timeout(180)

#: Unbounded, this parse takes tens of seconds (20k lines: 18 s on a quiet machine).
PATHOLOGICAL = "def f():\n    x = 1\n" + "# a comment line\n" * 20_000
#: A generous sanity bound for a status request that has nothing to wait for.
PROMPT_S = 5.0


def test_status_answers_while_a_pathological_file_is_parsed(tmp_path: Path) -> None:
    root = make_workspace(
        tmp_path / "ws", {"cart.py": "def total(q):\n    return q\n\n\ndef tax(q):\n    return q\n"}
    )
    (root / "slow.py").write_text(PATHOLOGICAL)
    server = Listening(root, f"unix:{short_socket_path()}")
    try:
        observed: dict[str, Any] = {}

        def observe() -> None:
            with SyncClient.attach(root) as a:
                observed["result"] = a.observe("alice", "slow.py", first_line=1, last_line=2)

        with SyncClient.attach(root) as b:
            b.status()  # connected and answering before the slow parse begins
            worker = threading.Thread(target=observe)
            worker.start()
            time.sleep(0.5)  # alice's observe is being parsed now
            started = time.monotonic()
            status = b.status()
            waited = time.monotonic() - started
            assert waited < PROMPT_S, f"status waited {waited:.1f} s behind another's parse"
            assert status["root"] == str(root)
            worker.join(WAIT_S * 3)
            assert not worker.is_alive()
            # Over the budget: lines 1-2 (def f) are part of one unit for the whole file,
            # served without definitions rather than stalling the server.
            units = observed["result"]["units"]
            assert [u["kind"] for u in units] == ["file"], units
            # A normal file still gets its definitions from the same (budgeted) parser.
            cart = b.observe("bob", "cart.py", first_line=1, last_line=2)
            assert [(u["kind"], u["name"]) for u in cart["units"]] == [("symbol", "total")], cart
    finally:
        server.stop()
