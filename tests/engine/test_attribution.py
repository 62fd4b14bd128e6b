"""``changedBy``: who made the last change the engine saw to a unit's lines.

The engine reads the disk and tells ``fresh_ls.engine.attribution`` what changed and who claimed a
write; these tests drive the engine as the server does (``did_write``, editor buffers and
saves, ``sync`` for the watcher) and read the answer of ``stale``.
"""

from __future__ import annotations

from pathlib import Path

from fresh_ls.engine.attribution import CLAIM_WINDOW_S
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import StaleParams, unstructure

from ._support import MOD, FakeClock, changed_by, edit, observe, unit


async def _observed(engine: Engine, root: Path, session: str = "s") -> None:
    (root / "m.py").write_text(MOD)
    await observe(engine, session, "m.py", "one", 1, 2)
    await observe(engine, session, "m.py", "two", 5, 6)


async def test_a_write_then_its_did_write_is_that_sessions(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _observed(engine, root)
    await observe(engine, "agent-2", "m.py", "theirs", 1, 2)
    clock.advance(1)
    edit(root / "m.py", "return 1", "return 10")
    engine.did_write("agent-2", "m.py")
    assert changed_by(engine, "s", "one") == "session:agent-2"
    assert changed_by(engine, "agent-2", "theirs") == "self"


async def test_a_did_write_before_the_disk_changes_claims_the_next_change(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _observed(engine, root)
    engine.did_write("agent-2", "m.py")  # nothing changed yet: the claim waits
    clock.advance(CLAIM_WINDOW_S - 1)
    edit(root / "m.py", "return 1", "return 10")
    assert changed_by(engine, "s", "one") == "session:agent-2"


async def test_a_claim_expires_by_the_clock(engine: Engine, root: Path, clock: FakeClock) -> None:
    await _observed(engine, root)
    engine.did_write("agent-2", "m.py")
    clock.advance(CLAIM_WINDOW_S + 1)
    edit(root / "m.py", "return 1", "return 10")
    assert changed_by(engine, "s", "one") == "outside"


async def test_a_claim_explains_one_change_only(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _observed(engine, root)
    engine.did_write("agent-2", "m.py")
    edit(root / "m.py", "return 1", "return 10")
    assert changed_by(engine, "s", "one") == "session:agent-2"
    clock.advance(1)
    edit(root / "m.py", "return 10", "return 11")
    assert changed_by(engine, "s", "one") == "outside"


async def test_a_write_the_watcher_saw_first_is_taken_back_by_a_timely_claim(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _observed(engine, root)
    edit(root / "m.py", "return 1", "return 10")
    engine.sync(["m.py"])  # the watcher: nobody has claimed it yet
    assert changed_by(engine, "s", "one") == "outside"
    clock.advance(CLAIM_WINDOW_S - 1)
    engine.did_write("agent-2", "m.py")
    assert changed_by(engine, "s", "one") == "session:agent-2"


async def test_a_late_claim_leaves_the_watchers_change_outside_and_claims_the_next(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _observed(engine, root)
    edit(root / "m.py", "return 1", "return 10")
    engine.sync(["m.py"])
    clock.advance(CLAIM_WINDOW_S + 1)
    engine.did_write("agent-2", "m.py")
    assert changed_by(engine, "s", "one") == "outside"
    edit(root / "m.py", "return 10", "return 11")
    assert changed_by(engine, "s", "one") == "session:agent-2"


async def test_an_unreported_write_is_outside(engine: Engine, root: Path) -> None:
    await _observed(engine, root)
    edit(root / "m.py", "return 2", "return 20")
    assert changed_by(engine, "s", "two") == "outside"
    one = unit(engine, "s", "one")
    assert (one["status"], one["changedBy"]) == ("fresh", None)


async def test_a_did_write_without_a_session_claims_nothing(engine: Engine, root: Path) -> None:
    await _observed(engine, root)
    edit(root / "m.py", "return 1", "return 10")
    engine.did_write(None, "m.py")
    assert changed_by(engine, "s", "one") == "outside"


async def test_an_editor_buffer_only_sets_editor_dirty_and_its_save_is_the_editors(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _observed(engine, root)
    edited = MOD.replace("return 1", "return 10")
    engine.editor_update("conn-1", "m.py", edited)
    (view,) = unstructure(engine.stale(StaleParams(session="s", view_ids=["one"])))["views"]
    assert (view["status"], view["editorDirty"]) == ("fresh", True)
    clock.advance(1)
    (root / "m.py").write_text(edited)
    engine.editor_saved("conn-1", "m.py")
    (view,) = unstructure(engine.stale(StaleParams(session="s", view_ids=["one"])))["views"]
    assert (view["status"], view["editorDirty"]) == ("changed", False)
    assert view["units"][0]["changedBy"] == "editor"
    engine.editor_closed("conn-1", "m.py")
    assert (
        unstructure(engine.stale(StaleParams(session="s", view_ids=["one"])))["views"][0][
            "editorDirty"
        ]
        is False
    )


async def test_two_sessions_each_get_the_lines_they_changed(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _observed(engine, root, "agent-1")
    edit(root / "m.py", "return 1", "return 10")
    engine.did_write("agent-1", "m.py")
    clock.advance(1)
    edit(root / "m.py", "return 2", "return 20")
    engine.did_write("agent-2", "m.py")
    assert changed_by(engine, "agent-1", "one") == "self"
    assert changed_by(engine, "agent-1", "two") == "session:agent-2"
    # The last change to the file counts only when none touched the unit's lines.
    await observe(engine, "agent-2", "m.py", "both", 1, 6)
    clock.advance(1)
    edit(root / "m.py", "return 10", "return 100")
    engine.did_write("agent-1", "m.py")
    (view,) = unstructure(engine.stale(StaleParams(session="agent-2", view_ids=["both"])))["views"]
    by = [u["changedBy"] for u in view["units"]]
    assert by[0] == "session:agent-1"


async def test_a_change_seen_before_the_view_is_not_news_to_it(engine: Engine, root: Path) -> None:
    """Order, not the clock, tells which changes came after a view: the clock stands still
    here, and a change seen by the very read that observed the view is not counted."""
    (root / "m.py").write_text(MOD)
    await observe(engine, "s", "m.py", "first", 1, 2)
    edit(root / "m.py", "return 1", "return 10")
    engine.did_write("agent-2", "m.py")
    # Observed with the text a tool returned before the write: changed at once, but no
    # change was seen since this view was observed.
    await observe(engine, "s", "m.py", "late", 1, 2, text="def one():\n    return 1\n")
    assert unit(engine, "s", "late")["status"] == "changed"
    assert unit(engine, "s", "late")["changedBy"] is None
    assert changed_by(engine, "s", "first") == "session:agent-2"


async def test_a_deleted_file_is_a_change_too(engine: Engine, root: Path) -> None:
    await _observed(engine, root)
    (root / "m.py").unlink()
    engine.did_write("agent-2", "m.py")
    found = unit(engine, "s", "one")
    assert (found["status"], found["changedBy"]) == ("deleted", "session:agent-2")


async def test_a_newer_claim_takes_the_change_its_read_shows_from_a_waiting_one(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    """agent-2 wrote the file as it was (nothing changed: its claim waits); agent-1 then
    writes it and says so. The change is agent-1's, not the waiting claim's."""
    await _observed(engine, root)
    engine.did_write("agent-2", "m.py")
    clock.advance(1)
    edit(root / "m.py", "return 1", "return 10")
    engine.did_write("agent-1", "m.py")
    assert changed_by(engine, "s", "one") == "session:agent-1"
