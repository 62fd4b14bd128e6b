"""One name per file, however the agent spelled its path.

Agents mix absolute paths (``/workspace/astropy__astropy__5.0/astropy/table/table.py``), paths
relative to a working directory that changes, and aliases of the repository root
(``/testbed`` and ``/workspace/<repo>`` are the same checkout in SWE-bench images). A view and a
later edit of the same file must land on the same key, or an edit never makes a view stale.
"""

from __future__ import annotations

import posixpath


class PathResolver:
    """Maps a path as written, plus the working directory, to a stable key.

    Keys are relative to the repository root when the path is inside one of the known roots
    and absolute otherwise. A relative path with an unknown working directory is taken as
    relative to the repository root, which is where every supported agent starts.
    """

    def __init__(self, roots: list[str]) -> None:
        cleaned = {posixpath.normpath(r) for r in roots if r and r.startswith("/")}
        self._roots = sorted((r for r in cleaned if r != "/"), key=len, reverse=True)

    def key(self, path: str, cwd: str | None = None) -> str:
        path = path.strip()
        if not path.startswith("/"):
            if cwd:
                path = posixpath.join(cwd, path)
            else:
                return posixpath.normpath(path)
        path = posixpath.normpath(path)
        for root in self._roots:
            if path == root:
                return "."
            if path.startswith(root + "/"):
                return path[len(root) + 1 :]
        return path

    def add_root(self, root: str) -> None:
        if root.startswith("/") and root != "/":
            root = posixpath.normpath(root)
            if root not in self._roots:
                self._roots.append(root)
                self._roots.sort(key=len, reverse=True)
