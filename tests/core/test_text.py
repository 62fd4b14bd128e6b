"""Line arithmetic shortcuts against the plain rule: ``split_lines_after`` must give
``split_lines`` of the new text, line for line, after any edit of any text (CR, lone CR,
non-ASCII, no final LF, empty texts); ``common_ends`` must give the walk's head and tail."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fresh_ls.core.text import common_ends, split_lines, split_lines_after
from tests.core._walks import walked

PIECES = ["a", "bc", "\n", "\r", "\r\n", "é", "\n\n", "\u2028", "x = 1\n"]
texts = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)


@st.composite
def edited(draw: st.DrawFn) -> tuple[str, str]:
    """A text and the same text after up to three inserts, deletes or replacements."""
    old = draw(texts)
    new = list(old)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(new)))
        what = draw(st.sampled_from(["insert", "delete", "replace"]))
        if what == "insert":
            new[at:at] = list(draw(texts))
        elif what == "delete":
            del new[at : at + draw(st.integers(1, 4))]
        else:
            new[at : at + 1] = list(draw(texts))
    return old, "".join(new)


@settings(max_examples=1500, deadline=None)
@given(edited(), st.sampled_from(["", "y = 2\n" * 50]))
def test_split_lines_after_an_edit_is_split_lines(case: tuple[str, str], around: str) -> None:
    old, new = around + case[0] + around, around + case[1] + around
    assert split_lines_after(old, split_lines(old), new) == split_lines(new)


@settings(max_examples=500, deadline=None)
@given(texts, texts)
def test_common_ends_is_the_walk_of_head_and_tail(a: str, b: str) -> None:
    head, end_a, _ = walked(a, b)
    tail = len(a) - end_a
    assert common_ends(a, b) == (head, tail)
    assert common_ends(list(a), list(b)) == (head, tail)
