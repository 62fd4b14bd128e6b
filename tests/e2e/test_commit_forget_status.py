"""fresh/commit, fresh/forget and fresh/status over a real server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import fresh_ls

from ._support import Lsp, replace_in

pytestmark = pytest.mark.timeout(60)


async def _changed_view(conn: Lsp, ws: Path) -> None:
    await conn.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")


# -- commit ---------------------------------------------------------------------------------


async def test_commit_right_after_project_is_ok(fresh: Lsp, ws: Path) -> None:
    await _changed_view(fresh, ws)
    plan = await fresh.project()
    assert plan["entries"]
    assert await fresh.commit(plan["planId"]) == {"ok": True, "changed": []}


async def test_commit_after_a_write_to_a_selected_entry_is_not_ok(fresh: Lsp, ws: Path) -> None:
    await _changed_view(fresh, ws)
    await fresh.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    plan = await fresh.project(policy="all")
    replace_in(ws / "cart.py", "return subtotal", "return subtotal + 1")
    assert await fresh.commit(plan["planId"]) == {"ok": False, "changed": ["cart.py"]}


async def test_commit_after_a_deletion_is_not_ok(fresh: Lsp, ws: Path) -> None:
    await _changed_view(fresh, ws)
    plan = await fresh.project()
    (ws / "cart.py").unlink()
    assert await fresh.commit(plan["planId"]) == {"ok": False, "changed": ["cart.py"]}


async def test_commit_ignores_writes_that_leave_the_entries_intact(fresh: Lsp, ws: Path) -> None:
    await _changed_view(fresh, ws)
    plan = await fresh.project()
    replace_in(ws / "cart.py", "    return 1\n", "    return 2\n")  # after the entry's lines
    assert await fresh.commit(plan["planId"]) == {"ok": True, "changed": []}


async def test_commit_fails_when_a_view_left_in_place_changed(fresh: Lsp, ws: Path) -> None:
    """Contract v1.1: under policy stale a fresh view stays in the request as the tool
    returned it; if its lines change before the send, the commit must fail."""
    await fresh.observe(path="cart.py", viewId="kept", firstLine=9, lastLine=9)
    plan = await fresh.project()
    assert plan["markers"] == [] and plan["entries"] == []
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    assert await fresh.commit(plan["planId"]) == {"ok": False, "changed": ["cart.py"]}


async def test_commit_fails_when_a_view_left_in_place_moved(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="kept", firstLine=9, lastLine=9)
    plan = await fresh.project()
    text = (ws / "cart.py").read_text()
    (ws / "cart.py").write_text("# a formatter's new first line\n" + text)
    assert await fresh.commit(plan["planId"]) == {"ok": False, "changed": ["cart.py"]}


async def test_commit_passes_when_a_kept_view_s_file_changed_elsewhere(
    fresh: Lsp, ws: Path
) -> None:
    """Range overlap, not whole-file invalidation: an edit below the view passes."""
    await fresh.observe(path="cart.py", viewId="kept", firstLine=9, lastLine=9)
    plan = await fresh.project()
    replace_in(ws / "cart.py", "    return 1\n", "    return 2\n")
    assert await fresh.commit(plan["planId"]) == {"ok": True, "changed": []}


async def test_a_kept_view_forgotten_after_the_plan_does_not_fail_it(
    fresh: Lsp, ws: Path
) -> None:
    await fresh.observe(path="cart.py", viewId="kept", firstLine=9, lastLine=9)
    plan = await fresh.project()
    await fresh.forget(viewIds=["kept"])
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    assert await fresh.commit(plan["planId"]) == {"ok": True, "changed": []}


async def test_after_a_failed_commit_the_next_plan_replaces_the_kept_view(
    fresh: Lsp, ws: Path
) -> None:
    await fresh.observe(path="cart.py", viewId="kept", firstLine=9, lastLine=9)
    plan = await fresh.project()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    assert (await fresh.commit(plan["planId"]))["ok"] is False
    again = await fresh.project()
    assert [m["viewId"] for m in again["markers"]] == ["kept"]
    assert "quantity * RATE * 2" in again["rendered"]
    assert await fresh.commit(again["planId"]) == {"ok": True, "changed": []}


async def test_an_empty_plan_commits_ok(fresh: Lsp) -> None:
    plan = await fresh.project("nobody")
    assert await fresh.commit(plan["planId"]) == {"ok": True, "changed": []}


async def test_commit_of_an_unknown_plan_is_32012(fresh: Lsp) -> None:
    err = await fresh.error("fresh/commit", {"planId": "p-nope"})
    assert err.code == -32012
    assert "planId" in err.message and "p-nope" in err.message


async def test_the_sixteen_latest_plans_of_a_session_are_kept(fresh: Lsp, ws: Path) -> None:
    await _changed_view(fresh, ws)
    plans = [(await fresh.project())["planId"] for _ in range(16)]
    for plan_id in plans:
        assert (await fresh.commit(plan_id))["ok"] is True


# -- forget ---------------------------------------------------------------------------------


async def test_forget_counts_what_it_dropped_and_ignores_unknown_ids(fresh: Lsp) -> None:
    for vid in ("a", "b", "c"):
        await fresh.observe(path="cart.py", viewId=vid, firstLine=9, lastLine=9)
    assert await fresh.forget(viewIds=["a", "zzz", "c"]) == {"forgotten": 2}
    assert [v["viewId"] for v in (await fresh.stale())["views"]] == ["b"]
    assert await fresh.forget(viewIds=["a", "zzz"]) == {"forgotten": 0}
    assert await fresh.forget(viewIds=[]) == {"forgotten": 0}


async def test_forget_without_view_ids_drops_the_whole_session(fresh: Lsp) -> None:
    for vid in ("a", "b"):
        await fresh.observe(path="cart.py", viewId=vid, firstLine=9, lastLine=9)
    await fresh.observe(session="other", path="cart.py", viewId="a", firstLine=1, lastLine=1)
    assert await fresh.forget() == {"forgotten": 2}
    assert await fresh.stale() == {"views": []}
    assert [s["session"] for s in (await fresh.status())["sessions"]] == ["other"]
    assert len((await fresh.stale("other"))["views"]) == 1
    assert await fresh.forget() == {"forgotten": 0}
    assert await fresh.forget("never-used") == {"forgotten": 0}


async def test_a_forgotten_view_is_unknown_afterwards(fresh: Lsp) -> None:
    await fresh.observe(path="cart.py", viewId="a", firstLine=9, lastLine=9)
    await fresh.forget(viewIds=["a"])
    err = await fresh.error("fresh/stale", {"session": "s", "viewIds": ["a"]})
    assert err.code == -32012


async def test_forgotten_views_leave_the_projection(fresh: Lsp, ws: Path) -> None:
    await _changed_view(fresh, ws)
    await fresh.forget(viewIds=["t"])
    projection = await fresh.project()
    assert (projection["markers"], projection["rendered"]) == ([], "")


# -- status ---------------------------------------------------------------------------------


async def test_status_shape(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(session="b-agent", path="cart.py", viewId="x", firstLine=1, lastLine=1)
    await _changed_view(fresh, ws)
    await fresh.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    status = await fresh.status()
    assert status["version"] == fresh_ls.__version__
    assert status["root"] == str(ws)
    assert status["stateDir"] == str(ws / ".fresh-ls")
    assert status["watching"] is True
    assert status["sessions"] == [
        {"session": "b-agent", "views": 1, "stale": 0},
        {"session": "s", "views": 2, "stale": 1},
    ]
    assert status["sources"] == 2  # cart.py and util.py have been read


async def test_status_of_a_fresh_server(quiet: Lsp, ws: Path) -> None:
    status = await quiet.status()
    assert {k: status[k] for k in ("root", "sessions", "sources", "watching")} == {
        "root": str(ws),
        "sessions": [],
        "sources": 0,
        "watching": False,
    }


async def test_status_names_a_custom_state_dir(ws: Path, tmp_path: Path, start) -> None:
    state = tmp_path / "state"
    conn = await start(ws, "--state-dir", str(state))
    await conn.observe(path="cart.py", viewId="a", firstLine=1, lastLine=1)
    assert (await conn.status())["stateDir"] == str(state)
    assert any(name.endswith(".sqlite3") for name in os.listdir(state))
    assert not (ws / ".fresh-ls").exists()
