"""Conformance of ``fresh/checkEdit``'s ``retryable`` (an addition, documented in
docs/protocol.md), over a real stdio server: always sent, a boolean; true exactly on
``changed`` and ``unseen``; and it means what it says: the same call again succeeds at once
after a retryable deny (its ``text`` is a view of the session now), and fails the same way
after one that is not. Then what the guard allows on purpose (docs/guard.md): a change and
change back, and a late writer whose region nobody touched.

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


# ------------------------------------------------- what the guard deliberately allows
# (docs/guard.md, "What the guard allows on purpose"): each loses nothing.


def test_a_change_and_change_back_is_allowed(client: RawClient, root: Path) -> None:
    """Another session changes ``Cart.total`` and changes it back: the lines are again the
    ones this session saw, so its edit replaces nothing it did not know."""
    observe(client, path="src/cart.py", viewId="all")
    agent_write(
        client, root, "src/cart.py", CART_PY.replace("* RATE", "* RATE * 2"), session="other"
    )
    observe(client, session="probe", path="src/cart.py", viewId="seen")
    agent_write(client, root, "src/cart.py", CART_PY, session="other")
    # It did change in between (a session that saw the middle sees the change back) ...
    assert check(client, session="probe", oldText="return subtotal")["reason"] == "changed"
    # ... and this session, which never saw the middle, knows every line as it is now.
    allowed = check(client, oldText="return subtotal")
    assert (allowed["verdict"], allowed["reason"]) == ("allow", "known"), allowed
    assert [u["status"] for u in allowed["units"]] == ["fresh"]


def test_a_late_writer_whose_region_nobody_touched_is_allowed(
    client: RawClient, root: Path
) -> None:
    """This session read the file long before two other writers changed other functions
    of it: its edit of ``Cart.total`` goes ahead; theirs stay (an edit replaces its
    region only)."""
    observe(client, path="src/cart.py", viewId="early")
    later = CART_PY.replace("return x + 1", "return x + 2")
    agent_write(client, root, "src/cart.py", later, session="other")
    later = later.replace("import math\n", "import math\nimport os\n")
    agent_write(client, root, "src/cart.py", later, session=None)  # an outside writer
    allowed = check(client, oldText="return subtotal")
    assert (allowed["verdict"], allowed["reason"]) == ("allow", "known"), allowed
    # The same session's whole-file overwrite is not: it would replace their lines.
    whole = check(client, wholeFile=True)
    assert (whole["verdict"], whole["reason"]) == ("deny", "changed"), whole
