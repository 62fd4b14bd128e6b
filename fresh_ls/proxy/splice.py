"""Writing a changed request body back into the client's own bytes.

A prompt cache keyed on bytes serves the longest prefix a request shares with the one
before it. Serialising a rewritten body anew spells every value the serialiser's way
(escapes, spacing, key order, number forms), so the first rewrite of a conversation would
move every byte of it, once per run. ``spliced`` keeps the client's text instead: it walks
the original document alongside the object it parsed to and the rewritten object, and
replaces only the values that differ; everything between them is the client's, byte for byte.

- Equal values (``==``, so compared in C; a rewrite shares the untouched parts of the
  original, which compare by identity) are skipped with the decoder's own scanner.
- In an object, a changed member's value is replaced, a removed member is cut out with its
  comma, a new member goes before the closing brace.
- In an array, elements are paired by index; new elements go before the closing bracket,
  removed ones at the end are cut out.
- A string the rewrite changed keeps its unchanged start as the client spelled it (a
  refresh appended to a tool result leaves the result's own bytes in place): only the rest,
  up to the closing quote, is written, JSON-escaped.

What is written is ``json.dumps`` with ``ensure_ascii=False`` (ASCII escapes where a lone
surrogate could not be encoded): the same value is spelled the same way on every request.
``True == 1`` in Python, so a rewrite that turns a boolean into a number is not seen; the
rewriters never do.
"""

from __future__ import annotations

import json
import re
from typing import Any, AnyStr

_WS = re.compile(r"[ \t\n\r]*")
#: One escape in a JSON string: ``\\uXXXX`` (a surrogate pair as one) or ``\\x``.
_ESCAPE = re.compile(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", re.DOTALL
)
_DECODER = json.JSONDecoder()


class SpliceError(ValueError):
    """The text is not the document the object was parsed from."""


def spliced(text: str, old: Any, new: Any) -> str:
    """``text`` (a JSON document that parses to ``old``) changed so that it parses to
    ``new``, every character outside the values that differ kept as it was."""
    if old is new or _same(old, new):
        return text
    edits: list[tuple[int, int, str]] = []
    start = _WS.match(text, 0).end()  # type: ignore[union-attr]
    end = _value(text, start, old, new, edits)
    if _WS.match(text, end).end() != len(text):  # type: ignore[union-attr]
        raise SpliceError(f"text after the document at {end}")
    return _apply(text, edits)


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    parts: list[str] = []
    at = 0
    for start, end, replacement in edits:
        if start < at:
            raise SpliceError(f"edits overlap at {start}")
        parts.append(text[at:start])
        parts.append(replacement)
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def dumps(value: Any) -> str:
    """A value as ``spliced`` writes it."""
    out = json.dumps(value, ensure_ascii=False)
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only an escape can carry it
        out = json.dumps(value)
    return out


def _skip(text: str, pos: int) -> int:
    try:
        return int(_DECODER.raw_decode(text, pos)[1])
    except ValueError as exc:
        raise SpliceError(str(exc)) from None


def _ws(text: str, pos: int) -> int:
    if text[pos : pos + 1] not in _BLANKS:  # most often: no regex call at all
        return pos
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


_BLANKS = frozenset(" \t\n\r")


def _expect(text: str, pos: int, char: str) -> int:
    if text[pos : pos + 1] != char:
        raise SpliceError(f"expected {char!r} at {pos}")
    return pos + 1


def _value(text: str, pos: int, old: Any, new: Any, edits: list[tuple[int, int, str]]) -> int:
    """Record the edits that turn the value at ``pos`` (``old``) into ``new``; the end of
    the value in ``text``."""
    if old is new or _same(old, new):
        return _skip(text, pos)
    if isinstance(old, dict) and isinstance(new, dict) and text[pos : pos + 1] == "{":
        return _object(text, pos, old, new, edits)
    if isinstance(old, list) and isinstance(new, list) and text[pos : pos + 1] == "[":
        return _array(text, pos, old, new, edits)
    end = _skip(text, pos)
    if isinstance(old, str) and isinstance(new, str):
        _string(text, pos, end, old, new, edits)
    else:
        edits.append((pos, end, dumps(new)))
    return end


class _Run:
    """The members (or elements) of one object (or array) as they are walked: where the
    last one ended, and whether any is kept, so a removed one is cut with the right comma."""

    def __init__(self, text: str, edits: list[tuple[int, int, str]]) -> None:
        self.text = text
        self.edits = edits
        self.last_end: int | None = None
        self.kept = False

    def keep(self, end: int) -> None:
        self.last_end = end
        self.kept = True

    def remove(self, start: int, end: int) -> None:
        """Cut ``text[start:end]``: from the end of the one before when one before is
        kept; else up to the start of the next one (its comma with it)."""
        if self.kept:
            assert self.last_end is not None
            self.edits.append((self.last_end, end, ""))
        else:
            after = _ws(self.text, end)
            if self.text[after : after + 1] == ",":
                end = _ws(self.text, after + 1)
            self.edits.append((start, end, ""))
        self.last_end = end

    def add(self, close: int, values: list[str]) -> None:
        """New members or elements: after the last one kept, else before the close."""
        if not values:
            return
        if self.kept:
            assert self.last_end is not None
            self.edits.append((self.last_end, self.last_end, ", " + ", ".join(values)))
        else:
            self.edits.append((close, close, ", ".join(values)))


def _object(
    text: str, pos: int, old: dict[str, Any], new: dict[str, Any], edits: list[tuple[int, int, str]]
) -> int:
    mine: list[tuple[int, int, str]] = []
    run = _Run(text, mine)
    seen: set[str] = set()
    at = _ws(text, pos + 1)
    while text[at : at + 1] != "}":
        if seen:
            at = _ws(text, _expect(text, at, ","))
        start = at
        key, at = _key(text, at)
        at = _ws(text, _expect(text, _ws(text, at), ":"))
        if key in seen:  # a repeated key (the last one counts): too rare to splice
            end = _skip(text, pos)
            edits.append((pos, end, dumps(new)))
            return end
        seen.add(key)
        if key in new:
            at = _value(text, at, old[key], new[key], mine)
            run.keep(at)
        else:
            at = _skip(text, at)
            run.remove(start, at)
        at = _ws(text, at)
    run.add(at, [f"{dumps(k)}: {dumps(v)}" for k, v in new.items() if k not in seen])
    edits.extend(mine)
    return at + 1


def _key(text: str, at: int) -> tuple[str, int]:
    if text[at : at + 1] != '"':
        raise SpliceError(f"expected a key at {at}")
    key, end = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
    return str(key), int(end)


def _array(
    text: str, pos: int, old: list[Any], new: list[Any], edits: list[tuple[int, int, str]]
) -> int:
    mine: list[tuple[int, int, str]] = []
    run = _Run(text, mine)
    at = _ws(text, pos + 1)
    index = 0
    while text[at : at + 1] != "]":
        if index:
            at = _ws(text, _expect(text, at, ","))
        if index >= len(old):
            raise SpliceError(f"the array at {pos} holds more than {len(old)} elements")
        start = at
        if index < len(new):
            at = _value(text, at, old[index], new[index], mine)
            run.keep(at)
        else:
            at = _skip(text, at)
            run.remove(start, at)
        index += 1
        at = _ws(text, at)
    if index != len(old):
        raise SpliceError(f"the array at {pos} does not hold {len(old)} elements")
    run.add(at, [dumps(v) for v in new[len(old) :]])
    edits.extend(mine)
    return at + 1


def _string(
    text: str, start: int, end: int, old: str, new: str, edits: list[tuple[int, int, str]]
) -> None:
    """Replace the string ``text[start:end]`` (``old``) by ``new``, keeping the part both
    begin with as it is spelled."""
    same = common_prefix(old, new)
    if same == 0:
        edits.append((start, end, dumps(new)))
        return
    at = _raw_offset(text, start + 1, end - 1, same)
    edits.append((at, end - 1, dumps(new[same:])[1:-1]))


def common_prefix(a: AnyStr, b: AnyStr) -> int:
    """The length of the longest common prefix of two strings or byte strings (halving:
    each step one C comparison)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _raw_offset(text: str, start: int, end: int, chars: int) -> int:
    """Where in ``text[start:end]`` (a string's spelling, quotes left out) the first
    ``chars`` characters of its value end."""
    if "\\" not in text[start:end]:
        return start + chars
    at = start  # position in text
    count = 0  # characters of the value before ``at``
    for match in _ESCAPE.finditer(text, start, end):
        plain = match.start() - at
        if count + plain >= chars:
            return at + (chars - count)
        count += plain + 1
        at = match.end()
        if count >= chars:
            return at
    return at + (chars - count)
