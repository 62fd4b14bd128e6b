"""Current file contents ("current" is the disk), read cheaply and never trusted stale.

Every request checks the files it answers about: ``stat`` first, and the bytes (hashed)
only when the stat changed. A stat can lie when two writes land within one tick of the
file system's clock with the same size (the "racy git" problem), so a cached entry whose
mtime is too close to the moment it was read is re-hashed instead of trusted.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time
from dataclasses import dataclass, field
from pathlib import Path

from fresh_ls.core.parsing import DefinitionIndex
from fresh_ls.core.symbols import Definition
from fresh_ls.core.text import sha256_bytes, split_lines

#: Larger files are refused as unreadable (-32011): an agent's view of them is a slice,
#: and hashing and parsing them on every request would stall every client.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: A cached stat whose mtime is within this many seconds of the read is not trusted.
RACY_WINDOW_S = 2.0
#: How much of a file is scanned for a NUL byte to call it binary.
BINARY_SNIFF_BYTES = 8192


class SourceError(Exception):
    """A file that cannot serve as a source; ``reason`` is ``missing`` or ``unreadable``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(slots=True)
class Source:
    """One version of a file: its text split into contract lines, and its definitions."""

    path: str
    text: str
    sha256: str
    size: int
    definitions: list[Definition] | None
    lines: list[str] = field(default_factory=list)

    @staticmethod
    def from_text(path: str, text: str, index: DefinitionIndex | None = None) -> Source:
        """Build a source from a string (tests, editor buffers, the demo)."""
        data = text.encode("utf-8")
        sha = sha256_bytes(data)
        defs = (index or _DEFAULT_INDEX).definitions(path, data, sha)
        return Source(path, text, sha, len(data), defs, split_lines(text))

    @property
    def line_count(self) -> int:
        return len(self.lines)


_DEFAULT_INDEX = DefinitionIndex()


def decode_source(path: str, data: bytes) -> str:
    """The text of a file, or SourceError('unreadable') for binary or oversized content."""
    if len(data) > MAX_FILE_BYTES:
        raise SourceError(
            "unreadable",
            f"{path} is {len(data)} bytes, over the limit of {MAX_FILE_BYTES} bytes; "
            "read the part you need with a ranged tool instead",
        )
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise SourceError("unreadable", f"{path} looks binary (it holds NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(
            "unreadable", f"{path} is not UTF-8 text (byte {exc.start} is invalid)"
        ) from None


@dataclass(slots=True)
class _Cached:
    stat_key: tuple[int, int, int, int]
    read_at: float
    source: Source


class SourceTable:
    """The current version of every file anyone asked about, checked against the disk."""

    def __init__(self, root: Path, index: DefinitionIndex | None = None) -> None:
        self.root = root
        self.index = index or DefinitionIndex()
        self._cache: dict[str, _Cached] = {}

    def __len__(self) -> int:
        return len(self._cache)

    def get(self, rel_path: str) -> Source:
        """The file as it is on disk now, or SourceError (missing / unreadable)."""
        abs_path = self.root / rel_path
        try:
            st = os.stat(abs_path)
        except FileNotFoundError:
            self._cache.pop(rel_path, None)
            raise SourceError("missing", f"{rel_path} does not exist") from None
        except OSError as exc:
            raise SourceError("unreadable", f"{rel_path} cannot be read: {exc.strerror}") from None
        if not stat_mod.S_ISREG(st.st_mode):
            raise SourceError("unreadable", f"{rel_path} is not a regular file")
        key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
        cached = self._cache.get(rel_path)
        if (
            cached is not None
            and cached.stat_key == key
            and cached.read_at - st.st_mtime_ns / 1e9 > RACY_WINDOW_S
        ):
            return cached.source
        read_at = time.time()
        try:
            data = abs_path.read_bytes()
        except FileNotFoundError:
            self._cache.pop(rel_path, None)
            raise SourceError("missing", f"{rel_path} does not exist") from None
        except OSError as exc:
            raise SourceError("unreadable", f"{rel_path} cannot be read: {exc.strerror}") from None
        sha = sha256_bytes(data)
        if cached is not None and cached.source.sha256 == sha:
            source = cached.source
        else:
            text = decode_source(rel_path, data)
            defs = self.index.definitions(rel_path, data, sha)
            source = Source(rel_path, text, sha, len(data), defs, split_lines(text))
        self._cache[rel_path] = _Cached(key, read_at, source)
        return source

    def peek(self, rel_path: str) -> Source | None:
        """The last version read, without touching the disk (for change attribution)."""
        cached = self._cache.get(rel_path)
        return cached.source if cached else None

    def paths(self) -> list[str]:
        return list(self._cache)
