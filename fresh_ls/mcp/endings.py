"""Edits of files whatever their line ending: match ``old_text`` by lines, write
``new_text`` in the file's own ending.

A model copies ``old_text`` from a read whose lines it sees without their CR, so in a
CRLF file a multi-line ``old_text`` with LF never occurs byte for byte; and a multi-line
``new_text`` written as given would put LF lines into a CRLF file.
"""

from __future__ import annotations

import re


def ending_of(text: str) -> str | None:
    """The file's own line ending: CRLF when most of its line breaks are CRLF, LF when
    they are not, None when it has none."""
    lf = text.count("\n")
    if lf == 0:
        return None
    return "\r\n" if text.count("\r\n") * 2 > lf else "\n"


def in_ending(text: str, ending: str | None) -> str:
    """``text`` with every line break made ``ending`` (unchanged when None)."""
    if ending is None:
        return text
    return text.replace("\r\n", "\n").replace("\n", ending)


def locate(text: str, old_text: str) -> str | None:
    """The exact text of the one place ``old_text`` occurs by lines (each line break in
    it matching LF or CRLF), or None when it occurs nowhere or more than once that way
    (the guard then says which). An exact occurrence is taken as it is."""
    if old_text in text:
        return old_text
    if "\n" not in old_text:
        return None
    lines = re.split(r"\r?\n", old_text)
    pattern = re.compile(r"\r?\n".join(re.escape(line) for line in lines))
    found = [m.group(0) for m in pattern.finditer(text)]
    return found[0] if len(found) == 1 else None


def replacement(text: str, actual_old: str, new_text: str) -> str:
    """``new_text`` in the ending of the text it replaces (or of the file, when that text
    holds no line break)."""
    ending = ending_of(actual_old) if "\n" in actual_old else ending_of(text)
    return in_ending(new_text, ending)
