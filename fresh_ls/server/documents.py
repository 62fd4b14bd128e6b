"""Editor buffers as LSP describes them: incremental ``didChange`` edits applied by position.

pygls applies changes with ``str.splitlines``, which also breaks at form feeds, U+2028 and
more, so an edit below such a character lands on the wrong line; LSP's own line ends are
only LF, CRLF and CR, and a position's character counts units of the negotiated encoding.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types as lsp

#: The only line ends of LSP positions. ``str.splitlines`` (which pygls uses to apply
#: incremental changes) also breaks at form feeds, U+2028 and more, and so would put an
#: edit below such a character on the wrong line.
_LSP_EOL = re.compile(r"\r\n|\r|\n")


def _offset(text: str, position: lsp.Position, encoding: str) -> int:
    """The index in ``text`` of an LSP position (its character counted in ``encoding``
    units, clamped to the line as LSP says)."""
    start = 0
    for _ in range(position.line):
        m = _LSP_EOL.search(text, start)
        if m is None:
            return len(text)
        start = m.end()
    m = _LSP_EOL.search(text, start)
    end = m.start() if m else len(text)
    i, units = start, 0
    while i < end and units < position.character:
        ch = text[i]
        if encoding == "utf-8":
            units += len(ch.encode("utf-8", "surrogatepass"))
        elif encoding == "utf-32":
            units += 1
        else:
            units += 2 if ord(ch) > 0xFFFF else 1
        i += 1
    return i


def apply_change(text: str, change: Any, encoding: str = "utf-16") -> str:
    """``text`` after one ``didChange`` content change (incremental or whole document)."""
    change_range = getattr(change, "range", None)
    if change_range is None:
        return str(change.text)
    a = _offset(text, change_range.start, encoding)
    b = max(a, _offset(text, change_range.end, encoding))
    return text[:a] + change.text + text[b:]
