"""JSON text read fast, with exactly ``json.loads``'s answer.

The hot reads are large: a proxied model request (200 KB and more, read on every request),
a ``policy: all`` answer (about 0.5 MB, decoded by every client), a message body on the
server. The standard library's decoder takes 1.4 ms on a 226 KiB request on the benchmark
machine; orjson takes a fraction of it.

orjson refuses some text ``json.loads`` accepts (``NaN`` and ``Infinity``, a number past
a double's range, a lone surrogate escape, a byte-order mark, UTF-16 or UTF-32 bytes) and
reads integers beyond 64 bits as floats. Whatever orjson refuses, and any text that holds a
number too long for it to read exactly, is read again by ``json.loads``, so the object is
``json.loads``'s own, and so is the error for text that is no JSON
(``tests/core/test_jsonload.py`` checks both on random text).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

#: Every digit as ``0``, every other byte as a space: a run of 19 digits (an integer orjson
#: may read as a float, since it reads integers only up to 64 bits) is then a substring
#: search away. Two C passes, a fraction of the parse.
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_RUN = b"0" * 19
#: What may stand before a JSON number: a run after anything else (a letter of a hash, a
#: dot, a quote) is inside a string or a fraction, which orjson reads exactly.
_BEFORE_NUMBER = frozenset(b"-:,[ \t\r\n")
#: Every sixth byte of a run of 19 digits: at least three of them (18 bytes hold three).
_STRIDE = 6
_SAMPLED_RUN = b"0" * 3


def _may_hold_a_long_integer(raw: bytes) -> bool:
    """Whether ``raw`` may hold an integer of 19 digits or more outside a string.

    Every sixth byte is looked at first: 19 digits in a row take in three of them in a
    row, so a text without three digits in a row among those (nearly every request: a
    tool result's numbers are short) holds no such run, and the whole text is never
    translated (a sixth of the bytes copied, not all of them twice: 55 µs against 215 µs
    on a 226 KiB request). Where three are digits, the 37 bytes around the first of them
    tell whether a run of 19 is there; only then is the whole text scanned, run by run
    (``_scan_runs``), for the exact answer."""
    sample = raw[::_STRIDE].translate(_DIGITS)
    at = sample.find(_SAMPLED_RUN)
    while at >= 0:
        middle = at * _STRIDE
        # a run of 19 holding ``middle`` has 19 digits in a row within 18 bytes of it
        if raw[max(0, middle - 18) : middle + 19].translate(_DIGITS).find(_LONG_RUN) >= 0:
            return _scan_runs(raw)
        at = sample.find(_SAMPLED_RUN, at + 1)
    return False


def _scan_runs(raw: bytes) -> bool:
    """``_may_hold_a_long_integer`` by a scan of every run of 19 digits or more."""
    digits = raw.translate(_DIGITS)
    at = digits.find(_LONG_RUN)
    while at >= 0:
        start = digits.rfind(b" ", 0, at) + 1  # the run's first digit
        if start == 0 or raw[start - 1] in _BEFORE_NUMBER:
            return True
        end = digits.find(b" ", at)
        if end < 0:
            return False
        at = digits.find(_LONG_RUN, end)
    return False


def loads(data: str | bytes) -> Any:
    """``json.loads(data)``, through orjson where that gives the same object."""
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: only the standard way reads it
            return json.loads(data)
    else:
        raw = data
    if _may_hold_a_long_integer(raw):
        return json.loads(data)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(data)


def loads_utf8(raw: bytes) -> Any:
    """``json.loads(raw.decode("utf-8"))`` (``UnicodeDecodeError`` for bytes that are no
    UTF-8), without the decode and the encode back that ``loads`` of the text costs: orjson
    reads the bytes themselves, and bytes it reads are UTF-8 (it checks them as strictly as
    ``bytes.decode``), so their text would have been encoded back to these very bytes. On a
    226 KiB model request that is two copies of it fewer, on every proxied request. Only
    what orjson refuses, or bytes that may hold a long integer, are decoded and read the
    standard way."""
    if not _may_hold_a_long_integer(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw.decode("utf-8"))


def loads_own(data: str | bytes) -> Any:
    """``json.loads(data)`` for text fresh-ls's own server wrote, whose integers (line
    numbers, sizes, counts) all fit in 64 bits: orjson, and ``json.loads`` for anything
    orjson refuses, without ``loads``'s scan for long integers (on a half-megabyte
    ``policy: all`` answer the scan took a third of the decode)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)
