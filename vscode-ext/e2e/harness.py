"""A scripted agent harness for the end-to-end test: attaches to the sidecar the extension
started (through ``<root>/.fresh-ls/endpoint.json``) the way any harness would.

    python harness.py ROOT observe   # agent-1 reads Cart.total (call_7) and Cart.__init__ (call_3)
    python harness.py ROOT observe-old   # agent-0 reads line 1 (old_1)
    python harness.py ROOT observe-file  # agent-1 reads the whole of cart.py (call_5)
    python harness.py ROOT forget-file   # and forgets it
    python harness.py ROOT observe-ts  # agent-1 reads lines 1-3 of price.ts (call_9)
    python harness.py ROOT hold      # one connection kept open: a stale answer per stdin line
    python harness.py ROOT stale     # prints agent-1's stale views as JSON
    python harness.py ROOT status    # every session's views, as JSON
"""

from __future__ import annotations

import json
import sys

from fresh_ls.client import SyncClient


def main() -> int:
    root, action = sys.argv[1], sys.argv[2]
    with SyncClient.attach(root, timeout=20) as fresh:
        if action == "hold":
            # A harness that lives across a sidecar restart: the same client object, whose
            # connection drops and is re-made by the client itself.
            print(json.dumps({"ready": True}), flush=True)
            for _ in sys.stdin:
                print(json.dumps(fresh.stale("agent-1")), flush=True)
            return 0
        if action == "observe":
            out = [
                fresh.observe("agent-1", "cart.py", view_id="call_7", first_line=8, last_line=10),
                fresh.observe("agent-1", "cart.py", view_id="call_3", first_line=5, last_line=6),
            ]
        elif action == "observe-ts":
            # lines 1-3 of a four-line function: a fragment no TypeScript parser accepts
            out = [fresh.observe("agent-1", "price.ts", view_id="call_9", first_line=1, last_line=3)]
        elif action == "observe-old":
            # another session, to be "old" once some seconds have passed
            out = [fresh.observe("agent-0", "cart.py", view_id="old_1", first_line=1, last_line=1)]
        elif action == "observe-file":
            # the whole file, as it is now (a file-level view: no lines given)
            out = [fresh.observe("agent-1", "cart.py", view_id="call_5")]
        elif action == "forget-file":
            out = fresh.forget("agent-1", view_ids=["call_5"])
        elif action == "stale":
            out = fresh.stale("agent-1")
        elif action == "status":
            # every session with its views (the terminal test's agent names its own)
            status = fresh.status()
            out = {s["session"]: fresh.stale(s["session"])["views"] for s in status["sessions"]}
        else:
            print(f"unknown action {action!r}", file=sys.stderr)
            return 2
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
