"""Resolve client paths against the root, refusing anything that escapes it.

The contract lets a client name a file absolutely or relative to the root, and refuses a
path that resolves outside the root "also through ``..`` or a symlink". Resolving the real
path (symlinks followed) before the containment check is what makes the symlink case hold.
"""

from __future__ import annotations

import os
from pathlib import Path


class PathOutsideRoot(ValueError):
    """The path resolves outside the root (error -32010 on the wire)."""


def resolve_in_root(root: Path, path: str) -> tuple[str, Path]:
    """Return ``(relative posix path, absolute real path)`` or raise PathOutsideRoot.

    The absolute path need not exist: a deleted file is still a valid subject of a view.
    """
    if not isinstance(path, str) or not path or "\x00" in path:
        raise PathOutsideRoot(f"path {path!r} is not a usable file path")
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
