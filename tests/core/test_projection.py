"""Projection rules on plain strings: selection, containment, budget, rendering, markers."""

from __future__ import annotations

import re
from pathlib import Path

from fresh_ls.core.anchors import anchor_view
from fresh_ls.core.model import View
from fresh_ls.core.projection import SourceSlices, plan
from fresh_ls.core.sources import Source
from fresh_ls.core.staleness import assess_view

#: A small module: a constant, a class with two methods, a function.
CART = (Path(__file__).resolve().parents[2] / "fixtures" / "code" / "cart.py").read_text()
EDITED = CART.replace("* RATE", "* RATE * 2").replace("return 1", "return 2")


def view(
    view_id: str, seq: int, first: int, last: int, text: str = CART, path: str = "cart.py"
) -> View:
    source = Source.from_text(path, text)
    n = source.line_count
    observed = source.lines[first - 1 : last]
    units = anchor_view(path, source, first, last, observed, first == 1 and last == n)
    return View("s", view_id, path, first, last, "read", seq, "".join(observed), "", units)


def project(views: list[View], now: str = EDITED, **kw: object):  # type: ignore[no-untyped-def]
    source = Source.from_text("cart.py", now)
    return plan([assess_view(v, source) for v in views], {"cart.py": source}, **kw)  # type: ignore[arg-type]


def parse_rendered(rendered: str) -> list[tuple[str, str]]:
    """Frame entries by their header's byte count, as a model-side reader would."""
    data = rendered.encode()
    out = []
    pos = 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        header = data[pos:end].decode()
        size = int(re.search(r"\((\d+) lines?, (\d+) bytes\)", header).group(2))  # type: ignore[union-attr]
        body = data[end + 1 : end + 1 + size]
        pos = end + 1 + size
        if not body.endswith(b"\n"):
            pos += 1
        out.append((header, body.decode()))
    return out


def test_entries_are_exactly_the_current_lines() -> None:
    p = project([view("a", 1, 9, 9), view("b", 2, 14, 14)])
    lines = EDITED.splitlines(keepends=True)
    assert p.entries
    for e in p.entries:
        assert e.text == "".join(lines[e.first_line - 1 : e.last_line])
    assert p.used_bytes == len(p.rendered.encode()) <= p.budget_bytes
    framed = parse_rendered(p.rendered)
    assert [body for _, body in framed] == [e.text for e in p.entries]


def test_fresh_views_are_not_replaced_under_policy_stale_but_are_under_all() -> None:
    fresh = view("f", 1, 5, 6)  # __init__, untouched
    assert project([fresh]).entries == []
    assert project([fresh]).rendered == ""
    p = project([fresh], policy="all")
    assert [e.name for e in p.entries] == ["Cart.__init__"]
    assert [m.view_id for m in p.markers] == ["f"]


def test_contained_unit_is_not_repeated_and_the_file_absorbs_it() -> None:
    p = project([view("whole", 1, 1, 14), view("one", 2, 9, 9)])
    assert len(p.entries) == 1
    assert p.entries[0].kind == "file"
    assert p.entries[0].view_ids == ["one", "whole"]
    label = p.entries[0].label
    assert all(f"[{label}]" in m.text for m in p.markers)


def test_most_recent_first_and_never_cut() -> None:
    older = view("older", 1, 9, 9)  # Cart.total, changed
    newer = view("newer", 2, 14, 14)  # helper, changed
    full = project([older, newer])
    sizes = {e.name: e.cost() for e in full.entries}
    budget = len(full.rendered.encode()) - sizes["Cart.total"] + 1  # room for helper only
    p = project([older, newer], budget_bytes=budget)
    assert [e.name for e in p.entries] == ["helper"]
    assert [(o.name, o.reason) for o in p.omitted] == [("Cart.total", "over-budget")]
    assert p.omitted[0].bytes == len(full.entries[0].text.encode())
    assert p.used_bytes <= budget


def test_whole_file_that_does_not_fit_falls_back_to_pieces() -> None:
    full = project([view("whole", 1, 1, 14)])
    p = project([view("whole", 1, 1, 14)], budget_bytes=full.used_bytes - 1)
    assert p.entries and all(e.kind != "file" for e in p.entries)
    assert p.used_bytes <= full.used_bytes - 1
    served = {(e.first_line, e.last_line) for e in p.entries}
    assert (8, 10) not in served or any(e.name == "Cart" for e in p.entries)


def test_rendering_and_markers_are_byte_identical_when_nothing_changed() -> None:
    views = [view("a", 1, 9, 9), view("b", 2, 1, 1), view("c", 3, 13, 14)]
    one, two = project(views), project(views)
    assert one.rendered == two.rendered
    assert [m.text for m in one.markers] == [m.text for m in two.markers]


def test_markers_survive_moves_unchanged_and_name_no_status() -> None:
    views = [view("a", 1, 9, 9)]
    first = project(views)
    moved = project(views, now="# new header\n\n" + EDITED)
    assert [m.text for m in first.markers] == [m.text for m in moved.markers]
    text = first.markers[0].text.removeprefix("[fresh-ls]")
    assert "a showed cart.py lines 9-9" in text
    for word in ("fresh", "moved", "changed", "stale"):
        assert word not in text


def test_deleted_unit_is_omitted_with_reason() -> None:
    gone = EDITED.replace("def helper():\n    return 2\n", "")
    p = project([view("h", 1, 14, 14)], now=gone)
    assert p.entries == []
    assert [(o.name, o.reason) for o in p.omitted] == [("helper", "deleted")]
    assert "deleted" in p.markers[0].text and "again" in p.markers[0].text


def test_a_view_observed_again_under_its_id_gets_its_own_marker_and_candidates() -> None:
    """What ``SourceSlices`` keeps per view id follows the view: the same id observed again
    over other lines (a new View, a new assessment) is planned and marked as itself."""
    text = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    before = Source.from_text("m.py", text)
    after = Source.from_text("m.py", text.replace("return", "return  "))

    def view(first: int, last: int, seq: int) -> View:
        observed = before.lines[first - 1 : last]
        units = anchor_view("m.py", before, first, last, observed, False)
        return View("s", "v1", "m.py", first, last, "read", seq, "".join(observed), "", units)

    slices = SourceSlices()
    for v in (view(1, 1, 1), view(1, 2, 2)):  # one unit, one label: only the lines differ
        shared = plan([assess_view(v, after)], {"m.py": after}, policy="all", slices=slices)
        alone = plan([assess_view(v, after)], {"m.py": after}, policy="all")
        assert [m.text for m in shared.markers] == [m.text for m in alone.markers]
        assert shared.rendered == alone.rendered
        assert f"lines {v.first_line}-{v.last_line}" in shared.markers[0].text


def test_a_unit_left_out_twice_is_named_as_first_left_out() -> None:
    """Two views hold the same unit: the one walked first cannot serve it (deleted as it
    saw it), the other's entry does not fit. One omission stands for the unit, with the
    first reason, and both markers name that one (``_Refusal``'s way for views the budget
    refuses whole says what the unit-by-unit walk says)."""
    from dataclasses import replace

    source = Source.from_text("cart.py", EDITED)
    older, newer = view("b", 1, 14, 14), view("a", 2, 14, 15)
    first = assess_view(newer, source)
    gone = replace(first, units=[replace(u, status="deleted", serve=None) for u in first.units])
    second = assess_view(older, source)
    assert {u.unit.unit_id for u in gone.units} >= {u.unit.unit_id for u in second.units}
    slices = SourceSlices()  # the older view's marker was kept when it stood alone
    alone = plan([second], {"cart.py": source}, budget_bytes=10, policy="all", slices=slices)
    assert "helper (left out to fit the budget" in alone.markers[0].text
    for budget in (10, 100_000):
        p = plan([second, gone], {"cart.py": source}, budget_bytes=budget, policy="all",
                 slices=slices)  # fmt: skip
        texts = {m.view_id: m.text for m in p.markers}
        helper = [o for o in p.omitted if o.name == "helper"]
        if budget == 10:
            said = [(o.reason, o.bytes, o.view_ids) for o in helper]
            assert said == [("deleted", None, ["a", "b"])]
            assert "helper (deleted)" in texts["a"] and "helper (deleted)" in texts["b"]
        else:  # the older view's entry fits: it is served, the newer's unit stays left out
            assert [(o.reason, o.view_ids) for o in helper] == [("deleted", ["a"])]
            assert "helper (deleted)" not in texts["b"]
