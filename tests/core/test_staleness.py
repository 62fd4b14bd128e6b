"""Staleness verdicts on plain strings: observe a range, edit the text, assess.

Each row: a file, the observed range, an edit (old text -> new text), and what the view's
units must be called afterwards, with where their lines are now.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fresh_ls.core.anchors import anchor_view
from fresh_ls.core.model import LineRange, ObservedUnit, View
from fresh_ls.core.sources import Source
from fresh_ls.core.staleness import _assess_file, _assess_file_lines, assess_view, diff_of
from fresh_ls.core.text import split_lines

#: A small module: a constant, a class with two methods, a function.
CART = (Path(__file__).resolve().parents[2] / "fixtures" / "code" / "cart.py").read_text()


def observe(path: str, text: str, first: int, last: int, whole: bool = False) -> View:
    source = Source.from_text(path, text)
    observed = source.lines[first - 1 : last]
    units = anchor_view(path, source, first, last, observed, whole)
    return View("s", "v1", path, first, last, "read", 1, "".join(observed), "", units)


@dataclass
class Case:
    name: str
    first: int
    last: int
    old: str
    new: str
    view_status: str
    units: list[tuple[str, str, tuple[int, int] | None]]  # (name or kind, status, current)
    path: str = "src/cart.py"
    text: str = CART


CASES = [
    Case("untouched", 9, 9, "", "", "fresh", [("Cart.total", "fresh", (9, 9))]),
    Case(
        "edit elsewhere in the file",
        9,
        9,
        "return 1",
        "return 2",
        "fresh",
        [("Cart.total", "fresh", (9, 9))],
    ),
    Case(
        "lines inserted above",
        9,
        9,
        "RATE = 10\n",
        "RATE = 10\nTAX = 2\nFEE = 1\n",
        "moved",
        [("Cart.total", "moved", (11, 11))],
    ),
    Case(
        "observed line edited in place",
        9,
        9,
        "* RATE",
        "* RATE * 2",
        "changed",
        [("Cart.total", "changed", (9, 9))],
    ),
    Case(
        "observed line deleted: current is the surviving definition's extent",
        9,
        9,
        "        subtotal = quantity * RATE\n",
        "",
        "changed",
        [("Cart.total", "changed", (8, 9))],
    ),
    Case(
        "line added inside the method above the observed one",
        10,
        10,
        "        subtotal",
        "        quantity += 0\n        subtotal",
        "moved",
        [("Cart.total", "moved", (11, 11))],
    ),
    Case(
        "method deleted",
        9,
        9,
        "    def total(self, quantity):\n        subtotal = quantity * RATE\n"
        "        return subtotal\n",
        "",
        "deleted",
        [("Cart.total", "deleted", None)],
    ),
    Case(
        "method renamed keeps its body",
        8,
        10,
        "def total(",
        "def grand_total(",
        "changed",
        [("Cart.total", "changed", (8, 10))],
    ),
    Case(
        "text unit moved",
        1,
        1,
        "RATE = 10\n",
        "import os\nRATE = 10\n",
        "moved",
        [("text", "moved", (2, 2))],
    ),
    Case(
        "text unit edited", 1, 1, "RATE = 10", "RATE = 12", "changed", [("text", "changed", (1, 1))]
    ),
    Case(
        "whole file, any edit",
        1,
        14,
        "return 1",
        "return 2",
        "changed",
        [("file", "changed", (1, 14))],
    ),
    Case(
        "unsupported language, range view, edit elsewhere",
        2,
        2,
        "line 4",
        "line four",
        "fresh",
        [("file", "fresh", (2, 2))],
        "notes.md",
        "line 1\nline 2\nline 3\nline 4\n",
    ),
    Case(
        "unsupported language, observed line edited",
        2,
        2,
        "line 2",
        "line two",
        "changed",
        [("file", "changed", (1, 4))],
        "notes.md",
        "line 1\nline 2\nline 3\nline 4\n",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_staleness(case: Case) -> None:
    whole = case.first == 1 and case.last == len(case.text.splitlines())
    view = observe(case.path, case.text, case.first, case.last, whole)
    assert case.old in case.text
    now = Source.from_text(case.path, case.text.replace(case.old, case.new, 1))
    a = assess_view(view, now)
    got = [
        (
            u.unit.name or u.unit.kind,
            u.status,
            (u.current.first, u.current.last) if u.current else None,
        )
        for u in a.units
    ]
    assert got == case.units
    assert a.status == case.view_status


def test_blank_line_turning_into_code_is_a_change() -> None:
    text = "A = 1\n\nB = 2\n"
    view = observe("m.py", text, 1, 3)
    a = assess_view(view, Source.from_text("m.py", "A = 1\nX = 0\nB = 2\n"))
    assert a.status == "changed"


def test_missing_and_unreadable_files() -> None:
    view = observe("src/cart.py", CART, 9, 9)
    assert assess_view(view, None, "missing").status == "deleted"
    assert assess_view(view, None, "unreadable").status == "unreadable"


def test_repeated_text_with_equal_neighbours_is_ambiguous() -> None:
    text = "x = 1\n\ndef a():\n    pass\n\nx = 1\n"
    view = observe("m.py", text, 1, 1)
    # the first copy is edited away from its place; two equal candidates remain elsewhere
    now = Source.from_text("m.py", "y = 0\n\ndef a():\n    pass\n\nx = 1\n\nx = 1\n")
    a = assess_view(view, now)
    assert [u.status for u in a.units] == ["ambiguous"]
    assert a.units[0].current is None and a.units[0].serve is None


def test_overloads_are_told_apart_by_order() -> None:
    java = (
        "class Cart {\n"
        "  int add(int a) {\n    return a;\n  }\n"
        "  int add(int a, int b) {\n    return a + b;\n  }\n"
        "}\n"
    )
    view = observe("Cart.java", java, 6, 6)
    assert [u.name for u in view.units] == ["Cart.add"]
    assert view.units[0].ordinal == 1
    edited = java.replace("return a;", "return a * 1;")
    a = assess_view(view, Source.from_text("Cart.java", edited))
    assert a.status == "fresh"
    assert a.units[0].serve == LineRange(5, 7)


def test_diff_headers_and_hunks_use_file_line_numbers() -> None:
    view = observe("src/cart.py", CART, 8, 10)
    now = Source.from_text("src/cart.py", "# a\n# b\n" + CART.replace("* RATE", "* RATE * 2"))
    a = assess_view(view, now)
    diff = diff_of("src/cart.py", a.units[0], now)
    assert diff is not None
    assert diff.splitlines()[:3] == [
        "--- src/cart.py lines 8-10 (observed)",
        "+++ src/cart.py lines 10-12 (current)",
        "@@ -8,3 +10,3 @@",
    ]
    assert "-        subtotal = quantity * RATE" in diff
    assert "+        subtotal = quantity * RATE * 2" in diff


def test_observed_text_differing_from_disk_is_changed_at_once() -> None:
    source = Source.from_text("src/cart.py", CART)
    seen = ["        subtotal = quantity * RATE * 3\n"]
    units = anchor_view("src/cart.py", source, 9, 9, seen, False)
    view = View("s", "v", "src/cart.py", 9, 9, "read", 1, "".join(seen), "", units)
    assert assess_view(view, source).status == "changed"


_LINES = st.lists(st.sampled_from(["a\n", "b\n", "\n", "a b\n", "é\n"]), max_size=8)


@given(
    old=_LINES,
    new=_LINES,
    seen=st.integers(0, 8),
    tail=st.sampled_from(["", "a", "b"]),
    def_last_extra=st.sampled_from([0, 0, 1]),
)
def test_a_file_unit_from_line_1_is_judged_as_its_lines_judge_it(
    old: list[str], new: list[str], seen: int, tail: str, def_last_extra: int
) -> None:
    # the shortcut (the file's text starts with the observed text) against the lines,
    # the way every other file unit is judged
    observed = "".join(old[:seen])
    last = len(split_lines(observed))
    unit = ObservedUnit("u", "file", 1, last, observed, 1, last + def_last_extra)
    source = Source.from_text("f.md", "".join(new) + tail)
    assert _assess_file("f.md", unit, source) == _assess_file_lines("f.md", unit, source)
    same = Source.from_text("f.md", observed + "".join(new) + tail)
    assert _assess_file("f.md", unit, same) == _assess_file_lines("f.md", unit, same)
