"""What earlier stale notes of a session announced, kept in the state dir.

A hook is one process per event, so the record of which views a note already announced
(view id -> ``note.fingerprint``) cannot live in memory. It lives beside the server's
database, one small JSON file per session (``<state>/hooks/claude-code-<digest>.json``),
not in the server: the server stays what the contract says, and a record lost with the
state dir costs one repeated note, nothing more. It is written atomically (a temp file
renamed over it) and pruned to the views the session still has; a file that cannot be
read counts as empty.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

HOOKS_DIR = "hooks"


def record_path(state_dir: Path, session: str) -> Path:
    import hashlib

    digest = hashlib.sha256(session.encode("utf-8")).hexdigest()[:24]
    return state_dir / HOOKS_DIR / f"claude-code-{digest}.json"


def load(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    views = data.get("announced") if isinstance(data, dict) else None
    if not isinstance(views, dict):
        return {}
    return {str(k): str(v) for k, v in views.items()}


def save(path: Path, session: str, announced: dict[str, str]) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{os.getpid()}-{path.name}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"session": session, "announced": announced}, out, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
