# GENERATED from the method table of fresh_ls/protocol/__init__.py by `make protocol`
# (python -P -m fresh_ls.protocol.ts): do not edit. tests/test_ext_contract.py fails
# while it is stale.
"""The contract's method names, defined once (in the method table of
``fresh_ls.protocol``, which re-exports these).

Free of imports, so the clients and the CLI name methods without loading the typed
protocol (``fresh_ls.protocol`` costs about 170 ms to import)."""

from __future__ import annotations

OBSERVE = "fresh/observe"
STALE = "fresh/stale"
STATUSES = "fresh/statuses"
PROJECT = "fresh/project"
COMMIT = "fresh/commit"
FORGET = "fresh/forget"
STATUS = "fresh/status"
VIEW_TEXT = "fresh/viewText"
CHECK_EDIT = "fresh/checkEdit"
GATE = "fresh/gate"
DID_WRITE = "fresh/didWrite"
DID_INVALIDATE = "fresh/didInvalidate"
