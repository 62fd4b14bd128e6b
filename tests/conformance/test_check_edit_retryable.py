"""Conformance of ``fresh/checkEdit``'s ``retryable`` (an addition, documented in
docs/protocol.md), over a real stdio server: always sent, a boolean; true exactly on
``changed`` and ``unseen``; and it means what it says: the same call again succeeds at once
after a retryable deny (its ``text`` is a view of the session now), and fails the same way
after one that is not.

Like ``test_contract.py``, nothing here imports fresh_ls; the server is driven through
``rawclient.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rawclient import RawClient
from test_contract import CART_PY, agent_write, observe
from test_contract import client as client
from test_contract import root as root

pytestmark = pytest.mark.timeout(60)


def check(c: RawClient, session: str = "s", **region: Any) -> dict[str, Any]:
    res = c.request("fresh/checkEdit", {"session": session, "path": "src/cart.py", **region})
    assert isinstance(res.get("retryable"), bool), res  # always sent
    assert res["verdict"] in ("allow", "deny"), res
    return res


def test_allow_is_not_retryable(client: RawClient) -> None:
    observe(client, path="src/cart.py", viewId="all")
    allowed = check(client, oldText="return subtotal")
    assert (allowed["verdict"], allowed["reason"], allowed["retryable"]) == (
        "allow",
        "known",
        False,
    )


def test_unseen_is_retryable_and_the_same_call_then_succeeds(client: RawClient) -> None:
    denied = check(client, oldText="return subtotal")
    assert (denied["verdict"], denied["reason"], denied["retryable"]) == ("deny", "unseen", True)
    again = check(client, oldText="return subtotal")
    assert (again["verdict"], again["reason"]) == ("allow", "known")


def test_changed_is_retryable_and_the_same_call_then_succeeds(
    client: RawClient, root: Path
) -> None:
    observe(client, path="src/cart.py", viewId="all")
    changed = CART_PY.replace("quantity * RATE", "quantity * RATE * 2")
    agent_write(client, root, "src/cart.py", changed, session="other")
    denied = check(client, oldText="return subtotal")
    assert (denied["verdict"], denied["reason"], denied["retryable"]) == ("deny", "changed", True)
    (unit,) = [u for u in denied["units"] if u["status"] != "fresh"]
    assert unit["changedBy"] == "session:other"
    again = check(client, oldText="return subtotal")
    assert (again["verdict"], again["reason"]) == ("allow", "known")


def test_whole_file_unseen_is_retryable(client: RawClient) -> None:
    denied = check(client, wholeFile=True)
    assert (denied["reason"], denied["retryable"]) == ("unseen", True)
    assert check(client, wholeFile=True)["verdict"] == "allow"


@pytest.mark.parametrize(
    ("old_text", "reason"), [("no such text", "missing"), ("return", "ambiguous")]
)
def test_missing_and_ambiguous_are_not_retryable(
    client: RawClient, old_text: str, reason: str
) -> None:
    observe(client, path="src/cart.py", viewId="all")
    denied = check(client, oldText=old_text)
    assert (denied["verdict"], denied["reason"], denied["retryable"]) == ("deny", reason, False)
    assert check(client, oldText=old_text) == denied  # the same call fails the same way
