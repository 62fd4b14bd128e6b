"""Resolve client paths against the root, refusing anything that escapes it.

The contract lets a client name a file absolutely or relative to the root, and refuses a
path that resolves outside the root "also through ``..`` or a symlink". Resolving the real
path (symlinks followed) before the containment check is what makes the symlink case hold.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Longest path accepted, in UTF-8 bytes (Linux's PATH_MAX). ``os.path.realpath`` costs
#: the square of a path's length, so a path of hundreds of KiB would stall every client
#: for seconds; no real file has such a path anyway.
MAX_PATH_BYTES = 4096


class PathOutsideRoot(ValueError):
    """The path resolves outside the root (error -32010 on the wire)."""


class PathTooLong(PathOutsideRoot):
    """The path is longer than ``MAX_PATH_BYTES`` (params validation answers -32602 for
    it; a path that reaches the engine another way is refused like one outside the root)."""


def path_too_long(path: str) -> str | None:
    """Why ``path`` is too long to resolve, or None. Cheap: no resolution, no disk."""
    if len(path) * 4 <= MAX_PATH_BYTES:  # at most 4 UTF-8 bytes per character
        return None
    size = len(path.encode("utf-8", "surrogatepass"))
    if size <= MAX_PATH_BYTES:
        return None
    return f"is {size} bytes long, over the limit of {MAX_PATH_BYTES} bytes (PATH_MAX)"


def resolve_in_root(root: Path, path: str) -> tuple[str, Path]:
    """Return ``(relative posix path, absolute real path)`` or raise PathOutsideRoot.

    The absolute path need not exist: a deleted file is still a valid subject of a view.
    """
    if not isinstance(path, str) or not path or "\x00" in path:
        raise PathOutsideRoot(f"path {path!r} is not a usable file path")
    too_long = path_too_long(path)
    if too_long is not None:
        raise PathTooLong(f"path {too_long}")
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    real = Path(os.path.realpath(candidate))
    try:
        rel = real.relative_to(root)
    except ValueError:
        raise PathOutsideRoot(
            f"path {path!r} resolves to {real}, which is outside the root {root}"
        ) from None
    rel_posix = rel.as_posix()
    if rel_posix in ("", "."):
        raise PathOutsideRoot(f"path {path!r} names the root itself, not a file")
    return rel_posix, real


def resolve_in_roots(root: Path, also: tuple[Path, ...], path: str) -> tuple[str, Path]:
    """``resolve_in_root``, and when the path's real location is outside the root but
    inside one of the ``also`` folders (``--also DIR``), that file named by its absolute
    real path (results name such files absolutely: they have no root-relative name)."""
    try:
        return resolve_in_root(root, path)
    except PathTooLong:
        raise
    except PathOutsideRoot:
        if not also:
            raise
        real = Path(os.path.realpath(path if os.path.isabs(path) else root / path))
        for folder in also:
            if real != folder and real.is_relative_to(folder):
                return real.as_posix(), real
        raise


def split_also(also: tuple[Path, ...], rel: str) -> tuple[Path, str] | None:
    """The ``also`` folder holding the absolute name ``rel`` and the path inside it, or
    None (a root-relative name, or one of no such folder)."""
    if not rel.startswith("/"):
        return None
    real = Path(rel)
    for folder in also:
        if real != folder and real.is_relative_to(folder):
            return folder, real.relative_to(folder).as_posix()
    return None
