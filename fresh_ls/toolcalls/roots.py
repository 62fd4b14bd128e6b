"""Where an agent's paths lead: from a path as the agent wrote it to a path in the root.

An agent names files by its own view of the root (``/testbed`` in a container, a symlinked
temp dir, a relative path from its working directory). The shell bridge and the proxy
both turn those into root-relative paths, and read the current text of a file the agent
named (to tell what a command such as ``sed -n`` showed); both do it here.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path


@dataclass
class AgentRoots:
    #: The root on this machine (resolved).
    root: Path
    #: Every spelling of the root an agent's absolute path may start with.
    spellings: list[str]
    #: The directory the agent's relative paths start from.
    cwd: str

    def rel(self, path: str, cwd: str | None = None) -> str | None:
        """The root-relative path of ``path`` as the agent wrote it, or None outside."""
        full = posixpath.normpath(posixpath.join(cwd or self.cwd, path))
        for root in self.spellings:
            prefix = root.rstrip("/") + "/"
            if full.startswith(prefix):
                return full[len(prefix) :]
        return None

    def text_of(self, path: str, cwd: str | None) -> str | None:
        """The file's current text (UTF-8), or None outside the root or unreadable."""
        rel = self.rel(path, cwd)
        if rel is None:
            return None
        try:
            return (self.root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
