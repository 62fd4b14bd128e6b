"""``fresh-ls mcp`` through the ``mcp`` SDK's own stdio client: every tool, the deny as a
tool result with the current code, and the lost update two agents would otherwise make
(with its negative control: the same race with the guard turned off loses it)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from fresh_ls.client import SyncClient
from fresh_ls.mcp.files import replace_if_unchanged
from tests.e2e._support import CART_PY, make_workspace, replace_in
from tests.mcptools._support import call, mcp_client

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def ws() -> Iterator[Path]:
    # A short root: the spawned server's Unix socket lives in its state dir.
    scratch = Path(tempfile.mkdtemp(prefix="fls-mcp-"))
    try:
        yield make_workspace(scratch / "ws")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*.fresh-ls.tmp")]


async def test_tools_and_their_descriptions(ws: Path) -> None:
    async with mcp_client(ws) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == {"read", "edit", "write", "stale", "gate"}
    assert set(tools["read"].input_schema["properties"]) == {"path", "first_line", "last_line"}
    assert set(tools["edit"].input_schema["properties"]) == {"path", "old_text", "new_text"}
    assert set(tools["write"].input_schema["properties"]) == {"path", "content"}
    assert set(tools["gate"].input_schema["properties"]) == {"view_ids"}
    for name in ("edit", "write"):
        text = tools[name].description or ""
        assert "DENIED" in text and "current" in text and "again" in text, text


async def test_read_shows_numbered_lines_and_registers_a_view(ws: Path) -> None:
    async with mcp_client(ws, "--session", "agent") as session:
        is_error, text, _ = await call(session, "read", path="cart.py", first_line=8, last_line=10)
        assert not is_error
        assert "cart.py lines 8-10 of 14 lines" in text
        assert "     9\t        subtotal = quantity * RATE\n" in text
        assert "lines 11-14 not shown" in text
        with SyncClient.attach(ws) as fresh:
            (view,) = fresh.stale("agent")["views"]
        assert (view["path"], view["observed"]["firstLine"], view["status"]) == (
            "cart.py", 8, "fresh",
        )  # fmt: skip
        assert view["viewId"] in text
        is_error, text, _ = await call(session, "read", path="../outside.py")
        assert is_error and "outside the root" in text


async def test_edit_after_a_change_elsewhere_lands_and_keeps_both(ws: Path) -> None:
    async with mcp_client(ws, "--session", "agent") as session:
        await call(session, "read", path="cart.py")
        replace_in(ws / "cart.py", "return 1", "return 100")  # helper: another function
        is_error, text, _ = await call(
            session, "edit", path="cart.py", old_text="quantity * RATE",
            new_text="quantity * RATE * 3",
        )  # fmt: skip
        assert not is_error, text
        assert "     9\t        subtotal = quantity * RATE * 3\n" in text
        disk = (ws / "cart.py").read_text()
        assert "quantity * RATE * 3" in disk and "return 100" in disk
        # Its own edit counts as seen: editing the same function again is allowed.
        is_error, text, _ = await call(
            session, "edit", path="cart.py", old_text="return subtotal",
            new_text="return subtotal + 1",
        )  # fmt: skip
        assert not is_error, text
        assert leftovers(ws) == []


async def test_edit_of_a_changed_function_is_denied_with_the_current_code(ws: Path) -> None:
    async with mcp_client(ws, "--session", "agent") as session:
        await call(session, "read", path="cart.py")
        replace_in(ws / "cart.py", "return subtotal", "return subtotal - 5")
        before = (ws / "cart.py").read_bytes()
        is_error, text, structured = await call(
            session, "edit", path="cart.py", old_text="quantity * RATE",
            new_text="quantity * RATE * 3",
        )  # fmt: skip
        assert is_error and text.startswith("DENIED")
        assert "method Cart.total (lines 8-10) changed since you read it" in text
        assert "+        return subtotal - 5\n" in text  # the diff
        assert "        return subtotal - 5\n" in text.split("The current code")[1]
        assert structured["text"] == text  # what Claude Code would show instead of the text
        assert (structured["verdict"], structured["reason"]) == ("deny", "changed")
        (unit,) = structured["units"]
        assert (unit["name"], unit["status"], unit["changedBy"]) == (
            "Cart.total", "changed", "outside",
        )  # fmt: skip
        assert "+        return subtotal - 5\n" in unit["diff"]
        assert structured["viewId"] in text  # the current code, recorded as a view
        assert (ws / "cart.py").read_bytes() == before  # the outside change survives
        # The deny counted as a read: the retry lands on the current code.
        is_error, text, _ = await call(
            session, "edit", path="cart.py", old_text="quantity * RATE",
            new_text="quantity * RATE * 3",
        )  # fmt: skip
        assert not is_error, text
        disk = (ws / "cart.py").read_text()
        assert "quantity * RATE * 3" in disk and "return subtotal - 5" in disk


async def test_edit_denies_ambiguous_missing_and_unseen(ws: Path) -> None:
    async with mcp_client(ws) as session:
        is_error, text, _ = await call(
            session, "edit", path="cart.py", old_text="return", new_text="yield"
        )
        assert is_error and "more than once" in text
        is_error, text, _ = await call(
            session, "edit", path="cart.py", old_text="nowhere", new_text="x"
        )
        assert is_error and "does not occur" in text
        is_error, text, _ = await call(
            session, "edit", path="util.py", old_text="a + b", new_text="b + a"
        )
        assert is_error and "you have not read all of it" in text
        assert "a + b" in (ws / "util.py").read_text()


async def test_write_creates_and_overwrites_under_the_guard(ws: Path) -> None:
    async with mcp_client(ws) as session:
        is_error, text, _ = await call(session, "write", path="pkg/new.py", content="X = 1\n")
        assert not is_error and text.startswith("Created pkg/new.py")
        assert (ws / "pkg/new.py").read_text() == "X = 1\n"
        # Overwriting its own file is allowed; someone else's unread file is not.
        is_error, _, _ = await call(session, "write", path="pkg/new.py", content="X = 2\n")
        assert not is_error
        is_error, text, _ = await call(session, "write", path="util.py", content="gone\n")
        assert is_error and "def add(a, b):" in text
        assert (ws / "util.py").read_text().startswith("def add")
        # The deny showed the whole file: the overwrite is allowed now.
        is_error, _, _ = await call(session, "write", path="util.py", content="merged\n")
        assert not is_error and (ws / "util.py").read_text() == "merged\n"
        assert leftovers(ws) == []


async def test_stale_and_gate(ws: Path) -> None:
    async with mcp_client(ws) as session:
        _, read, _ = await call(session, "read", path="util.py")
        view_id = read.split("[view ")[1].split("]")[0]
        _, text, _ = await call(session, "stale")
        assert text.startswith("No stale views")
        _, text, _ = await call(session, "gate")
        assert text.startswith("proceed: true")
        replace_in(ws / "util.py", "a - b", "b - a")
        _, text, _ = await call(session, "stale")
        assert f"view {view_id}: util.py lines 1-6 is changed" in text
        assert "+    return b - a" in text
        _, text, _ = await call(session, "gate", view_ids=[view_id])
        assert text.startswith("proceed: false") and view_id in text
        is_error, text, _ = await call(session, "gate", view_ids=["no-such-view"])
        assert is_error and "no-such-view" in text


async def test_one_session_per_connection(ws: Path) -> None:
    async with mcp_client(ws) as first, mcp_client(ws) as second:
        await call(first, "read", path="util.py")
        is_error, text, _ = await call(
            second, "edit", path="util.py", old_text="a + b", new_text="b + a"
        )
        assert is_error and "you have not read all of it" in text
        is_error, _, _ = await call(
            first, "edit", path="util.py", old_text="a + b", new_text="b + a"
        )
        assert not is_error


#: What each of two agents changes in ``Cart.total``, by tool: the same expression (edit),
#: or two lines of the method in a whole-file write (the update a blind overwrite loses).
RACE: dict[str, dict[str, dict[str, str]]] = {
    "edit": {
        "alice": {"old_text": "quantity * RATE", "new_text": "quantity * RATE + 1"},
        "bob": {"old_text": "quantity * RATE", "new_text": "quantity * RATE * 2"},
    },
    "write": {
        "alice": {"content": CART_PY.replace("quantity * RATE", "quantity * RATE + 1")},
        "bob": {"content": CART_PY.replace("return subtotal", "return subtotal * 2")},
    },
}
#: The unit a deny of the race names, by tool (a whole-file write is checked as one unit).
UNIT = {"edit": "method Cart.total (lines 8-10)", "write": "the whole file (lines 1-14)"}
#: The line each agent's change leaves on disk, by tool.
MARK = {
    "edit": {"alice": "quantity * RATE + 1", "bob": "quantity * RATE * 2"},
    "write": {"alice": "quantity * RATE + 1", "bob": "return subtotal * 2"},
}


@contextlib.asynccontextmanager
async def racing(
    ws: Path, tool: str, unguarded: bool = False
) -> AsyncIterator[tuple[dict[str, ClientSession], list[tuple[bool, str, Any]]]]:
    """Alice and Bob, each with their own ``fresh-ls mcp``, read ``cart.py`` and then call
    ``tool`` on ``Cart.total`` at once; yields their sessions and both results."""
    async with (
        mcp_client(ws, "--session", "alice", unguarded=unguarded) as alice,
        mcp_client(ws, "--session", "bob", unguarded=unguarded) as bob,
    ):
        await asyncio.gather(call(alice, "read", path="cart.py"), call(bob, "read", path="cart.py"))
        results = await asyncio.gather(
            call(alice, tool, path="cart.py", **RACE[tool]["alice"]),
            call(bob, tool, path="cart.py", **RACE[tool]["bob"]),
        )
        yield {"alice": alice, "bob": bob}, list(results)


def one_won(tool: str, results: list[tuple[bool, str, Any]], disk: str) -> tuple[str, str]:
    """What the guard promises of the race: one call lands whole, the other is denied
    with the winner's diff, and nothing of the winner's is lost. (winner, loser)."""
    outcomes = [is_error for is_error, _, _ in results]
    assert sorted(outcomes) == [False, True], results
    winner, loser = ("alice", "bob") if not outcomes[0] else ("bob", "alice")
    _, denied, structured = results[outcomes.index(True)]
    assert f"{UNIT[tool]} changed since you read it" in denied
    assert f"by another agent (session:{winner})" in denied
    diff = [line for line in denied.splitlines() if line.startswith("+ ")]
    assert any(MARK[tool][winner] in line for line in diff), denied
    assert (structured["reason"], structured["retryable"]) == ("changed", True)
    assert MARK[tool][winner] in disk  # the winner's change is on disk, whole
    assert MARK[tool][loser] not in disk
    return winner, loser


async def test_lost_update_two_agents_edit_the_same_function(ws: Path) -> None:
    """Both read ``Cart.total``, both edit it at once: one wins, the other is denied with
    the winner's diff, and after its retry both changes are on disk."""
    async with racing(ws, "edit") as (sessions, results):
        winner, loser = one_won("edit", results, (ws / "cart.py").read_text())
        won_text = MARK["edit"][winner]
        # The loser builds on the winner's code: nothing is lost.
        retry_new = "quantity * RATE * 2 + 1" if loser == "bob" else "quantity * RATE + 1 * 2"
        is_error, text, _ = await call(
            sessions[loser], "edit", path="cart.py", old_text=won_text, new_text=retry_new
        )
        assert not is_error, text
        assert retry_new in (ws / "cart.py").read_text()
        assert leftovers(ws) == []


async def test_lost_update_two_agents_write_the_whole_file(ws: Path) -> None:
    """Both read ``cart.py``, both overwrite it at once with their change to
    ``Cart.total``: one lands, the other is denied with the winner's diff and the current
    content, and the loser's merged write keeps both changes."""
    async with racing(ws, "write") as (sessions, results):
        _, loser = one_won("write", results, (ws / "cart.py").read_text())
        merged = (ws / "cart.py").read_text().replace(
            *(("return subtotal", "return subtotal * 2") if loser == "bob" else
              ("quantity * RATE", "quantity * RATE + 1"))
        )  # fmt: skip
        is_error, text, _ = await call(sessions[loser], "write", path="cart.py", content=merged)
        assert not is_error, text
        disk = (ws / "cart.py").read_text()
        assert MARK["write"]["alice"] in disk and MARK["write"]["bob"] in disk
        assert leftovers(ws) == []


@pytest.mark.parametrize("tool", ["edit", "write"])
async def test_without_the_guard_the_race_loses_an_update(ws: Path, tool: str) -> None:
    """The negative control of the two tests above: the same race, with real ``fresh-ls
    mcp`` processes whose ``fresh/checkEdit`` always allows (``tests/mcptools/
    unguarded_mcp.py``). Both calls land and ``one_won`` fails: the tests can see a loss.
    With ``write`` the first change is gone from disk; with ``edit`` the second landed on
    code its agent never saw."""
    async with racing(ws, tool, unguarded=True) as (_, results):
        disk = (ws / "cart.py").read_text()
    assert [is_error for is_error, _, _ in results] == [False, False], results
    with pytest.raises(AssertionError):
        one_won(tool, results, disk)
    if tool == "write":  # the other agent's update is lost
        kept = [MARK[tool][who] in disk for who in ("alice", "bob")]
        assert sorted(kept) == [False, True], disk
    else:  # the second edit applied to the first's code, unseen
        assert "quantity * RATE + 1 * 2" in disk or "quantity * RATE * 2 + 1" in disk, disk


def test_replace_if_unchanged(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_bytes(b"one\n")
    os.chmod(target, 0o640)
    assert not replace_if_unchanged(target, b"two\n", b"other\n")
    assert target.read_bytes() == b"one\n"
    assert replace_if_unchanged(target, b"two\n", b"one\n")
    assert target.read_bytes() == b"two\n" and (target.stat().st_mode & 0o777) == 0o640
    assert not replace_if_unchanged(tmp_path / "new.txt", b"x", b"was there")
    assert replace_if_unchanged(tmp_path / "new.txt", b"x", None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt", "new.txt"]
