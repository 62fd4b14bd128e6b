"""The refresh ledger of ``placement: anchored``, over a real Engine and its SQLite store.

A refresh is served byte-identical while its code is current; an entry whose code changed
is retired in place, pointing to its successor, which goes in a new refresh after the newest
tool result; a view's marker stays as first made; and a restarted engine builds the same
bytes from its store.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fresh_ls.core.text import split_lines
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import ForgetParams, StaleParams, unstructure

from ._support import FakeClock, edit, observe, project

#: Three functions, each two lines, two blank lines apart.
THREE = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"


async def _project(engine: Engine, results: list[str]) -> dict[str, Any]:
    got = await project(engine, "s", results=results)
    out: dict[str, Any] = unstructure(got)
    return out


def _refreshes(result: dict[str, Any]) -> dict[str, str]:
    return {r["refreshId"]: r["text"] for r in result["refreshes"]}


async def test_a_refresh_stays_then_retires_with_a_pointer(
    engine: Engine, root: Path, tmp_path: Path, clock: FakeClock
) -> None:
    (root / "m.py").write_text(THREE)
    await observe(engine, "s", "m.py", "call_1")
    first = await _project(engine, ["call_1"])
    assert first["refreshes"] == [] and first["markers"] == []  # all fresh: nothing to do

    edit(root / "m.py", "return 2", "return 20")
    second = await _project(engine, ["call_1", "call_2"])
    assert second["placement"] == "anchored" and second["rendered"] == ""
    (marker,) = second["markers"]
    assert marker["viewId"] == "call_1" and "[R1.1]" in marker["text"]
    (refresh,) = second["refreshes"]
    assert refresh["after"] == "call_2" and "return 20" in refresh["text"]

    # the conversation goes on, nothing changes: the same bytes, nothing new
    third = await _project(engine, ["call_1", "call_2", "call_3"])
    assert third["refreshes"] == second["refreshes"] and third["markers"] == second["markers"]
    assert third["refreshBytes"] == 0 < second["refreshBytes"]  # nothing new to send
    assert third["usedBytes"] == 0  # the size of rendered, empty under anchored

    # the same function changes again: its entry is retired where it stood, the new code
    # goes after the newest result, the view's marker does not move
    edit(root / "m.py", "return 20", "return 200")
    fourth = await _project(engine, ["call_1", "call_2", "call_3", "call_4"])
    assert fourth["markers"] == second["markers"]
    texts = _refreshes(fourth)
    assert "current code under [R2.1]" in texts["R1"] and "return 20\n" not in texts["R1"]
    assert "return 200" in texts["R2"]
    assert [r["after"] for r in fourth["refreshes"]] == ["call_2", "call_4"]

    # a restart builds the same bytes from the store
    await engine.close()
    again = await Engine.open(root, tmp_path / "state", clock=clock)
    try:
        after = await _project(again, ["call_1", "call_2", "call_3", "call_4"])
        assert after["refreshes"] == fourth["refreshes"]
        assert after["markers"] == fourth["markers"]
    finally:
        await again.close()
    engine.store = again.store  # the fixture closes the engine's store once more


async def test_a_refresh_whose_tool_result_is_gone_is_sent_again(
    engine: Engine, root: Path
) -> None:
    (root / "m.py").write_text(THREE)
    await observe(engine, "s", "m.py", "call_1")
    edit(root / "m.py", "return 2", "return 20")
    first = await _project(engine, ["call_1", "call_2"])
    assert [r["after"] for r in first["refreshes"]] == ["call_2"]
    # the harness compacted call_2 away: the code goes again, after the newest result
    second = await _project(engine, ["call_1", "call_3"])
    assert [r["after"] for r in second["refreshes"]] == ["call_3"]
    assert "return 20" in second["refreshes"][0]["text"]
    assert "[R2." in second["markers"][0]["text"]


async def test_forget_drops_the_ledger(engine: Engine, root: Path) -> None:
    (root / "m.py").write_text(THREE)
    await observe(engine, "s", "m.py", "call_1")
    edit(root / "m.py", "return 2", "return 20")
    await _project(engine, ["call_1", "call_2"])
    await engine.forget(ForgetParams(session="s"))
    assert "s" not in engine.sessions  # its ledger went with it
    assert await engine.store.load_ledgers() == {}


# -- properties ------------------------------------------------------------------------------

#: (function index, new return value) edits, or None: a request with no edit before it
steps = st.lists(st.one_of(st.none(), st.tuples(st.integers(0, 2), st.integers(0, 9))), max_size=8)


def _check_current(root: Path, result: dict[str, Any]) -> None:
    lines = split_lines((root / "m.py").read_text())
    for e in result["entries"]:
        assert "".join(lines[e["firstLine"] - 1 : e["lastLine"]]) == e["text"]
        assert e["header"] + "\n" + e["text"] in "".join(_refreshes(result).values())


async def _play(plan: list[tuple[int, int] | None], base: Path) -> None:
    root, state = base / "repo", base / "state"
    root.mkdir()
    (root / "m.py").write_text(THREE)
    clock = FakeClock()
    engine = await Engine.open(root, state, clock=clock)
    try:
        await observe(engine, "s", "m.py", "call_0")
        results = ["call_0"]
        previous: dict[str, Any] | None = None
        for n, step in enumerate(plan, start=1):
            changed = False
            if step is not None:
                k, value = step
                text = (root / "m.py").read_text()
                old = split_lines(text)[4 * k + 1]
                new = f"    return {value}\n"
                if old != new:
                    (root / "m.py").write_text(text.replace(old, new, 1))
                    changed = True
            results.append(f"call_{n}")
            result = await _project(engine, results)
            _check_current(root, result)
            if previous is not None:
                before, now = _refreshes(previous), _refreshes(result)
                current = {e["label"] for e in result["entries"]}
                for rid, text in before.items():
                    labels_before = {
                        e["label"] for e in previous["entries"] if e["label"].startswith(rid + ".")
                    }
                    if not changed or labels_before <= current:
                        # nothing it holds changed: byte for byte the same
                        assert now[rid] == text
                    else:
                        # a changed entry is a one-line pointer now, never its old code
                        assert now[rid] != text
                for m in previous["markers"]:
                    assert m in result["markers"]  # a marker never moves
            previous = result
        await engine.close()
        engine = await Engine.open(root, state, clock=clock)
        if previous is not None:
            rebuilt = await _project(engine, results)
            assert rebuilt["refreshes"] == previous["refreshes"]
            assert rebuilt["markers"] == previous["markers"]
    finally:
        await engine.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=steps)
def test_ledger_properties(plan: list[tuple[int, int] | None]) -> None:
    with tempfile.TemporaryDirectory() as base:
        asyncio.run(_play(plan, Path(base)))


async def test_code_another_result_shows_current_is_pointed_to_not_sent(
    engine: Engine, root: Path
) -> None:
    """A replaced view's unchanged function, which a later read still shows current, is
    not sent again: the marker names that read. When that read goes stale in turn, its own
    marker leads on, and the first marker does not move."""
    (root / "m.py").write_text(THREE)
    await observe(engine, "s", "m.py", "call_2", 1, 4)  # def a and its blank lines
    await observe(engine, "s", "m.py", "call_1", 1, 9)  # all but the last line
    edit(root / "m.py", "return 2", "return 20")
    first = await _project(engine, ["call_2", "call_1", "call_3"])
    (marker,) = first["markers"]
    assert marker["viewId"] == "call_1"
    assert "in the result of call_2" in marker["text"]
    (refresh,) = first["refreshes"]
    assert "return 20" in refresh["text"] and "return 1\n" not in refresh["text"]
    edit(root / "m.py", "return 1", "return 10")
    second = await _project(engine, ["call_2", "call_1", "call_3", "call_4"])
    texts = {m["viewId"]: m["text"] for m in second["markers"]}
    assert texts["call_1"] == marker["text"]
    assert "call_2" in texts and "return 10" in second["refreshes"][-1]["text"]


async def test_a_first_change_is_patched_in_place_then_moved(engine: Engine, root: Path) -> None:
    """A view whose tool result the harness gave, and with little behind it, is printed
    again in place from the current lines (the way the tool would print it now); a second
    change moves it: a marker, and its code in a refresh near the end."""
    from fresh_ls.protocol import ObserveParams

    (root / "m.py").write_text(THREE)
    lines = THREE.splitlines(True)[:6]
    printed = "".join(f"{i:6d}\t{line}" for i, line in enumerate(lines, 1))
    await engine.observe(
        ObserveParams(session="s", path="m.py", view_id="call_1", first_line=1, last_line=6,
                      result="Here is m.py:\n" + printed)
    )  # fmt: skip
    edit(root / "m.py", "return 2", "return 20")
    got = unstructure(await project(engine, "s", results=["call_1", "call_2"], bytes_after=[10, 0]))
    (marker,) = got["markers"]
    assert marker["text"].startswith("Here is m.py:\n     1\tdef a():\n")
    assert "     6\t    return 20\n" in marker["text"] and got["refreshes"] == []
    assert (
        unstructure(engine.stale(StaleParams(session="s")))["views"][0]["status"] == "fresh"
    )  # what it shows now
    again = unstructure(
        await project(engine, "s", results=["call_1", "call_2", "call_3"], bytes_after=[20, 10, 0])
    )
    assert again["markers"] == got["markers"]  # the patch stands while it holds
    edit(root / "m.py", "return 20", "return 200")
    moved = unstructure(
        await project(engine, "s", results=["call_1", "call_2", "call_3", "call_4"],
                                      bytes_after=[120, 80, 40, 0])
    )  # fmt: skip
    (marker,) = moved["markers"]
    assert marker["text"].startswith("[fresh-ls] call_1 showed m.py lines 1-6")
    assert "return 200" in moved["refreshes"][-1]["text"]


async def test_no_patch_when_much_stands_behind(engine: Engine, root: Path) -> None:
    from fresh_ls.protocol import ObserveParams

    (root / "m.py").write_text(THREE)
    await engine.observe(
        ObserveParams(session="s", path="m.py", view_id="call_1", first_line=1, last_line=6,
                      result=THREE)
    )  # fmt: skip
    edit(root / "m.py", "return 2", "return 20")
    got = unstructure(
        await project(engine, "s", results=["call_1", "call_2"], bytes_after=[100_000, 0])
    )
    assert got["markers"][0]["text"].startswith("[fresh-ls] call_1")
    assert "return 20" in got["refreshes"][0]["text"]
