"""The projection the server sends as pre-encoded JSON (``Engine.project``) is a typed
``ProjectResult`` unstructured by the protocol's converter, byte for byte: the same keys,
values and order, whichever policy, budget or cache state made it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fresh_ls.core.projection import Entry as CoreEntry
from fresh_ls.core.projection import Marker as CoreMarker
from fresh_ls.core.projection import Omission as CoreOmission
from fresh_ls.core.projection import Projection
from fresh_ls.engine import wire
from fresh_ls.engine.wire import Encoded
from fresh_ls.protocol import (
    Policy,
    ProjectParams,
    ProjectResult,
    parse,
    unstructure,
)
from tests.server._support import engine_with_views


@pytest.mark.parametrize("policy", ["stale", "all"])
@pytest.mark.parametrize("budget", [64, 600, 128 * 1024])
async def test_encoded_projection_is_the_project_result(
    tmp_path: Path, policy: str, budget: int
) -> None:
    engine = await engine_with_views(tmp_path, "# Ünïcode\n\nline \u2028 two\n", "n")
    try:
        asked = ProjectParams(session="s", budget_bytes=budget, policy=Policy(policy))
        for _ in range(2):  # planned, then served from the cache
            before = json.loads(await engine.project(asked))
            encoded = await engine.project(asked)
            assert isinstance(encoded, Encoded)
            decoded = json.loads(encoded)
            assert decoded["planId"] != before["planId"]
            # byte for byte what the one converter makes of the typed result
            typed = parse(ProjectResult, decoded, "result")
            assert encoded == json.dumps(unstructure(typed))
            before.pop("planId")
            decoded.pop("planId")
            assert decoded == before
            assert list(decoded) == [
                "entries",
                "omitted",
                "markers",
                "usedBytes",
                "budgetBytes",
                "rendered",
            ]
    finally:
        await engine.close()


# -- the answer assembled from kept items (``wire.ItemJson``) -------------------------------

_TEXT = st.lists(
    st.sampled_from(["a", "é", '"', "\\", "\n", "\u2028", "\x00", "}", '"entries": [], ']),
    max_size=6,
).map("".join)


@st.composite
def _projections(draw: st.DrawFn) -> Projection:
    entries = [
        CoreEntry(
            unit_id=draw(st.sampled_from(["u-1", "u-2", "u-3"])),
            path=draw(st.sampled_from(["a.py", "dir/b é.py"])),
            first_line=1,
            last_line=draw(st.integers(1, 3)),
            kind=draw(st.sampled_from(["symbol", "text", "file"])),
            text=draw(_TEXT),
            status=draw(st.sampled_from(["fresh", "moved", "changed"])),
            name=draw(st.none() | st.just("f")),
            symbol_kind=draw(st.none() | st.just("function")),
            view_ids=draw(st.lists(st.sampled_from(["v1", "v2"]), min_size=1, unique=True)),
            editor_dirty=draw(st.booleans()),
            part=draw(st.none() | st.just("own lines")),
        )
        for _ in range(draw(st.integers(0, 3)))
    ]
    omitted = [
        CoreOmission(
            unit_id=draw(st.sampled_from(["u-1", "u-4"])),
            path="a.py",
            reason=draw(st.sampled_from(["over-budget", "deleted", "unreadable"])),
            view_ids=draw(st.lists(st.sampled_from(["v1", "v2"]), max_size=2, unique=True)),
            name=draw(st.none() | st.just("g")),
            bytes=draw(st.none() | st.integers(0, 9)),
        )
        for _ in range(draw(st.integers(0, 3)))
    ]
    markers = [
        CoreMarker(draw(st.sampled_from(["v1", "v2"])), draw(_TEXT))
        for _ in range(draw(st.integers(0, 3)))
    ]
    rendered = draw(_TEXT)
    return Projection(entries, omitted, markers, rendered, len(rendered), draw(st.integers(0, 99)))


@settings(max_examples=300, deadline=None)
@given(st.lists(_projections(), min_size=1, max_size=6))
def test_an_answer_of_kept_items_is_the_json_of_the_whole_result(
    projections: list[Projection],
) -> None:
    """One ``ItemJson`` over several projections (items kept from one to the next, as
    after an edit), each byte for byte ``json.dumps`` of its typed result, which is built
    and encoded here the plain way, apart from ``ItemJson``."""
    items = wire.ItemJson()
    for p in projections:
        whole = json.dumps(unstructure(wire.project_result("", p)))
        assert items.body_json(p) == whole
        p.wire = None  # the typed body is built once per projection; build it afresh
        assert wire.project_json("plan-1", p) == Encoded(
            json.dumps(unstructure(wire.project_result("plan-1", p)))
        )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_projections(), min_size=1, max_size=4),
    st.lists(st.sets(st.sampled_from(wire.LEAVABLE)), min_size=1, max_size=4),
)
def test_an_answer_without_some_keys_is_the_whole_answer_without_them(
    projections: list[Projection], leave_outs: list[set[str]]
) -> None:
    """Each projection answered with the keys a client leaves out, in any order and more
    than once (the parts are kept on the projection between answers), is the whole
    answer's JSON with just those keys gone, the rest in its order."""
    for p in projections:
        whole = unstructure(wire.project_result("plan-2", p))
        for leave_out in leave_outs:
            lean = {k: v for k, v in whole.items() if k not in leave_out}
            got = wire.project_json("plan-2", p, frozenset(leave_out))
            assert got == json.dumps(lean)
