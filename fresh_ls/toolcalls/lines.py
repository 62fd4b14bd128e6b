"""Two shapes every reader of tool calls shares: a view's open end and a line edit.

They live here, not in ``fresh_ls.audit``, so that reading one tool call (a hook, the
proxy) does not import the whole audit package with them.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The last line of a view that runs "to the end of the file" when the file length is unknown.
END = 1 << 40


@dataclass
class LineEdit:
    """Lines ``first .. first+old_count-1`` became ``new_lines`` (None: text not known)."""

    first: int
    old_count: int
    new_lines: list[str | None]
    how: str
