"""``core.jsonload.loads`` answers exactly as ``json.loads``: the same object, to the type
and sign of every number, or the same kind of error."""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fresh_ls.core.jsonload import (
    _may_hold_a_long_integer,
    _scan_runs,
    loads,
    loads_own,
    loads_utf8,
)


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (1 is not 1.0, -0.0 is not 0.0, NaN is
    NaN) and dict keys in the same order; a loop, not a recursion, for deep documents."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if math.isnan(x) != math.isnan(y):
                return False
            if not math.isnan(x) and (x != y or math.copysign(1, x) != math.copysign(1, y)):
                return False
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            todo += [(x[k], y[k]) for k in x]
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            todo += zip(x, y, strict=True)
        elif x != y:
            return False
    return True


def outcome(read: Any, data: str | bytes) -> tuple[str, Any]:
    try:
        return "value", read(data)
    except RecursionError:
        return "error", "RecursionError"
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        kind = "UnicodeDecodeError" if isinstance(exc, UnicodeDecodeError) else "ValueError"
        return "error", kind


def check(data: str | bytes, read: Any = loads) -> None:
    ours, theirs = outcome(read, data), outcome(json.loads, data)
    assert ours[0] == theirs[0], (data, ours, theirs)
    if ours[0] == "value":
        assert same(ours[1], theirs[1]), (data, ours, theirs)
    else:
        assert ours[1] == theirs[1], (data, ours, theirs)


EDGES = [
    '{"a": 1, "b": [1.5, -0.0, 0, -0, true, null, "x"]}',
    "NaN",
    "[Infinity, -Infinity]",
    "[1e400, -1e400, 1e-400]",
    '"\\ud800"',
    '"\\udc00\\ud800"',
    '"\\ud83d\\ude00"',
    '{"a": 1, "b": 2, "a": 3}',
    "123456789012345678901234567890",
    "-123456789012345678901234567890",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "-9223372036854775809",
    "0.12345678901234567890123",
    "1.0000000000000002",
    "5e-324",
    "1.7976931348623157e308",
    '"\\u0000"',
    '"a\tb"',
    '"a\x00b"',
    "\ufeff{}",
    "[1,]",
    "{'a': 1}",
    "",
    "   ",
    "[1] x",
    "01",
    "-",
    "1.",
    ".5",
    "[" * 5000 + "]" * 5000,
    "[" * 900 + "]" * 900,
]


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_edge_cases_as_text_and_bytes(text: str) -> None:
    check(text)
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        return
    check(raw)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "utf-8-sig"])
def test_other_encodings_of_bytes(encoding: str) -> None:
    check('{"a": [1, 2.5, "\u00e9"]}'.encode(encoding))


def test_invalid_utf8() -> None:
    check(b'{"a": "\xff"}')


def json_values(integers: st.SearchStrategy[int], special_floats: bool) -> Any:
    """Any JSON value built of these integers, floats (NaN and infinities or not), text."""
    return st.recursive(
        st.none()
        | st.booleans()
        | integers
        | st.floats(allow_nan=special_floats, allow_infinity=special_floats)
        | st.text(),
        lambda inner: (
            st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5)
        ),
        max_leaves=30,
    )


JSON = json_values(st.integers(min_value=-(10**30), max_value=10**30), special_floats=True)


@settings(max_examples=400, deadline=None)
@given(JSON, st.booleans(), st.booleans())
def test_any_value_as_any_spelling(value: Any, ascii_only: bool, compact: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":") if compact else None)
    check(text)
    if not ascii_only:
        with contextlib.suppress(UnicodeEncodeError):
            check(text.encode("utf-8"))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+-tfnrulasNIiy \\u\x00\t\n\ud800', max_size=40))
def test_any_text(text: str) -> None:
    check(text)


NUMBER = st.from_regex(r"\A-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,3})?\Z")


@settings(max_examples=600, deadline=None)
@given(NUMBER, st.sampled_from(["N", '{"a": N}', "[1, N]", '["xN", N]', '"N"', '["abcN"]']))
def test_long_numbers_in_and_out_of_strings(number: str, where: str) -> None:
    # a long run of digits inside a string or a fraction stays on orjson's way; one that
    # may be an integer of 19 digits or more goes the standard way: both read as json does
    check(where.replace("N", number))


#: what the server writes: json.dumps of 64-bit integers, no NaN
OWN = json_values(st.integers(min_value=-(2**63), max_value=2**63 - 1), special_floats=False)


@settings(max_examples=300, deadline=None)
@given(OWN)
def test_the_servers_own_answers_read_as_json_reads_them(value: Any) -> None:
    # what the server writes (json.dumps of 64-bit integers, no NaN) needs no scan
    text = json.dumps(value, ensure_ascii=False)
    check(text, loads_own)
    if text.isascii():
        check(text.encode("ascii"), loads_own)


@pytest.mark.parametrize("text", ["NaN", "[1e400]", '"\\ud800"', "[1,]", ""])
def test_what_orjson_refuses_reads_as_json_reads_it(text: str) -> None:
    check(text, loads_own)


def check_utf8(raw: bytes) -> None:
    """``loads_utf8(raw)`` answers as ``json.loads(raw.decode("utf-8"))`` (strict UTF-8:
    bytes that are no UTF-8 fail to decode, surrogates included)."""
    ours = outcome(loads_utf8, raw)
    theirs = outcome(lambda d: json.loads(d.decode("utf-8")), raw)
    assert ours[0] == theirs[0], (raw, ours, theirs)
    if ours[0] == "value":
        assert same(ours[1], theirs[1]), (raw, ours, theirs)
    else:
        assert ours[1] == theirs[1], (raw, ours, theirs)


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_utf8_bytes_read_as_their_text(text: str) -> None:
    with contextlib.suppress(UnicodeEncodeError):
        check_utf8(text.encode("utf-8"))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": "\xff"}',
        b'{"a": "\xed\xa0\x80"}',  # a surrogate spelled in UTF-8: no UTF-8
        b'{"a": "\xc0\xaf"}',  # an overlong spelling
        b'{"a": "\xf4\x90\x80\x80"}',  # past U+10FFFF
        b'{"a": "caf\xc3\xa9", "n": 12345678901234567890}',
        b"\xef\xbb\xbf{}",  # a byte-order mark: the standard way refuses it
    ],
)
def test_odd_bytes_read_as_their_decode_reads_them(raw: bytes) -> None:
    check_utf8(raw)


@settings(max_examples=400, deadline=None)
@given(JSON, st.booleans())
def test_any_value_as_utf8_bytes(value: Any, compact: bool) -> None:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else None)
    with contextlib.suppress(UnicodeEncodeError):
        check_utf8(text.encode("utf-8"))


@settings(max_examples=400, deadline=None)
@given(NUMBER, st.sampled_from(["N", '{"a": N}', "[1, N]", '["xN", N]', '"N"', '["abcN"]']))
def test_long_numbers_as_utf8_bytes(number: str, where: str) -> None:
    check_utf8(where.replace("N", number).encode("utf-8"))


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet='0123456789 :-,[a"\n', max_size=12),
            st.integers(min_value=10, max_value=60).map(lambda n: "7" * n),
        ),
        max_size=30,
    )
)
def test_the_sampled_scan_answers_as_the_scan_of_every_run(pieces: list[str]) -> None:
    # runs of digits of every length, at every offset from the sampled bytes
    raw = "".join(pieces).encode("ascii")
    for cut in range(6):
        assert _may_hold_a_long_integer(raw[cut:]) == _scan_runs(raw[cut:]), raw[cut:]
