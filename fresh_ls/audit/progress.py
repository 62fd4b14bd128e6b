"""A one-line progress bar on stderr, for audits that read many files.

Shown only on a terminal and only past a handful of files: a log file or a CI job gets no
carriage-return noise, and a quick audit of two runs no flicker.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

MIN_FILES = 6
_WIDTH = 24


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.enabled = enabled and total >= MIN_FILES and bool(isatty())

    def tick(self, path: Path) -> None:
        self.done += 1
        if not self.enabled:
            return
        filled = _WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (_WIDTH - filled)
        name = f"{path.parent.name}/{path.name}" if path.parent.name else path.name
        name = name if len(name) <= 40 else "…" + name[-39:]
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} files  {name:<40}")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * (_WIDTH + 60) + "\r")
            self.stream.flush()
