"""Where an agent's paths lead: from a path as the agent wrote it to a path in the root.

An agent names files by its own view of the root (``/testbed`` in a container, a symlinked
temp dir, a relative path from its working directory). The shell bridge and the proxy
both turn those into root-relative paths, and read the current text of a file the agent
named (to tell what a command such as ``sed -n`` showed); both do it here.
"""

from __future__ import annotations

import os
import posixpath
import stat
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
    #: ``--also`` folders (resolved): a file there is named by its absolute real path
    also: tuple[Path, ...] = ()

    def rel(self, path: str, cwd: str | None = None) -> str | None:
        """The root-relative path of ``path`` as the agent wrote it (a file of an
        ``also`` folder: its absolute real path, as the server names it), or None when it
        is outside every root."""
        full = posixpath.normpath(posixpath.join(cwd or self.cwd, path))
        for root in self.spellings:
            prefix = root.rstrip("/") + "/"
            if full.startswith(prefix):
                return full[len(prefix) :]
        return self._through_links(full)

    def absolute(self, path: str, cwd: str | None = None) -> str:
        """``path`` as the agent wrote it, made absolute against its working directory."""
        return posixpath.normpath(posixpath.join(cwd or self.cwd, path))

    def _through_links(self, full: str) -> str | None:
        """A path of no known spelling whose real location (symlinks followed, as the
        server resolves it: PROTOCOL.md v1.3) is inside the root: ``/testbed/x.py`` when
        ``/testbed`` links to the root; or inside an ``also`` folder. None when it leads
        anywhere else."""
        if not full.startswith("/"):
            return None
        real = Path(os.path.realpath(full))
        if real != self.root and real.is_relative_to(self.root):
            return real.relative_to(self.root).as_posix()
        if any(real != a and real.is_relative_to(a) for a in self.also):
            return real.as_posix()
        return None

    def text_of(self, path: str, cwd: str | None) -> str | None:
        """The file's current text (UTF-8), or None outside the root or unreadable.

        Read the way the server reads a file (``core.sources``): opened without following
        a symlink out of the root and without blocking (a FIFO or a device is no file), and
        only when it is a regular file no larger than a view may be; so a ``tail -n 3`` of
        a 300 MB log or of a FIFO the agent made costs a ``stat``, not the whole proxy."""
        rel = self.rel(path, cwd)
        if rel is None:
            return None
        # deferred: it loads the parser
        from fresh_ls.core.sources import MAX_FILE_BYTES, SourceError, open_in_root

        try:
            fd = open_in_root(self.root, rel)
        except SourceError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                return None
            chunks: list[bytes] = []
            size = 0
            while size <= MAX_FILE_BYTES and (chunk := os.read(fd, 1 << 20)):
                chunks.append(chunk)
                size += len(chunk)
        except OSError:
            return None
        finally:
            os.close(fd)
        if size > MAX_FILE_BYTES:
            return None  # it grew while read
        data = b"".join(chunks)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None
