"""Current file contents ("current" is the disk), read cheaply and never trusted stale.

Every request checks the files it answers about: ``stat`` first, and the bytes (hashed)
only when the stat changed. A stat can lie when two writes land within one tick of the
file system's clock with the same size (the "racy git" problem), so a cached entry whose
mtime is too close to the moment it was read is re-hashed instead of trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat as stat_mod
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fresh_ls.core.parsing import DefinitionIndex
from fresh_ls.core.paths import split_also
from fresh_ls.core.symbols import Definition
from fresh_ls.core.text import sha256_bytes, split_lines, split_lines_after

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
        raise SourceError("unreadable", _too_large(path, len(data)))
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise SourceError("unreadable", f"{path} looks binary (it holds NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(
            "unreadable", f"{path} is not UTF-8 text (byte {exc.start} is invalid)"
        ) from None


def _too_large(path: str, size: int) -> str:
    return (
        f"{path} is {size} bytes, over the limit of {MAX_FILE_BYTES} bytes; "
        "read the part you need with a ranged tool instead"
    )


def _read_at_most(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes of an open file: a file that grows while read cannot make one
    request read (and hash, and parse) more than the size limit allows."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


#: Flags of the final open: never follow a symlink, never block on a FIFO or a device.
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_OPEN_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def _walk_open(root_fd: int, parts: list[str]) -> int:
    """Open ``parts`` below ``root_fd`` one component at a time, following no symlink.

    Each component is opened relative to the directory opened before it, so no swap of a
    component for a symlink between a check and the read can lead the read outside the
    root: the swapped component fails to open instead (ELOOP / ENOTDIR).
    """
    dir_fd = root_fd
    try:
        for name in parts[:-1]:
            next_fd = os.open(name, _OPEN_DIR, dir_fd=dir_fd)
            if dir_fd != root_fd:
                os.close(dir_fd)
            dir_fd = next_fd
        return os.open(parts[-1], _OPEN_FILE, dir_fd=dir_fd)
    finally:
        if dir_fd != root_fd:
            os.close(dir_fd)


def open_in_root(root: Path, rel_path: str) -> int:
    """A read-only fd of ``root/rel_path``, or SourceError.

    A path whose components are plain directories and a plain file opens directly. When a
    component is a symlink now, its real path decides: outside the root it is
    ``unreadable`` (its content is never read); inside, the real path is opened the same
    symlink-free way, so what is read is what was checked.
    """
    parts = [p for p in rel_path.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise SourceError("unreadable", f"{rel_path} is not a path inside the root")
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceError("unreadable", f"the root cannot be opened: {exc.strerror}") from None
    try:
        for attempt in range(2):
            try:
                return _walk_open(root_fd, parts)
            except FileNotFoundError:
                raise SourceError("missing", f"{rel_path} does not exist") from None
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or attempt:
                    raise SourceError(
                        "unreadable", f"{rel_path} cannot be read: {exc.strerror}"
                    ) from None
            # A component is a symlink (or not a directory): where does it lead now?
            real = os.path.realpath(os.path.join(root, *parts))
            try:
                rel_real = Path(real).relative_to(os.path.realpath(root))
            except ValueError:
                raise SourceError(
                    "unreadable",
                    f"{rel_path} now resolves outside the root (through a symlink); it is not read",
                ) from None
            new_parts = list(rel_real.parts)
            if not new_parts or new_parts == parts:
                raise SourceError("unreadable", f"{rel_path} is not a regular file")
            parts = new_parts
        raise AssertionError("unreachable")
    finally:
        os.close(root_fd)


class _Directories:
    """The directories of one batch of reads, each opened once, the no-follow way.

    A request checks every file it answers about; 100 files opened through
    ``open_in_root`` cost 300 opens (the root, each directory, the file). Within one batch
    (one request's moment) each directory is opened once, relative to its parent and
    following no symlink, exactly as ``_walk_open`` opens it, so a file whose stat is
    unchanged costs one ``fstatat`` that follows no symlink. The fds live only for the
    batch: a directory swapped for another (or for a symlink) after it closes is seen by
    the next batch's walk."""

    def __init__(self) -> None:
        self.fds: dict[tuple[str, tuple[str, ...]], int] = {}

    def fd(self, root: Path, parts: tuple[str, ...]) -> int:
        """The open directory ``root/parts``; OSError when it cannot be opened that way."""
        key = (str(root), parts)
        found = self.fds.get(key)
        if found is not None:
            return found
        if parts:
            parent = self.fd(root, parts[:-1])
            fd = os.open(parts[-1], _OPEN_DIR, dir_fd=parent)
        else:
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        self.fds[key] = fd
        return fd

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


#: How many split paths ``SourceTable._stat`` keeps.
_WHERE_KEPT = 1 << 16


@dataclass(slots=True)
class _Cached:
    stat_key: tuple[int, int, int, int]
    read_at: float
    source: Source


class SourceTable:
    """The current version of every file anyone asked about, checked against the disk."""

    def __init__(
        self, root: Path, index: DefinitionIndex | None = None, also: tuple[Path, ...] = ()
    ) -> None:
        self.root = root
        #: ``--also`` folders: their files are named by absolute path (``paths.split_also``)
        self.also = also
        self.index = index or DefinitionIndex()
        self._cache: dict[str, _Cached] = {}
        self._batch: _Directories | None = None
        #: each path asked about, split once: (root, its directories, its name)
        self._where: dict[str, tuple[Path, tuple[str, ...], str]] = {}

    def __len__(self) -> int:
        return len(self._cache)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Reads inside share their directories' fds (``_Directories``): an unchanged file
        is then one ``fstatat``. Batches nest: an inner one is the outer one."""
        if self._batch is not None:
            yield
            return
        self._batch = _Directories()
        try:
            yield
        finally:
            self._batch.close()
            self._batch = None

    def stat_keys(self, rel_paths: Iterable[str]) -> dict[str, tuple[int, int, int, int]]:
        """The stat of each of ``rel_paths`` that is a regular file, as ``get`` keys it,
        taken the batch's way (one ``fstatat`` each, following no symlink); a path that
        cannot be stat-ed that way is left out."""
        out = {}
        with self.batch():
            for rel_path in rel_paths:
                st = self._stat(rel_path)
                if st is not None and stat_mod.S_ISREG(st.st_mode):
                    out[rel_path] = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
        return out

    def _stat(self, rel_path: str) -> os.stat_result | None:
        assert self._batch is not None
        where = self._where.get(rel_path)
        if where is None:
            if len(self._where) >= _WHERE_KEPT:
                self._where.clear()  # any path a client names: bounded, re-learnt at once
            inside = split_also(self.also, rel_path)
            root, rel = inside if inside is not None else (self.root, rel_path)
            parts = rel.split("/")
            where = self._where[rel_path] = (root, tuple(parts[:-1]), parts[-1])
        root, directories, name = where
        try:
            return os.stat(name, dir_fd=self._batch.fd(root, directories), follow_symlinks=False)
        except (OSError, ValueError):
            return None

    def _unchanged(self, rel_path: str, cached: _Cached) -> bool:
        """Whether the batch's directories show ``rel_path`` as the cached stat, not
        racy: one ``fstatat`` that follows no symlink. False whenever anything differs or
        fails (a component that is a symlink now, a file that is one, a missing one): the
        full read decides, with its errors."""
        st = self._stat(rel_path)
        return (
            st is not None
            and stat_mod.S_ISREG(st.st_mode)
            and cached.stat_key == (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
            and cached.read_at - st.st_mtime_ns / 1e9 > RACY_WINDOW_S
        )

    def unchanged(self, rel_paths: Iterable[str]) -> dict[str, Source]:
        """Of ``rel_paths``, those a batch's ``fstatat`` shows as cached (``_unchanged``),
        with their cached version: what ``get`` would answer for each, in one loop. The
        others are left out, for ``get`` to read."""
        assert self._batch is not None
        out = {}
        for rel_path in rel_paths:
            cached = self._cache.get(rel_path)
            if cached is not None and self._unchanged(rel_path, cached):
                out[rel_path] = cached.source
        return out

    def get(self, rel_path: str) -> Source:
        """The file as it is on disk now, or SourceError (missing / unreadable).

        Containment is checked on every read, not only when a path was first resolved: a
        file (or a parent directory) swapped for a symlink that leaves the root since is
        ``unreadable``, and its foreign content is never read (see ``open_in_root``).
        """
        cached = self._cache.get(rel_path)
        if cached is not None and self._batch is not None and self._unchanged(rel_path, cached):
            return cached.source
        try:
            inside = split_also(self.also, rel_path)
            fd = open_in_root(*inside) if inside is not None else open_in_root(self.root, rel_path)
        except SourceError as exc:
            if exc.reason == "missing":
                self._cache.pop(rel_path, None)
            raise
        try:
            try:
                st = os.fstat(fd)
            except OSError as exc:
                raise SourceError(
                    "unreadable", f"{rel_path} cannot be read: {exc.strerror}"
                ) from None
            if not stat_mod.S_ISREG(st.st_mode):
                raise SourceError("unreadable", f"{rel_path} is not a regular file")
            key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
            if (
                cached is not None
                and cached.stat_key == key
                and cached.read_at - st.st_mtime_ns / 1e9 > RACY_WINDOW_S
            ):
                return cached.source
            if st.st_size > MAX_FILE_BYTES:
                raise SourceError("unreadable", _too_large(rel_path, st.st_size))
            read_at = time.time()
            try:
                data = _read_at_most(fd, MAX_FILE_BYTES + 1)
            except OSError as exc:
                raise SourceError(
                    "unreadable", f"{rel_path} cannot be read: {exc.strerror}"
                ) from None
        finally:
            os.close(fd)
        sha = sha256_bytes(data)
        if cached is not None and cached.source.sha256 == sha:
            source = cached.source
        else:
            text = decode_source(rel_path, data)
            defs = self.index.definitions(rel_path, data, sha)
            # An edited file is split again only between the lines it kept at each end.
            lines = (
                split_lines(text)
                if cached is None
                else split_lines_after(cached.source.text, cached.source.lines, text)
            )
            source = Source(rel_path, text, sha, len(data), defs, lines)
        self._cache[rel_path] = _Cached(key, read_at, source)
        return source

    async def prepare(self, rel_paths: Iterable[str]) -> None:
        """Parse, in a worker thread, what the next ``get`` of these files would parse on
        the caller's (the event loop's) thread: a big or pathological file then costs
        the request that names it a wait, and every other client nothing.

        Only the disk and the definition index (thread-safe) are touched there; the
        table itself stays the event loop's. A file whose stat matches the cached one is
        skipped without a read; errors are left for ``get`` to report."""
        known = {}
        for rel in rel_paths:
            cached = self._cache.get(rel)
            known[rel] = cached.stat_key if cached is not None else None
        if known:
            await asyncio.to_thread(self._prepare, known)

    def _prepare(self, known: dict[str, tuple[int, int, int, int] | None]) -> None:
        for rel, stat_key in known.items():
            try:
                fd = open_in_root(self.root, rel)
            except SourceError:
                continue
            try:
                st = os.fstat(fd)
                key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
                if key == stat_key or not stat_mod.S_ISREG(st.st_mode):
                    continue
                if st.st_size > MAX_FILE_BYTES:
                    continue
                data = _read_at_most(fd, MAX_FILE_BYTES + 1)
            except OSError:
                continue
            finally:
                os.close(fd)
            sha = sha256_bytes(data)
            if self.index.has(rel, sha):
                continue
            try:
                decode_source(rel, data)
            except SourceError:
                continue
            self.index.definitions(rel, data, sha)

    def peek(self, rel_path: str) -> Source | None:
        """The last version read, without touching the disk (for change attribution)."""
        cached = self._cache.get(rel_path)
        return cached.source if cached else None

    def paths(self) -> list[str]:
        return list(self._cache)
