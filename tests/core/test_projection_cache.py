"""The projection cache never answers with an out-of-date projection.

Each step changes one input of ``Engine.project`` (an edit, a new observe, a re-observe, a
forget, the budget, the policy, ``viewIds``, an editor buffer, a deleted file) and checks
the answer against a projection computed from scratch from the disk, with no cache; a
repeated request with nothing changed must be served from the cache and be identical.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from fresh_ls.core import projection as proj
from fresh_ls.core.sources import Source
from fresh_ls.core.staleness import assess_view
from fresh_ls.core.text import split_lines
from fresh_ls.engine import wire
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import (
    ForgetParams,
    ObserveParams,
    Policy,
    ProjectParams,
    ProjectResult,
    unstructure,
)

CART = (Path(__file__).resolve().parents[2] / "fixtures" / "code" / "cart.py").read_text()
UTIL = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\nLIMIT = 3\n"


def from_scratch(
    engine: Engine,
    session: str,
    budget: int = proj.DEFAULT_BUDGET_BYTES,
    policy: str = "stale",
    view_ids: list[str] | None = None,
    dirty: frozenset[str] = frozenset(),
) -> ProjectResult:
    """The projection as the rule gives it, from the bytes on disk, nothing reused."""
    views = engine._session_views(session, view_ids)
    sources: dict[str, Source] = {}
    assessments = []
    for v in views:
        path = engine.root / v.path
        if path.exists():
            source = Source.from_text(v.path, path.read_bytes().decode("utf-8"))
            sources[v.path] = source
            assessments.append(assess_view(v, source))
        else:
            assessments.append(assess_view(v, None, "missing"))
    return body(wire.project_result("-", proj.plan(assessments, sources, budget, policy, dirty)))


def body(result: ProjectResult) -> ProjectResult:
    """The result without its plan id (each answer has its own)."""
    return attrs.evolve(result, plan_id="")


def write(path: Path, text: str) -> None:
    """Write, keeping the size and dating the file a few seconds back: only the content
    (seen through the racy-stat rule or a changed mtime) tells the engine it changed."""
    path.write_text(text, "utf-8")
    t = time.time() - 5
    os.utime(path, (t, t))


async def test_no_input_change_is_served_from_the_cache_and_every_change_replans(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    write(root / "cart.py", CART)
    write(root / "util.py", UTIL)
    engine = await Engine.open(root, tmp_path / "state")
    cache = engine.projections
    try:
        await engine.observe(ObserveParams(session="s", path="cart.py", view_id="whole"))
        await engine.observe(
            ObserveParams(session="s", path="cart.py", view_id="line9", first_line=9, last_line=9)
        )
        await engine.observe(
            ObserveParams(session="s", path="util.py", view_id="add", first_line=1, last_line=2)
        )
        await engine.observe(
            ObserveParams(session="s", path="util.py", view_id="limit", first_line=8, last_line=8)
        )
        await engine.observe(
            ObserveParams(session="other", path="util.py", view_id="o1", first_line=5, last_line=6)
        )

        state: dict[str, Any] = {"budget": proj.DEFAULT_BUDGET_BYTES, "policy": "all"}

        async def asked(engine: Engine, state: dict[str, Any]) -> ProjectResult:
            params = ProjectParams(
                session="s",
                budget_bytes=state["budget"],
                policy=Policy(state["policy"]),
                view_ids=state.get("ids"),
            )
            return wire.read_project(await engine.project(params))

        async def check(expect_hit: bool, dirty: frozenset[str] = frozenset()) -> ProjectResult:
            hits = cache.hits
            got = await asked(engine, state)
            assert (cache.hits == hits + 1) is expect_hit
            want = from_scratch(
                engine, "s", state["budget"], state["policy"], state.get("ids"), dirty
            )
            assert body(got) == want
            for e in got.entries:
                disk = split_lines((root / e.path).read_bytes().decode("utf-8"))
                assert e.text == "".join(disk[e.first_line - 1 : e.last_line])
            # the same request again, nothing changed: the cache, the same answer
            again = await asked(engine, state)
            assert body(again) == body(got) and again.plan_id != got.plan_id
            assert cache.hits == hits + (2 if expect_hit else 1)
            return got

        first = await check(expect_hit=False)
        assert len(first.markers) == 4

        # an answer changed by its caller does not change the next one
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            first.entries[0].text = "tampered"  # type: ignore[misc]
        assert isinstance(first.entries[0].view_ids, tuple)
        assert isinstance(first.markers, tuple)
        # ... nor does a caller's change to its JSON form
        as_json = unstructure(first)
        as_json["entries"][0]["text"] = "tampered"
        as_json["entries"][0]["viewIds"].append("tampered")
        as_json["markers"].clear()
        await check(expect_hit=True)

        # an edit inside a view (same size: only the content differs)
        write(root / "cart.py", CART.replace("* RATE", "+ RATE"))
        await check(expect_hit=False)
        # an edit outside every view of a file that is still projected
        write(root / "util.py", UTIL.replace("LIMIT = 3", "LIMIT = 4"))
        await check(expect_hit=False)
        # a new observe, a re-observe of the same view id, a forget
        await engine.observe(
            ObserveParams(session="s", path="util.py", view_id="sub", first_line=5, last_line=6)
        )
        await check(expect_hit=False)
        await engine.observe(
            ObserveParams(session="s", path="cart.py", view_id="line9", first_line=8, last_line=10)
        )
        await check(expect_hit=False)
        await engine.forget(ForgetParams(session="s", view_ids=["add"]))
        await check(expect_hit=False)
        # another session's observe and forget change nothing of this one
        await engine.observe(
            ObserveParams(session="other", path="cart.py", view_id="o2", first_line=1, last_line=1)
        )
        await engine.forget(ForgetParams(session="other", view_ids=["o1"]))
        await check(expect_hit=True)
        # budget, policy, viewIds
        state["budget"] = 300
        await check(expect_hit=False)
        state["policy"] = "stale"
        await check(expect_hit=False)
        state["ids"] = ["whole", "sub"]
        await check(expect_hit=False)
        state["ids"] = ["sub", "whole"]
        await check(expect_hit=False)
        state.pop("ids")
        state["budget"], state["policy"] = proj.DEFAULT_BUDGET_BYTES, "all"
        await check(expect_hit=True)  # the projection of these inputs is still kept
        # an editor buffer that differs from the disk, then closed again
        engine.editor_update("conn-1", "util.py", UTIL + "# typing\n")
        await check(expect_hit=False, dirty=frozenset({"util.py"}))
        engine.editor_closed("conn-1", "util.py")
        await check(expect_hit=False)
        # a file deleted, then written back
        (root / "util.py").unlink()
        gone = await check(expect_hit=False)
        assert any(o.reason == "deleted" for o in gone.omitted)
        write(root / "util.py", UTIL)
        await check(expect_hit=False)
    finally:
        await engine.close()


async def test_an_unchanged_file_keeps_its_texts_across_an_edit_of_another(
    tmp_path: Path,
) -> None:
    """After an edit, only the edited file's slices are cut again."""
    root = tmp_path / "repo"
    root.mkdir()
    write(root / "cart.py", CART)
    write(root / "util.py", UTIL)
    engine = await Engine.open(root, tmp_path / "state")
    try:
        await engine.observe(ObserveParams(session="s", path="cart.py", view_id="whole"))
        await engine.observe(ObserveParams(session="s", path="util.py", view_id="all"))
        before = {
            e.path: e
            for e in wire.read_project(
                await engine.project(ProjectParams(session="s", policy=Policy.ALL))
            ).entries
        }
        slices = engine.projections.slices
        kept = slices.memo(engine.sources.get("cart.py"), 1, len(split_lines(CART)))
        write(root / "util.py", UTIL.replace("LIMIT = 3", "LIMIT = 9"))
        after = {
            e.path: e
            for e in wire.read_project(
                await engine.project(ProjectParams(session="s", policy=Policy.ALL))
            ).entries
        }
        assert after["cart.py"] == before["cart.py"]
        assert after["util.py"].text == UTIL.replace("LIMIT = 3", "LIMIT = 9")
        again = slices.memo(engine.sources.get("cart.py"), 1, len(split_lines(CART)))
        assert again is kept
    finally:
        await engine.close()
