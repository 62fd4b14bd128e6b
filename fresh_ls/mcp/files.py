"""Writing a file only if it is still what the guard checked, atomically.

The guard (``fresh/checkEdit``) judges the bytes on disk at the moment of the check. Between
that moment and the write another process may change the file; so the new content goes to a
temp file in the same directory (``os.replace`` is atomic only within one file system), the
file is read again just before the replace, and the write is abandoned when those bytes are
not the ones the edit was computed from. Writers that go through this server also hold
the file's lock (``locks/`` in the state dir, one per file) for the whole check-and-write,
so two agents' edits of one function are decided one after the other, never both against
the same old text; writers of other files never wait, and no writer waits long: past
``LOCK_WAIT_S`` it is denied ``busy``, and a holder past ``LOCK_LEASE_S`` is broken. A
process that bypasses the tools can still write inside the last microseconds; the next
check sees it.

Only regular files are read, and their type is taken from the open descriptor (opened
non-blocking): a FIFO would hang the server on its read, a directory would raise. A file
over the server's size limit is never read whole; a range of its lines is read in chunks.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from fresh_ls.core.sources import MAX_FILE_BYTES
from fresh_ls.processes import alive

log = logging.getLogger(__name__)

#: The directory of the state dir holding one lock file per file being written.
LOCKS_DIR = "locks"
#: How long a writer waits for another writer of the same file before it is denied busy.
LOCK_WAIT_S = 2.0
#: How long a writer may hold a file's lock; past it (stopped, hung) the next writer breaks
#: it. A check and a write take milliseconds; the fresh-ls server's start is not inside it.
LOCK_LEASE_S = 30.0
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


class Busy(Exception):
    """Another writer held the file's lock for the whole wait; ``holder`` is its record
    (pid, session, since), as far as it could be read."""

    def __init__(self, rel: str, holder: dict[str, Any]) -> None:
        super().__init__(f"{rel} is being written by another writer")
        self.rel = rel
        self.holder = holder


def lock_path(state_dir: Path, rel: str) -> Path:
    """The lock file of one file of the root (named by a hash: paths may be long)."""
    digest = hashlib.sha256(rel.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return state_dir / LOCKS_DIR / f"{digest}.lock"


def _record(fd: int) -> dict[str, Any]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _past_lease(holder: dict[str, Any], lease_s: float) -> bool:
    since = holder.get("since")
    return isinstance(since, (int, float)) and time.time() - since > lease_s


def _break(path: Path, inode: int, rel: str, holder: dict[str, Any], lease_s: float) -> None:
    """Unlink the lock file a holder past its lease keeps locked (it may be stopped, or
    hung), if it is still that file: the next writer locks a new file, and the old holder,
    should it wake, holds a lock nobody waits on (its write is still re-checked against
    the disk before the replace)."""
    with contextlib.suppress(FileNotFoundError):
        if os.stat(path).st_ino == inode:
            os.unlink(path)
            log.warning(
                "broke the write lock of %s held by pid %s (session %s) for %.0f s, past its "
                "lease of %.0f s",
                rel,
                holder.get("pid"),
                holder.get("session"),
                time.time() - float(holder.get("since", 0)),
                lease_s,
            )


@contextlib.asynccontextmanager
async def write_lock(
    state_dir: Path,
    rel: str,
    session: str,
    wait_s: float = LOCK_WAIT_S,
    lease_s: float = LOCK_LEASE_S,
) -> AsyncIterator[None]:
    """Exclusive among the writers of ``rel`` that use it, for at most ``wait_s`` of
    waiting (then Busy). An ``flock`` of one file per written file, so writers of other
    files never wait; the kernel drops it if its holder dies. The lock file records its
    holder (pid, session, since): a holder gone left a record, taken over with a log line;
    a holder past ``lease_s`` (stopped, hung) is broken with a log line."""
    path = lock_path(state_dir, rel)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    deadline = time.monotonic() + wait_s
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder, inode = _record(fd), os.fstat(fd).st_ino
            os.close(fd)
            if _past_lease(holder, lease_s):
                _break(path, inode, rel, holder, lease_s)
                continue
            if time.monotonic() > deadline:
                raise Busy(rel, holder) from None
            await asyncio.sleep(0.02)
            continue
        try:
            try:
                current = os.stat(path).st_ino
            except FileNotFoundError:
                current = -1
            if current != os.fstat(fd).st_ino:
                continue  # broken (unlinked) while we waited for it: lock the new file
            before = _record(fd)
            if before.get("pid") not in (None, os.getpid()) and not alive(before.get("pid")):
                log.warning(
                    "took over the write lock of %s from pid %s (session %s), which is gone",
                    rel,
                    before.get("pid"),
                    before.get("session"),
                )
            record = {"pid": os.getpid(), "session": session, "since": time.time(), "path": rel}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)
            try:
                yield
            finally:
                # Released: the file goes (a waiter that opened it sees it gone, and locks
                # the next one), so the locks dir holds only the files being written.
                with contextlib.suppress(FileNotFoundError):
                    if os.stat(path).st_ino == os.fstat(fd).st_ino:
                        os.unlink(path)
            return
        finally:
            os.close(fd)  # closing releases the lock
