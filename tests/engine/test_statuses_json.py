"""``wire.statuses_json`` writes ``fresh/statuses``'s answer piece by piece: the very text
``json.dumps`` gives of it, for any view id."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fresh_ls import protocol as proto
from fresh_ls.engine import wire

STATUSES = [m.value for m in proto.Status]


def dumped(pairs: list[tuple[str, str]]) -> str:
    return json.dumps({"views": [{"viewId": v, "status": proto.Status(s).value} for v, s in pairs]})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(), st.sampled_from(STATUSES)), max_size=20))
def test_the_text_is_json_dumps_of_the_answer(pairs: list[tuple[str, str]]) -> None:
    # any id: quotes, backslashes, control characters, non-ASCII, lone surrogates
    got = wire.statuses_json(pairs)
    assert isinstance(got, wire.Encoded)
    assert got == dumped(pairs)


def test_edge_ids_and_no_views() -> None:
    pairs = [('a"b\\c', "fresh"), ("\x00\n\u00e9\U0001f642\ud800", "changed"), ("", "moved")]
    assert wire.statuses_json(pairs) == dumped(pairs)
    assert wire.statuses_json([]) == '{"views": []}' == dumped([])


def test_an_unknown_status_fails_on_the_server() -> None:
    with pytest.raises(KeyError):
        wire.statuses_json([("v", "no such status")])
