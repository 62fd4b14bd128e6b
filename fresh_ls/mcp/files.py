"""Writing a file only if it is still what the guard checked, atomically.

The guard (``fresh/checkEdit``) judges the bytes on disk at the moment of the check. Between
that moment and the write another process may change the file; so the new content goes to a
temp file in the same directory (``os.replace`` is atomic only within one file system), the
file is read again just before the replace, and the write is abandoned when those bytes are
not the ones the edit was computed from. Writers that go through this server also hold
``write.lock`` in the state dir for the whole check-and-write, so two agents' edits of one
function are decided one after the other, never both against the same old text. A process
that bypasses the tools can still write inside the last microseconds; the next check sees it.

Only regular files are read, and their type is taken from the open descriptor (opened
non-blocking): a FIFO would hang the server on its read, a directory would raise. A file
over the server's size limit is never read whole; a range of its lines is read in chunks.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from fresh_ls.core.sources import MAX_FILE_BYTES

WRITE_LOCK_FILE = "write.lock"
#: Files up to this size are read whole (the fresh-ls server's own limit: it tracks no
#: larger file); a larger one is read in ranges, line by line, never whole into memory.
MAX_WHOLE_BYTES = MAX_FILE_BYTES
#: The longest line a ranged read of a large file shows.
MAX_LINE_BYTES = 1 << 20
_CHUNK = 1 << 20
#: Never follow a final symlink (paths arrive resolved), never block on a FIFO.
_OPEN = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class FileRefused(Exception):
    """The path is not a regular file, or too large to read whole: a clear message, never
    a hang (a FIFO) or a traceback (a directory)."""


class TooLarge(FileRefused):
    """A regular file over the size limit of a whole read (its ranges stay readable)."""


def _what(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


@contextlib.contextmanager
def open_regular(path: Path) -> Iterator[tuple[int, int] | None]:
    """(fd, size) of the regular file at ``path``, None when it does not exist, or
    FileRefused. Opened non-blocking so a FIFO cannot stall the open; its type is taken
    from the open fd, so what is read is what was checked."""
    try:
        fd = os.open(path, _OPEN)
    except FileNotFoundError:
        yield None
        return
    except OSError as exc:
        raise FileRefused(f"cannot be opened: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(f"is {_what(st.st_mode)}, not a regular file; only files can be used")
        os.set_blocking(fd, True)
        yield fd, st.st_size
    finally:
        os.close(fd)


def _read_fd(fd: int, limit: int) -> bytes:
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_bytes(path: Path, limit: int = MAX_WHOLE_BYTES) -> bytes | None:
    """The regular file's bytes, or None when it does not exist; FileRefused when it is
    not a regular file or holds more than ``limit`` bytes."""
    with open_regular(path) as opened:
        if opened is None:
            return None
        fd, size = opened
        if size > limit:
            raise TooLarge(f"is {size} bytes, over the limit of {limit} bytes fresh-ls tracks")
        data = _read_fd(fd, limit + 1)
        if len(data) > limit:
            raise TooLarge(f"grew past the limit of {limit} bytes fresh-ls tracks while read")
        return data


def read_line_range(path: Path, first: int, last: int) -> tuple[list[bytes], int] | None:
    """Lines ``first..last`` (1-based, inclusive, each with its LF) of a regular file of
    any size, and how many lines it has; None when it does not exist. Read in chunks:
    memory holds the lines asked for, never the file."""
    with open_regular(path) as opened:
        if opened is None:
            return None
        fd, _ = opened
        kept: list[bytes] = []
        line_no = 1  # the line the bytes after the last LF belong to
        partial = b""  # those bytes, kept only when that line is asked for
        open_line = False  # bytes came after the last LF
        while chunk := os.read(fd, _CHUNK):
            pieces = chunk.split(b"\n")
            for piece in pieces[:-1]:
                if first <= line_no <= last:
                    kept.append(_bounded(partial + piece + b"\n", line_no))
                partial = b""
                line_no += 1
            if first <= line_no <= last:
                partial = _bounded(partial + pieces[-1], line_no)
            open_line = bool(pieces[-1])
        if open_line:  # a last line without LF is a line
            if first <= line_no <= last:
                kept.append(partial)
            return kept, line_no
        return kept, line_no - 1


def _bounded(line: bytes, line_no: int) -> bytes:
    if len(line) > MAX_LINE_BYTES:
        raise FileRefused(f"line {line_no} is longer than {MAX_LINE_BYTES} bytes")
    return line


def replace_if_unchanged(path: Path, data: bytes, expect: bytes | None) -> bool:
    """Write ``data`` to ``path`` atomically when the file still holds ``expect`` (None:
    still does not exist); False, and nothing written, otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".fresh-ls.tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        if read_bytes(path) != expect:
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
        return True
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.asynccontextmanager
async def write_lock(state_dir: Path) -> AsyncIterator[None]:
    """Exclusive among the writers of this root that use it (an ``flock``, released by
    the kernel if the holder dies)."""
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(state_dir / WRITE_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(0.01)
        yield
    finally:
        os.close(fd)  # closing releases the lock
