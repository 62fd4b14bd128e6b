"""The contract's range rules, on plain strings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fresh_ls.core.ranges import changed_lines, changed_span, observed_lines, observed_range
from fresh_ls.core.sources import Source
from fresh_ls.errors import InvalidParams
from tests.core._walks import walked

TEXT = "a\nb\nc\nd\n"


@pytest.mark.parametrize(
    ("first", "last", "n", "given", "expected"),
    [
        (None, None, 4, None, (1, 4, True)),  # no range: the whole file
        (2, 3, 4, None, (2, 3, False)),
        (2, 99, 4, None, (2, 4, False)),  # lastLine past the end is clamped
        (1, 4, 4, None, (1, 4, True)),  # a range covering every line is a whole-file read
        (2, None, 4, None, (2, 4, False)),  # firstLine alone: through the end
        (2, None, 4, ["b\n", "c\n"], (2, 3, False)),  # ... or through the given text
        (None, 2, 4, None, (1, 2, False)),  # lastLine alone: from line 1
        (None, None, 0, None, (1, 0, True)),  # an empty file has no lines
        (1, 5, 0, None, (1, 0, True)),
    ],
)
def test_observed_range(first, last, n, given, expected) -> None:  # type: ignore[no-untyped-def]
    assert observed_range(first, last, n, given) == expected


@pytest.mark.parametrize(
    ("first", "last", "field"), [(3, 2, "lastLine"), (9, None, "firstLine"), (9, 12, "firstLine")]
)
def test_bad_ranges_name_the_field(first: int, last: int | None, field: str) -> None:
    with pytest.raises(InvalidParams, match=f"^{field}:"):
        observed_range(first, last, 4, None)


def test_given_text_is_aligned_and_its_stripped_newline_restored() -> None:
    source = Source.from_text("m.txt", TEXT)
    assert observed_lines(source, 2, 3, None) == ["b\n", "c\n"]
    assert observed_lines(source, 2, 3, ["b\n", "c"]) == ["b\n", "c\n"]
    assert observed_lines(source, 2, 3, ["b\n"]) == ["b\n", ""]  # a missing line differs
    crlf = Source.from_text("m.txt", "a\r\nb\r\n")
    assert observed_lines(crlf, 1, 2, ["a\r\n", "b"]) == ["a\r\n", "b\r\n"]


def test_changed_lines_are_the_span_between_common_prefix_and_suffix() -> None:
    before = Source.from_text("m.txt", TEXT)
    assert changed_lines(before, Source.from_text("m.txt", "a\nB\nC\nd\n")) == (2, 3)
    assert changed_lines(before, Source.from_text("m.txt", "a\nb\nX\nc\nd\n")) == (3, 3)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n"]), max_size=12),
    st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n"]), max_size=12),
)
def test_changed_span_is_the_walk_of_the_common_head_and_tail(a: list[str], b: list[str]) -> None:
    before = Source.from_text("m.txt", "".join(a))
    after = Source.from_text("m.txt", "".join(b))
    assert changed_span(before, after) == walked(before.lines, after.lines)
