"""``fresh-ls doctor``: what is wrong with a root's state dir, and, with ``--fix``, mend what
can be mended without losing anything.

Checks, each a line ``ok`` / ``problem`` with what to do:

- the state dir exists and is private (0700);
- the view store opens as SQLite, passes ``PRAGMA integrity_check`` and has a schema this
  fresh-ls reads;
- ``endpoint.json``, when present, names a server that still runs.

``--fix`` moves a broken store aside (renamed ``views.sqlite3.broken-<time>``, with its
``-wal``/``-shm``, never deleted: it may hold views someone wants back) so the next server
starts with an empty one, removes an ``endpoint.json`` whose server is gone, and makes the
state dir 0700. Each fix says what it did.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from fresh_ls.processes import alive
from fresh_ls.statedir import DATABASE_FILE, ENDPOINT_FILE


@dataclass
class Finding:
    check: str
    ok: bool
    detail: str
    fixed: str | None = None


def _store(path: Path) -> tuple[bool, str]:
    from fresh_ls.engine.store import SCHEMA_VERSION

    if not path.exists():
        return True, f"{path} does not exist yet (the first server creates it)"
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            check = con.execute("PRAGMA integrity_check").fetchone()
            version = con.execute("PRAGMA user_version").fetchone()[0]
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return False, f"{path} is not a readable SQLite database ({exc})"
    if not check or check[0] != "ok":
        return False, f"{path} fails its integrity check ({check[0] if check else 'no answer'})"
    if version > SCHEMA_VERSION:
        return False, (
            f"{path} has schema {version}, newer than this fresh-ls reads ({SCHEMA_VERSION}): "
            "upgrade fresh-ls"
        )
    return True, f"{path} opens, passes its integrity check, schema {version}"


def _move_aside(path: Path) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved = []
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        if source.exists():
            target = source.with_name(f"{path.name}.broken-{stamp}{suffix}")
            source.rename(target)
            moved.append(target.name)
    return f"moved aside as {', '.join(moved)} (kept; the next server starts with an empty store)"


def diagnose(state_dir: Path, fix: bool = False) -> list[Finding]:
    out: list[Finding] = []
    if not state_dir.is_dir():
        out.append(Finding("state dir", True, f"{state_dir} does not exist yet (nothing stored)"))
        return out
    mode = stat.S_IMODE(state_dir.stat().st_mode)
    private = mode & 0o077 == 0
    finding = Finding(
        "state dir",
        private,
        f"{state_dir} mode {mode:04o}" + ("" if private else ": others can read it; chmod 700"),
    )
    if fix and not private:
        os.chmod(state_dir, 0o700)
        finding.fixed = "made 0700"
    out.append(finding)
    store = state_dir / DATABASE_FILE
    ok, detail = _store(store)
    finding = Finding("view store", ok, detail if ok else f"{detail}; `fresh-ls doctor --fix`")
    if fix and not ok and store.exists() and "newer than" not in detail:
        finding.fixed = _move_aside(store)
    out.append(finding)
    endpoint = state_dir / ENDPOINT_FILE
    if endpoint.exists():
        try:
            record = json.loads(endpoint.read_text())
        except (OSError, ValueError):
            record = {}
        pid = record.get("pid") if isinstance(record, dict) else None
        running = alive(pid)
        finding = Finding(
            "endpoint",
            running,
            f"{endpoint} names server pid {pid}, "
            + ("running" if running else "which is gone; `fresh-ls doctor --fix` removes it"),
        )
        if fix and not running:
            endpoint.unlink()
            finding.fixed = "removed (its server is gone)"
        out.append(finding)
    return out


def as_json(findings: list[Finding]) -> list[dict[str, object]]:
    return [asdict(f) for f in findings]
