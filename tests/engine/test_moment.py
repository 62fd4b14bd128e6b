"""One request, one disk: within a request every file is read once (``Engine._moment``).

A file that changes after the request read it is not seen again by that request, however
often it looks at the file; the next request sees the change, once, and tells attribution
about it then.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import DidInvalidateParams, StaleParams, unstructure

from ._support import MOD, FakeClock, edit, observe, project, unit


async def test_a_file_changed_between_two_reads_of_one_request_is_seen_once(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    path = root / "m.py"
    path.write_text(MOD)
    await observe(engine, "s", "m.py", "one", 1, 2)
    heard: list[dict[str, Any]] = []

    def undo_on_first_news(payload: DidInvalidateParams) -> None:
        heard.append(unstructure(payload))
        if len(heard) == 1:
            path.write_text(MOD)  # mid-request: the edit is undone on disk

    engine.listeners.append(undo_on_first_news)
    edit(path, "return 1", "return 10")
    # One request that looks at m.py twice: the second look is the first one's read.
    engine.sync(["m.py", "m.py"])
    assert heard == [{"session": "s", "viewIds": ["one"], "path": "m.py"}]
    assert len(engine.attribution.changes("m.py")) == 1
    # The next request reads the disk again: the undo is seen, as a change of its own.
    clock.advance(1)
    assert unit(engine, "s", "one")["status"] == "fresh"
    changes = engine.attribution.changes("m.py")
    assert [(c.who, c.at) for c in changes] == [
        ("outside", clock.now - 1),
        ("outside", clock.now),
    ]
    engine.sync(["m.py"])  # the watcher's news of the undo: the view is fresh again
    assert heard == [{"session": "s", "viewIds": ["one"], "path": "m.py"}] * 2
    assert len(engine.attribution.changes("m.py")) == 2


async def test_a_did_write_reads_the_file_once_for_its_claim_and_its_sync(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    path = root / "m.py"
    path.write_text(MOD)
    await observe(engine, "s", "m.py", "one", 1, 2)
    engine.listeners.append(lambda _: path.write_text(MOD.replace("return 1", "return 11")))
    edit(path, "return 1", "return 10")
    engine.did_write("agent-2", "m.py")  # its sync tells the listener, who writes again
    assert [c.who for c in engine.attribution.changes("m.py")] == ["session:agent-2"]
    clock.advance(1)
    # The write made after the request read the file is the next request's news, and the
    # claim explained the first change only.
    found = unit(engine, "s", "one")
    assert (found["status"], found["changedBy"]) == ("changed", "outside")
    assert "return 11" in found["diff"]


async def test_a_request_reads_each_file_once_whatever_its_views(
    engine: Engine, root: Path
) -> None:
    """Every view of a file in one answer is assessed against the same read of it (the
    real ``SourceTable.get``, counted)."""
    path = root / "m.py"
    path.write_text(MOD)
    for first, last in ((1, 2), (5, 6), (1, 6)):
        await observe(engine, "s", "m.py", f"v{first}-{last}", first, last)
    reads: list[str] = []
    get = engine.sources.get

    def counted(rel: str) -> Any:
        reads.append(rel)
        return get(rel)

    engine.sources.get = counted  # type: ignore[method-assign]
    edit(path, "return 1", "return 10")
    engine.stale(StaleParams(session="s"))
    await project(engine, "s")
    assert reads == ["m.py", "m.py"]


async def test_the_engine_takes_its_time_from_its_clock(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    (root / "m.py").write_text(MOD)
    await observe(engine, "s", "m.py", "one", 1, 2)
    assert engine.views["s"]["one"].observed_at == clock.now
