"""Bounds on what one request may cost: path length, and fuzzy relocation of huge text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fresh_ls.core.anchors import anchor_view
from fresh_ls.core.model import View
from fresh_ls.core.paths import MAX_PATH_BYTES, PathTooLong, path_too_long, resolve_in_root
from fresh_ls.core.ranges import observed_lines
from fresh_ls.core.sources import Source
from fresh_ls.core.staleness import FUZZY_PAIR_BUDGET, FuzzyBudget, assess_unit, assess_view
from fresh_ls.core.text import split_lines
from fresh_ls.errors import InvalidParams
from fresh_ls.protocol import DidWriteParams, ObserveParams, parse

# -- path length ---------------------------------------------------------------------------


def test_a_path_at_the_limit_is_resolved(tmp_path: Path) -> None:
    root = Path(tmp_path).resolve()
    name = "d/" * ((MAX_PATH_BYTES - 10) // 2) + "x.py"
    assert len(name.encode()) <= MAX_PATH_BYTES
    rel, _ = resolve_in_root(root, name)
    assert rel == name


def test_a_path_over_the_limit_is_refused_without_resolving_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before ``realpath`` runs (it costs the square of the path's length)."""
    root = Path(tmp_path).resolve()
    long_path = "a/" * 200_000 + "cart.py"

    def no_realpath(*_: object, **__: object) -> str:
        raise AssertionError("realpath was called on an over-long path")

    monkeypatch.setattr(os.path, "realpath", no_realpath)
    with pytest.raises(PathTooLong, match="4096 bytes"):
        resolve_in_root(root, long_path)


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    assert path_too_long("é" * (MAX_PATH_BYTES // 2)) is None
    message = path_too_long("é" * (MAX_PATH_BYTES // 2 + 1))
    assert message is not None and f"{MAX_PATH_BYTES + 2} bytes" in message


@pytest.mark.parametrize("cls", [ObserveParams, DidWriteParams])
def test_params_refuse_a_long_path_naming_the_field_and_the_limit(cls: type) -> None:
    with pytest.raises(InvalidParams) as info:
        parse(cls, {"session": "s", "path": "x" * (MAX_PATH_BYTES + 1)})
    assert "path" in str(info.value) and f"{MAX_PATH_BYTES} bytes" in str(info.value)
    assert parse(cls, {"session": "s", "path": "x" * MAX_PATH_BYTES}).path


# -- fuzzy relocation ------------------------------------------------------------------------

_MODULE = "RATE = 10\n\n\ndef f():\n    return 1\n\n\nLIMIT = 3\n"


def _view(path: str, source: Source, first: int, last: int, text: str) -> View:
    observed = observed_lines(source, first, last, split_lines(text))
    units = anchor_view(path, source, first, last, observed, False)
    return View("s", "v", path, first, last, "read", 1, "".join(observed), "", units)


def test_a_huge_observed_line_is_assessed_quickly() -> None:
    source = Source.from_text("m.py", _MODULE * 300)
    huge = "x" * (4 * 1024 * 1024 - 64) + "\n"
    # No timing here: the e2e test (tests/e2e/test_hardening.py) holds another client to a
    # sanity bound meanwhile; this one checks the answers stay honest.
    for first, last in [(1, 1), (5, 5), (1, 2)]:
        view = _view("m.py", source, first, last, huge)
        assert assess_view(view, source).status != "fresh"


def test_the_budget_stops_a_costly_search_with_an_honest_answer() -> None:
    source = Source.from_text("m.py", _MODULE)
    view = _view("m.py", source, 8, 8, "LIMIT = 4\n")
    [unit] = view.units
    assert assess_unit("m.py", unit, source, budget=FuzzyBudget()).status == "changed"
    assert assess_unit("m.py", unit, source, budget=FuzzyBudget(0)).status == "deleted"


def test_same_named_definitions_past_the_budget_are_ambiguous_not_guessed() -> None:
    two = "def f():\n    return 1\n\n\ndef f():\n    return 2\n"
    source = Source.from_text("m.py", two)
    view = _view("m.py", source, 2, 2, "    return 1\n")
    [unit] = view.units
    changed = Source.from_text("m.py", two + "\n\ndef f():\n    return 3\n")  # one more f
    assert assess_unit("m.py", unit, changed, budget=FuzzyBudget()).status == "fresh"
    edited = Source.from_text(
        "m.py", two.replace("return 1", "return 11") + "\n\ndef f():\n    pass\n"
    )
    assert assess_unit("m.py", unit, edited, budget=FuzzyBudget(0)).status == "ambiguous"


def test_the_budget_is_spent_only_on_texts_that_could_match() -> None:
    budget = FuzzyBudget(100)
    assert budget.spend(10, 10) and budget.left == 0
    assert not budget.spend(1, 1) and budget.left == 0
    source = Source.from_text("m.py", _MODULE * 50)
    view = _view("m.py", source, 1, 1, "y" * 100_000 + "\n")
    [unit] = view.units
    budget = FuzzyBudget()
    assert assess_unit("m.py", unit, source, budget=budget).status == "deleted"
    assert budget.left == FUZZY_PAIR_BUDGET  # no window is long enough to reach the threshold
