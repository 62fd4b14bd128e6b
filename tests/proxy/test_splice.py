"""``splice.spliced`` rewrites a JSON document in the client's own bytes: for documents
spelled every way JSON allows (whitespace, key order, escapes, non-ASCII), the result parses
to the rewritten object and every character outside the values that changed is the
original's. The spans of the values are known here from the test's own serialiser, not from
the code under test."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fresh_ls.proxy.splice import SpliceError, spliced

Path = tuple[Any, ...]

_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    _leaves,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=16,
)
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class Writer:
    """Spells a value as JSON, choosing whitespace and escapes from hypothesis, and records
    where each value's spelling starts and ends."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.parts: list[str] = []
        self.size = 0
        self.spans: dict[Path, tuple[int, int]] = {}

    def put(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)

    def ws(self) -> None:
        self.put(self.draw(st.sampled_from(["", "", " ", "\n  ", "\t", "\r\n"])))

    def string(self, s: str) -> None:
        out = ['"']
        for ch in s:
            code = ord(ch)
            escape = self.draw(st.integers(0, 3)) == 0
            if ch in _SHORT and (code < 0x20 or ch in '"\\') and not escape:
                out.append(_SHORT[ch])
            elif code < 0x20 or ch in '"\\' or escape:
                if code > 0xFFFF:
                    high = 0xD800 + ((code - 0x10000) >> 10)
                    low = 0xDC00 + ((code - 0x10000) & 0x3FF)
                    out.append(f"\\u{high:04x}\\u{low:04X}")
                elif ch == "/":
                    out.append("\\/")
                else:
                    out.append(f"\\u{code:04x}")
            else:
                out.append(ch)
        out.append('"')
        self.put("".join(out))

    def value(self, v: Any, path: Path = ()) -> None:
        start = self.size
        if isinstance(v, dict):
            self.put("{")
            keys = list(v)
            order = self.draw(st.permutations(keys)) if keys else []
            for n, key in enumerate(order):
                self.ws()
                if n:
                    self.put(",")
                    self.ws()
                self.string(key)
                self.ws()
                self.put(":")
                self.ws()
                self.value(v[key], (*path, key))
            self.ws()
            self.put("}")
        elif isinstance(v, list):
            self.put("[")
            for n, item in enumerate(v):
                self.ws()
                if n:
                    self.put(",")
                    self.ws()
                self.value(item, (*path, n))
            self.ws()
            self.put("]")
        elif isinstance(v, str):
            self.string(v)
        else:
            self.put(json.dumps(v))
        self.spans[path] = (start, self.size)


def _get(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def _set(value: Any, path: Path, new: Any) -> None:
    _get(value, path[:-1])[path[-1]] = new


@st.composite
def documents(draw: Any) -> tuple[str, Any, Writer]:
    value = draw(json_values)
    writer = Writer(draw)
    writer.ws()
    writer.value(value)
    writer.ws()
    text = "".join(writer.parts)
    assert json.loads(text) == value
    return text, value, writer


@st.composite
def changed(draw: Any, old: str) -> str:
    how = draw(st.sampled_from(["append", "cut", "new"]))
    if how == "append":
        return old + draw(st.text(min_size=1, max_size=8))
    if how == "cut":
        return old[: draw(st.integers(0, len(old)))] + draw(st.text(max_size=8))
    return draw(st.text(max_size=8))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_only_changed_values_differ(data: Any) -> None:
    text, old, writer = data.draw(documents())
    paths = [p for p in writer.spans if p]
    chosen: list[Path] = []
    for path in data.draw(st.lists(st.sampled_from(paths), max_size=3)) if paths else []:
        if not any(path[: len(c)] == c or c[: len(path)] == path for c in chosen):
            chosen.append(path)
    new = copy.deepcopy(old)
    for path in chosen:
        was = _get(old, path)
        if isinstance(was, str) and data.draw(st.booleans()):
            _set(new, path, data.draw(changed(was)))
        else:
            _set(new, path, data.draw(json_values))
    out = spliced(text, old, new)
    assert json.loads(out) == new
    out.encode("utf-8")  # writable as UTF-8
    # The original's text, piece by piece, between the chosen values: each value, spelled
    # anew or in part, is read back with the decoder to find where the next piece begins.
    at_out = at = 0
    decoder = json.JSONDecoder()
    for path in sorted(chosen, key=lambda p: writer.spans[p]):
        start, end = writer.spans[path]
        assert out[at_out : at_out + start - at] == text[at:start]
        value, at_out = decoder.raw_decode(out, at_out + start - at)
        assert value == _get(new, path)
        at = end
    assert out[at_out:] == text[at:]
    if not chosen:
        assert out == text


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_members_and_elements_added_and_removed(data: Any) -> None:
    """An element appended or cut at the end of an array, a member added or removed: the
    result parses to the new object, and the text outside that container is untouched."""
    text, old, writer = data.draw(documents())
    containers = [p for p in writer.spans if isinstance(_get(old, p), dict | list)]
    if not containers:
        return
    path = data.draw(st.sampled_from(containers))
    new = copy.deepcopy(old)
    target = _get(new, path)
    if isinstance(target, list):
        if target and data.draw(st.booleans()):
            del target[data.draw(st.integers(0, len(target) - 1)) :]
        else:
            target.extend(data.draw(st.lists(json_values, min_size=1, max_size=3)))
    elif target and data.draw(st.booleans()):
        for key in data.draw(st.lists(st.sampled_from(list(target)), min_size=1, unique=True)):
            del target[key]
    else:
        target.update(data.draw(st.dictionaries(st.text(max_size=4), json_values, min_size=1)))
    out = spliced(text, old, new)
    assert json.loads(out) == new
    start, end = writer.spans[path]
    assert out.startswith(text[:start]) and out.endswith(text[end:])


def test_a_refresh_appended_to_a_tool_result_keeps_its_bytes() -> None:
    text = '{"messages":[{"role":"tool","content":"caf\\u00e9\\n1\\tx"}],"model":"m"}'
    old = json.loads(text)
    new = copy.deepcopy(old)
    new["messages"][0]["content"] += "\n\n[fresh-ls] now"
    new["messages"].append({"role": "user", "content": "é"})
    out = spliced(text, old, new)
    assert out == (
        '{"messages":[{"role":"tool","content":"caf\\u00e9\\n1\\tx\\n\\n[fresh-ls] now"}, '
        '{"role": "user", "content": "é"}],"model":"m"}'
    )


def test_text_that_is_not_the_document_is_refused() -> None:
    import pytest

    with pytest.raises(SpliceError):
        spliced('{"a": [1, 2]}', {"a": [1, 2, 3]}, {"a": [1]})


@settings(max_examples=300)
@given(st.data())
def test_a_changed_string_keeps_its_common_start_as_spelled(data: Any) -> None:
    """A tool result edited in place (a refresh appended, a line added, a marker): the
    characters both versions begin with stay spelled as the client spelled them."""
    old = data.draw(st.text(max_size=30))
    writer = Writer(data.draw)
    writer.value({"content": old, "n": 1})
    text = "".join(writer.parts)
    new = data.draw(changed(old))
    out = spliced(text, {"content": old, "n": 1}, {"content": new, "n": 1})
    assert json.loads(out) == {"content": new, "n": 1}
    start, end = writer.spans[("content",)]
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    after = json.JSONDecoder().raw_decode(out, start)[1]
    assert out[:start] == text[:start] and out[after:] == text[end:]
    # the original's spelling of those first characters: its shortest start that decodes
    # to them (an escape is never cut)
    units = re.findall(r'\\u[0-9a-fA-F]{4}|\\.|[^"]', text[start + 1 : end - 1], re.DOTALL)
    spelled = ""
    for unit in units:
        if len(json.loads(f'"{spelled}"')) >= same:
            break
        spelled += unit
    assert out[start + 1 :].startswith(spelled)


def test_an_object_with_a_repeated_key_is_written_anew_whole() -> None:
    """JSON lets a key repeat (the last one counts): that object is written anew, and
    nothing around it moves."""
    text = '[1, {"a": 1, "a": 2, "b": "x"}, "tail"]'
    old = json.loads(text)
    new = copy.deepcopy(old)
    new[1]["b"] = "y"
    out = spliced(text, old, new)
    assert json.loads(out) == new
    assert out.startswith("[1, {") and out.endswith('}, "tail"]') and out.count('"a"') == 1
