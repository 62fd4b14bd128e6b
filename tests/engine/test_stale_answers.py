"""``fresh/stale`` keeps each view's entry while what it was made of holds
(``engine.session.StaleAnswer``), and the server sends it as ``Engine.stale_json``: the very
text of ``json.dumps`` of the typed answer, whichever entries were kept or made again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from fresh_ls.engine.attribution import CLAIM_WINDOW_S
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import ForgetParams, ObserveParams, ObserveRange, StaleParams, unstructure

from ._support import MOD, FakeClock, edit, observe

OTHER = "def three():\n    return 3\n\n\ndef four():\n    return 4\n"


async def _views(engine: Engine, root: Path) -> None:
    """Views of every kind over two files: ranges, a whole file, a sparse view, a view of
    text that is no longer there."""
    (root / "m.py").write_text(MOD)
    (root / "n.py").write_text(OTHER)
    (root / "gone.py").write_text(OTHER)
    await observe(engine, "s", "m.py", "one", 1, 2)
    await observe(engine, "s", "m.py", "two", 5, 6)
    await observe(engine, "s", "m.py", "whole")
    await observe(engine, "s", "n.py", "three", 1, 2)
    await observe(engine, "s", "gone.py", "gone", 1, 2)
    await engine.observe(
        ObserveParams(
            session="s",
            path="n.py",
            view_id="grep",
            ranges=[
                ObserveRange(first_line=1, last_line=1),
                ObserveRange(first_line=5, last_line=5),
            ],
        )
    )


def _same_text(engine: Engine, p: StaleParams) -> dict[str, dict[str, object]]:
    """``stale_json`` against ``json.dumps`` of ``stale``, twice each way round (kept
    entries, and entries made by the other); the answer's views by id."""
    for _ in range(2):
        sent = engine.stale_json(p)
        assert sent == json.dumps(unstructure(engine.stale(p)))
        assert engine.stale_json(p) == sent
    return {v["viewId"]: v for v in json.loads(sent)["views"]}


async def test_the_sent_text_is_json_dumps_of_the_answer_at_every_step(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _views(engine, root)
    every, some = StaleParams(session="s"), StaleParams(session="s", view_ids=["grep", "one"])
    assert {v["status"] for v in _same_text(engine, every).values()} == {"fresh"}
    clock.advance(1)
    edit(root / "m.py", "return 1", "return 10")  # an unreported write: changed, outside
    os.remove(root / "gone.py")
    got = _same_text(engine, every)
    assert (got["one"]["status"], got["one"]["units"][0]["changedBy"]) == ("changed", "outside")
    assert got["one"]["units"][0]["diff"]
    assert got["gone"]["status"] == "deleted"
    assert list(_same_text(engine, some)) == ["grep", "one"]
    engine.editor_update("conn-1", "n.py", OTHER.replace("return 3", "return 30"))
    assert _same_text(engine, every)["three"]["editorDirty"] is True
    await observe(engine, "s", "m.py", "one", 1, 2)  # read again: fresh once more
    assert _same_text(engine, every)["one"]["status"] == "fresh"
    await engine.forget(ForgetParams(session="s", view_ids=["two"]))
    assert "two" not in _same_text(engine, every)


async def test_an_entry_is_kept_until_its_file_changes(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    await _views(engine, root)
    p = StaleParams(session="s")
    first = {v.view_id: v for v in engine.stale(p).views}
    again = {v.view_id: v for v in engine.stale(p).views}
    assert all(again[k] is first[k] for k in first)
    clock.advance(1)
    edit(root / "n.py", "return 3", "return 30")
    after = {v.view_id: v for v in engine.stale(p).views}
    assert {k for k in first if after[k] is not first[k]} == {"three", "grep"}
    assert after["three"].status == "changed"


async def test_a_claim_alone_makes_the_entry_again(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    """A timely ``didWrite`` moves who changed a unit without any change of content: the
    kept entry (same assessment) must not be sent again."""
    await _views(engine, root)
    p = StaleParams(session="s", view_ids=["one"])
    edit(root / "m.py", "return 1", "return 10")
    engine.sync(["m.py"])  # the watcher saw it first: nobody has claimed it
    assert _same_text(engine, p)["one"]["units"][0]["changedBy"] == "outside"
    clock.advance(CLAIM_WINDOW_S - 1)
    engine.did_write("agent-2", "m.py")
    assert _same_text(engine, p)["one"]["units"][0]["changedBy"] == "session:agent-2"


async def test_an_editor_buffer_alone_makes_the_entry_again(engine: Engine, root: Path) -> None:
    await _views(engine, root)
    p = StaleParams(session="s", view_ids=["three"])
    assert _same_text(engine, p)["three"]["editorDirty"] is False
    engine.editor_update("conn-1", "n.py", OTHER + "# typed\n")
    assert _same_text(engine, p)["three"]["editorDirty"] is True
    engine.editor_closed("conn-1", "n.py")
    assert _same_text(engine, p)["three"]["editorDirty"] is False


async def test_forgetting_a_view_drops_its_entry(engine: Engine, root: Path) -> None:
    await _views(engine, root)
    engine.stale(StaleParams(session="s"))
    kept = engine.sessions["s"].stale
    assert set(kept) == {"one", "two", "whole", "three", "gone", "grep"}
    await engine.forget(ForgetParams(session="s", view_ids=["two", "grep"]))
    assert set(kept) == {"one", "whole", "three", "gone"}
    await observe(engine, "s", "m.py", "one", 1, 2)  # a view replaced: its entry goes
    assert "one" not in kept


async def test_a_second_edit_by_the_same_hand_makes_the_entry_again(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    """Who changed the unit and the editor's buffers are as before; only the assessment
    is new (another diff): the kept entry must not be sent again."""
    await _views(engine, root)
    p = StaleParams(session="s", view_ids=["one"])
    edit(root / "m.py", "return 1", "return 10")
    (unit,) = _same_text(engine, p)["one"]["units"]
    assert (unit["changedBy"], "+    return 10\n" in unit["diff"]) == ("outside", True)
    clock.advance(1)
    edit(root / "m.py", "return 10", "return 100")
    (unit,) = _same_text(engine, p)["one"]["units"]
    assert (unit["changedBy"], "+    return 100\n" in unit["diff"]) == ("outside", True)
