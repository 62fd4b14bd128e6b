"""Line edits from a unified diff an agent applied with ``git apply`` or ``patch``.

When the patch text is in the transcript (agents write it with a heredoc first), its hunks say
exactly which lines changed, so there is no need to give up on the whole file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fresh_ls.toolcalls.lines import LineEdit

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class FilePatch:
    path: str
    edits: list[LineEdit] = field(default_factory=list)


def _strip_prefix(path: str, strip: int) -> str:
    path = path.split("\t")[0].strip()
    parts = path.split("/")
    return "/".join(parts[strip:]) if len(parts) > strip else parts[-1]


class _Runs:
    """Collects the change runs of one file; positions are shifted by earlier runs."""

    def __init__(self, target: FilePatch) -> None:
        self.target = target
        self.offset = 0
        self.start = 0
        self.old = 0
        self.new: list[str | None] = []

    def removed(self, position: int) -> None:
        if not self.old and not self.new:
            self.start = position
        self.old += 1

    def added(self, position: int, text: str) -> None:
        if not self.old and not self.new:
            self.start = position
        self.new.append(text)

    def flush(self) -> None:
        if self.old or self.new:
            first = self.start + self.offset
            self.target.edits.append(LineEdit(first, self.old, self.new, "patch"))
            self.offset += len(self.new) - self.old
        self.old, self.new = 0, []


def parse_patch(text: str, strip: int = 1) -> list[FilePatch] | None:
    """Per-file line edits, in the order to apply them. None when ``text`` has no hunks."""
    patches: list[FilePatch] = []
    runs: _Runs | None = None
    position = 0  # line number in the original file
    for line in text.split("\n"):
        if line.startswith("+++ "):
            if runs:
                runs.flush()
            patch = FilePatch(_strip_prefix(line[4:], strip))
            patches.append(patch)
            runs = _Runs(patch)
            continue
        if runs is None:
            continue
        match = _HUNK.match(line)
        if match:
            runs.flush()
            position = int(match.group(1)) + (1 if match.group(2) == "0" else 0)
            continue
        if line.startswith("--- "):
            runs.flush()
            continue
        kind, content = line[:1], line[1:]
        if kind == " " or (kind == "" and position):
            runs.flush()
            position += 1
        elif kind == "-":
            runs.removed(position)
            position += 1
        elif kind == "+":
            runs.added(position, content)
    if runs:
        runs.flush()
    found = [p for p in patches if p.edits]
    return found or None
