"""The contract's method names, defined once.

Free of imports, so the clients and the CLI name methods without loading the typed
protocol (``fresh_ls.protocol``, which re-exports these, costs about 170 ms to import).
"""

from __future__ import annotations

OBSERVE = "fresh/observe"
STALE = "fresh/stale"
PROJECT = "fresh/project"
COMMIT = "fresh/commit"
FORGET = "fresh/forget"
STATUS = "fresh/status"
VIEW_TEXT = "fresh/viewText"  # an addition to the contract
CHECK_EDIT = "fresh/checkEdit"  # v1.2
GATE = "fresh/gate"  # v1.2
DID_WRITE = "fresh/didWrite"
DID_INVALIDATE = "fresh/didInvalidate"
