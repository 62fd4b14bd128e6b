"""Writing a file only if it is still what the guard checked, atomically.

The guard (``fresh/checkEdit``) judges the bytes on disk at the moment of the check. Between
that moment and the write another process may change the file; so the new content goes to a
temp file in the same directory (``os.replace`` is atomic only within one file system), the
file is read again just before the replace, and the write is abandoned when those bytes are
not the ones the edit was computed from. Writers that go through this server also hold
``write.lock`` in the state dir for the whole check-and-write, so two agents' edits of one
function are decided one after the other, never both against the same old text. A process
that bypasses the tools can still write inside the last microseconds; the next check sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

WRITE_LOCK_FILE = "write.lock"


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


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
