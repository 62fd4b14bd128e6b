"""The stale note (``fresh_ls.hooks.note``): what it says, what it leaves out, its budget."""

from __future__ import annotations

from typing import Any

from fresh_ls.hooks.note import HEADER, MIN_BUDGET_BYTES, compose, fingerprint


def diff(path: str, old: str, new: str, at: int = 5) -> str:
    return (
        f"--- {path} lines {at}-{at} (observed)\n+++ {path} lines {at}-{at} (current)\n"
        f"@@ -{at} +{at} @@\n-{old}\n+{new}\n"
    )


def view(
    view_id: str,
    path: str = "calc.py",
    status: str = "changed",
    by: str | None = "outside",
    first: int = 1,
    last: int = 9,
    d: str | None = None,
) -> dict[str, Any]:
    return {
        "viewId": view_id,
        "path": path,
        "status": status,
        "observed": {"firstLine": first, "lastLine": last, "sha256": "0" * 64},
        "units": [
            {
                "unitId": f"u-{view_id}",
                "kind": "symbol",
                "name": "total",
                "symbolKind": "function",
                "status": status,
                "observed": {"firstLine": first, "lastLine": last},
                "current": None if status == "deleted" else {"firstLine": first, "lastLine": last},
                "diff": d if status == "changed" else None,
                "changedBy": None if status == "fresh" else by,
            }
        ],
    }


D1 = diff("calc.py", "    return q * RATE", "    return q * RATE * 2")


def test_a_changed_view_is_announced_with_path_lines_diff_and_author() -> None:
    out = compose([view("toolu_1", d=D1)], {})
    assert out.text.startswith(HEADER)
    assert "calc.py lines 1-9 (Read toolu_1): changed" in out.text
    assert "function total" in out.text
    assert "changed outside the agent" in out.text
    assert D1 in out.text
    assert out.announced == {"toolu_1": fingerprint(view("toolu_1", d=D1))}


def test_nothing_to_say_is_an_empty_note() -> None:
    assert compose([], {}).text == ""
    assert compose([view("a", status="fresh")], {}).text == ""
    assert compose([view("a", status="moved")], {}).text == ""  # the code shown is exact


def test_an_announced_view_is_not_repeated_until_it_changes_again() -> None:
    first = compose([view("a", d=D1)], {})
    assert compose([view("a", d=D1)], first.announced).text == ""
    # the same change, moved down two lines: still no news
    moved = diff("calc.py", "    return q * RATE", "    return q * RATE * 2", at=7)
    assert compose([view("a", d=moved)], first.announced).text == ""
    again = diff("calc.py", "    return q * RATE", "    return q * RATE * 3")
    second = compose([view("a", d=again)], first.announced)
    assert "RATE * 3" in second.text


def test_own_changes_are_not_news_but_someone_elses_are() -> None:
    assert compose([view("a", by="self", d=D1)], {}).text == ""
    other = compose([view("a", by="session:agent-2", d=D1)], {})
    assert "by another agent (session:agent-2)" in other.text
    assert "in an editor" in compose([view("a", by="editor", d=D1)], {}).text


def test_a_view_read_again_since_is_superseded() -> None:
    old = view("old", first=1, last=9, d=D1)
    again = view("new", first=1, last=20, status="fresh")
    assert compose([old, again], {}).text == ""
    narrower = view("new", first=3, last=4, status="fresh")
    assert "Read old" in compose([old, narrower], {}).text


def test_deleted_and_ambiguous_say_what_to_do() -> None:
    gone, unclear = view("a", status="deleted"), view("b", path="b.py", status="ambiguous")
    text = compose([gone, unclear], {}).text
    assert "is gone (deleted outside the agent" in text
    assert "can no longer be told apart" in text and "read the file again" in text


def test_the_budget_holds_most_recent_first_and_says_what_was_left_out() -> None:
    big = diff("big.py", "x" * 3000, "y" * 3000)
    views = [view(f"v{i}", path=f"f{i}.py", d=big) for i in range(6)]
    budget = 8192
    out = compose(views, {}, budget)
    assert len(out.text.encode()) <= budget
    # most recent first: the last views read are the ones given in full
    assert "Read v5" in out.text and big in out.text
    assert "Read v0" in out.text  # named, at least
    assert "Left out to fit 8192 bytes" in out.text or "is left out to fit" in out.text
    assert set(out.announced) | set(out.left_out) == {f"v{i}" for i in range(6)}


def test_a_view_too_large_for_the_budget_is_named_with_its_size() -> None:
    huge = diff("big.py", "x" * 20000, "y" * 20000)
    out = compose([view("a", d=huge)], {}, 8192)
    assert len(out.text.encode()) <= 8192
    assert "Read a" in out.text and "is left out to fit the note's budget" in out.text
    assert huge not in out.text


def test_views_that_fit_nowhere_are_listed_in_the_last_line_and_not_recorded() -> None:
    views = [view(f"v{i}", path=f"f{i}.py", d=D1) for i in range(40)]
    budget = MIN_BUDGET_BYTES + 512
    out = compose(views, {}, budget)
    assert len(out.text.encode()) <= budget
    assert out.announced and out.left_out and f"Left out to fit {budget} bytes" in out.text
    assert not set(out.left_out) & set(out.announced)
    # the next note brings what the first one left out
    later = compose(views, out.announced, budget)
    assert later.announced and not set(later.announced) & set(out.announced)


def test_an_older_wider_view_of_the_same_change_is_one_line() -> None:
    whole = view(
        "whole",
        first=1,
        last=20,
        d=diff("calc.py", "    return q * RATE", "    return q * RATE * 2", at=5),
    )
    rng = view("range", first=4, last=6, d=D1)
    out = compose([whole, rng], {})
    assert out.text.count("-    return q * RATE\n") == 1
    assert (
        "calc.py lines 1-20 (Read whole): changed, by the same change as shown above." in out.text
    )
    assert set(out.announced) == {"whole", "range"}
    # another change in the wider view: its diff is shown
    other = diff("calc.py", "    return a // 5", "    return a // 4", at=9)
    both = view("whole", first=1, last=20, d=D1 + other)
    assert "a // 4" in compose([both, rng], {}).text
