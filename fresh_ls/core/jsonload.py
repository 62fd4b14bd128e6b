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
#: may read as a float, since it reads integers only up to 64 bits) is then one substring
#: search away. Two C passes, a fraction of the parse; a hit is read the standard way.
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_RUN = b"0" * 19


def loads(data: str | bytes) -> Any:
    """``json.loads(data)``, through orjson where that gives the same object."""
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: only the standard way reads it
            return json.loads(data)
    else:
        raw = data
    if _LONG_RUN in raw.translate(_DIGITS):
        return json.loads(data)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(data)
