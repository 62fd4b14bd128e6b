"""fresh/checkEdit and fresh/gate (v1.2) over a real server: every verdict and reason, the
own-write rule, range overlap, the view a deny records, and the gate after a change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ._support import Lsp, parse_rendered, replace_in

pytestmark = pytest.mark.timeout(60)

TOTAL = (
    "    def total(self, quantity):\n        subtotal = quantity * RATE\n        return subtotal\n"
)


async def check(conn: Lsp, session: str = "s", **params: Any) -> dict[str, Any]:
    params.setdefault("path", "cart.py")
    return dict(await conn.request("fresh/checkEdit", {"session": session, **params}))


async def gate(conn: Lsp, session: str = "s", **params: Any) -> dict[str, Any]:
    return dict(await conn.request("fresh/gate", {"session": session, **params}))


# -- allow: known ---------------------------------------------------------------------------


async def test_by_old_text_after_reading_the_function_is_allowed(quiet: Lsp) -> None:
    await quiet.observe(path="cart.py", viewId="r1", firstLine=8, lastLine=10)
    result = await check(quiet, oldText="quantity * RATE")
    assert result == {
        "verdict": "allow",
        "reason": "known",
        "units": [
            {
                "kind": "symbol",
                "name": "Cart.total",
                "symbolKind": "method",
                "firstLine": 8,
                "lastLine": 10,
                "status": "fresh",
                "changedBy": None,
                "diff": None,
                "known": True,
            }
        ],
        "text": "",
        "retryable": False,
    }


async def test_by_lines_and_whole_file_after_a_whole_file_read(quiet: Lsp) -> None:
    await quiet.observe(path="cart.py", viewId="all")
    assert (await check(quiet, firstLine=13, lastLine=14))["verdict"] == "allow"
    assert (await check(quiet, firstLine=9))["verdict"] == "allow"  # through the end
    whole = await check(quiet, wholeFile=True)
    assert (whole["verdict"], whole["reason"]) == ("allow", "known")
    assert [(u["kind"], u["firstLine"], u["lastLine"]) for u in whole["units"]] == [
        ("file", 1, 14)
    ]


async def test_creation_is_allowed(quiet: Lsp, ws: Path) -> None:
    result = await check(quiet, path="new/mod.py", wholeFile=True)
    assert result == {
        "verdict": "allow", "reason": "known", "units": [], "text": "", "retryable": False,
    }  # fmt: skip
    assert not (ws / "new").exists()


# -- deny: unseen, and the view it records ----------------------------------------------------


async def test_unseen_denies_with_the_current_code_and_a_retry_is_allowed(quiet: Lsp) -> None:
    await quiet.observe(path="cart.py", viewId="top", firstLine=1, lastLine=1)
    denied = await check(quiet, oldText="return subtotal")
    assert (denied["verdict"], denied["reason"]) == ("deny", "unseen")
    (unit,) = denied["units"]
    assert (unit["name"], unit["known"], unit["diff"]) == ("Cart.total", False, None)
    (entry,) = parse_rendered(denied["text"])
    assert entry[1] == TOTAL
    assert "cart.py lines 8-10" in entry[0] and denied["viewId"] in entry[0]
    # The answer is a view of the session now: the retry needs no read.
    views = {v["viewId"]: v for v in (await quiet.stale())["views"]}
    assert views[denied["viewId"]]["observed"]["firstLine"] == 8
    assert views[denied["viewId"]]["status"] == "fresh"
    assert (await check(quiet, oldText="return subtotal"))["verdict"] == "allow"


async def test_a_partly_read_function_is_unseen(quiet: Lsp) -> None:
    await quiet.observe(path="cart.py", viewId="half", firstLine=8, lastLine=9)
    result = await check(quiet, firstLine=9, lastLine=9)
    assert (result["verdict"], result["reason"]) == ("deny", "unseen")


async def test_whole_file_overwrite_of_a_file_never_read_is_unseen(quiet: Lsp) -> None:
    result = await check(quiet, path="util.py", wholeFile=True)
    assert (result["verdict"], result["reason"]) == ("deny", "unseen")
    (entry,) = parse_rendered(result["text"])
    assert "whole file" in entry[0]


# -- deny: changed, with who and the diff; range overlap ----------------------------------------


async def test_another_sessions_change_to_the_target_denies_with_its_diff(
    quiet: Lsp, ws: Path
) -> None:
    await quiet.observe(session="a", path="cart.py", viewId="read")
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    quiet.did_write("cart.py", session="b")
    denied = await check(quiet, "a", oldText="return subtotal")
    assert (denied["verdict"], denied["reason"]) == ("deny", "changed")
    (unit,) = denied["units"]
    assert unit["status"] == "changed" and unit["changedBy"] == "session:b"
    assert "-        subtotal = quantity * RATE\n" in unit["diff"]
    assert "+        subtotal = quantity * RATE * 2\n" in unit["diff"]
    assert "--- cart.py lines" in unit["diff"]
    (entry,) = parse_rendered(denied["text"])
    assert "quantity * RATE * 2" in entry[1]
    retry = await check(quiet, "a", oldText="return subtotal")
    assert (retry["verdict"], retry["reason"]) == ("allow", "known")


async def test_a_change_elsewhere_in_the_file_allows(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(session="a", path="cart.py", viewId="read")
    replace_in(ws / "cart.py", "return 1", "return 11")  # helper, not Cart.total
    replace_in(ws / "cart.py", "RATE = 10\n", "# formatted\nRATE = 10\n")  # moves everything
    quiet.did_write("cart.py", session="b")
    result = await check(quiet, "a", oldText="return subtotal")
    assert (result["verdict"], result["reason"]) == ("allow", "known")
    assert result["units"][0]["firstLine"] == 9  # Cart.total moved down one line
    # The changed function itself is denied, naming the other session.
    denied = await check(quiet, "a", oldText="return 11")
    assert denied["reason"] == "changed" and denied["units"][0]["changedBy"] == "session:b"


async def test_an_outside_write_is_named_outside(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(path="cart.py", viewId="read", firstLine=8, lastLine=10)
    replace_in(ws / "cart.py", "return subtotal", "return subtotal + 0")
    denied = await check(quiet, firstLine=9, lastLine=9)
    assert denied["reason"] == "changed" and denied["units"][0]["changedBy"] == "outside"


# -- the own-write rule ------------------------------------------------------------------------


async def test_a_sessions_own_write_counts_as_seen(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(session="a", path="cart.py", viewId="read", firstLine=8, lastLine=10)
    replace_in(ws / "cart.py", "return subtotal", "return subtotal + 1")
    quiet.did_write("cart.py", session="a")
    again = await check(quiet, "a", oldText="return subtotal + 1")
    assert (again["verdict"], again["reason"]) == ("allow", "known")
    # A new function it wrote counts too, and so does the code it read and did not touch.
    (ws / "cart.py").write_text((ws / "cart.py").read_text() + "\n\ndef added():\n    pass\n")
    quiet.did_write("cart.py", session="a")
    assert (await check(quiet, "a", oldText="    pass\n"))["verdict"] == "allow"
    assert (await check(quiet, "a", oldText="quantity * RATE"))["verdict"] == "allow"
    # The same write by another session is news to it.
    other = await check(quiet, "b", oldText="    pass\n")
    assert other["reason"] == "unseen"


async def test_a_created_file_is_known_to_its_writer(quiet: Lsp, ws: Path) -> None:
    (ws / "fresh.py").write_text("def made():\n    return 0\n")
    quiet.did_write("fresh.py", session="a")
    result = await check(quiet, "a", path="fresh.py", wholeFile=True)
    assert result["verdict"] == "allow"


# -- deny: ambiguous, missing; errors ----------------------------------------------------------


async def test_old_text_twice_is_ambiguous_and_absent_is_missing(quiet: Lsp) -> None:
    await quiet.observe(path="cart.py", viewId="read")
    twice = await check(quiet, oldText="return")
    assert twice == {
        "verdict": "deny", "reason": "ambiguous", "units": [], "text": "", "retryable": False,
    }  # fmt: skip
    absent = await check(quiet, oldText="no such text")
    assert absent == {
        "verdict": "deny", "reason": "missing", "units": [], "text": "", "retryable": False,
    }  # fmt: skip


async def test_retryable_says_whether_the_same_call_can_succeed(quiet: Lsp, ws: Path) -> None:
    """``changed`` and ``unseen`` record the current code as a view: the same call again
    is allowed (after re-deciding on that code). ``missing``/``ambiguous`` need another
    oldText; an allow has nothing to retry."""
    unseen = await check(quiet, oldText="return subtotal")
    assert (unseen["reason"], unseen["retryable"]) == ("unseen", True)
    allowed = await check(quiet, oldText="return subtotal")
    assert (allowed["verdict"], allowed["retryable"]) == ("allow", False)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    changed = await check(quiet, oldText="return subtotal")
    assert (changed["reason"], changed["retryable"]) == ("changed", True)
    missing = await check(quiet, oldText="no such text")
    assert (missing["reason"], missing["retryable"]) == ("missing", False)


async def test_errors(quiet: Lsp) -> None:
    both = await quiet.error(
        "fresh/checkEdit", {"session": "s", "path": "cart.py", "oldText": "x", "wholeFile": True}
    )
    assert both.code == -32602 and "exactly one" in both.message
    none = await quiet.error("fresh/checkEdit", {"session": "s", "path": "cart.py"})
    assert none.code == -32602
    outside = await quiet.error(
        "fresh/checkEdit", {"session": "s", "path": "../x.py", "wholeFile": True}
    )
    assert outside.code == -32010
    missing = await quiet.error(
        "fresh/checkEdit", {"session": "s", "path": "gone.py", "oldText": "x"}
    )
    assert missing.code == -32011
    typed = await quiet.error(
        "fresh/checkEdit", {"session": "s", "path": "cart.py", "firstLine": "9"}
    )
    assert typed.code == -32602 and "firstLine" in typed.message


# -- fresh/gate --------------------------------------------------------------------------------


async def test_gate_after_a_change(quiet: Lsp, ws: Path) -> None:
    await quiet.observe(path="cart.py", viewId="total", firstLine=8, lastLine=10)
    await quiet.observe(path="util.py", viewId="util")
    assert await gate(quiet) == {"proceed": True, "stale": []}
    replace_in(ws / "cart.py", "RATE = 10\n", "# moved\nRATE = 10\n")
    assert (await gate(quiet))["proceed"] is True  # moved still holds
    replace_in(ws / "cart.py", "return subtotal", "return -subtotal")
    quiet.did_write("cart.py", session="other")
    assert await gate(quiet) == {
        "proceed": False,
        "stale": [
            {
                "viewId": "total",
                "path": "cart.py",
                "status": "changed",
                "changedBy": "session:other",
            }
        ],
    }
    assert await gate(quiet, viewIds=["util"]) == {"proceed": True, "stale": []}
    unknown = await quiet.error("fresh/gate", {"session": "s", "viewIds": ["util", "nope"]})
    assert unknown.code == -32012 and "nope" in unknown.message
