"""Durable views: one repository class over aiosqlite.

A view is acknowledged only after its row is committed, with WAL and ``synchronous=FULL``,
so a server killed at any moment (SIGKILL included) and started again serves every view it
acknowledged. The schema is versioned with ``PRAGMA user_version``; each migration is a
list of statements applied in order inside one transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import aiosqlite

from fresh_ls.core.model import ObservedUnit, View

MIGRATIONS: list[list[str]] = [
    # 1: views of sessions, with their observed units as JSON
    [
        """
        CREATE TABLE views (
            session         TEXT NOT NULL,
            view_id         TEXT NOT NULL,
            path            TEXT NOT NULL,
            first_line      INTEGER NOT NULL,
            last_line       INTEGER NOT NULL,
            kind            TEXT NOT NULL,
            seq             INTEGER NOT NULL,
            observed_text   TEXT NOT NULL,
            observed_sha256 TEXT NOT NULL,
            units_json      TEXT NOT NULL,
            observed_at     REAL NOT NULL,
            PRIMARY KEY (session, view_id)
        )
        """,
        "CREATE INDEX views_by_path ON views (path)",
    ],
    # 2: per session, the refresh ledger of ``placement: anchored`` (fresh_ls/core/ledger.py)
    [
        """
        CREATE TABLE ledgers (
            session TEXT PRIMARY KEY,
            body    TEXT NOT NULL
        )
        """,
        # the tool result as the model saw it (``fresh/observe`` ``result``), or NULL
        "ALTER TABLE views ADD COLUMN result TEXT",
    ],
    # 3: per session and file, what the session knows of it from its own writes (views that
    # are never listed: ``fresh/checkEdit`` counts them as seen), so a restart keeps them
    [
        """
        CREATE TABLE written (
            session TEXT NOT NULL,
            path    TEXT NOT NULL,
            body    TEXT NOT NULL,
            PRIMARY KEY (session, path)
        )
        """,
    ],
    # 4: a sparse view's ranges as JSON ([[first, last], ...]), or NULL (PROTOCOL.md v1.3)
    ["ALTER TABLE views ADD COLUMN ranges TEXT"],
]

SCHEMA_VERSION = len(MIGRATIONS)


#: Mode of the database and its side files: they hold the code agents read.
PRIVATE_MODE = 0o600
SIDE_FILES = ("", "-wal", "-shm", "-journal")


def _create_private(path: Path) -> None:
    """Create the database file 0600 before SQLite opens it (SQLite would create it 0644
    under the usual umask, and gives its -wal and -shm files the database's mode), and
    tighten one an older version created."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, PRIVATE_MODE)
    try:
        os.fchmod(fd, PRIVATE_MODE)
    finally:
        os.close(fd)


class StoreError(RuntimeError):
    """The database cannot be used (newer schema, corrupt file); says what to do."""


class ViewStore:
    """All persistence of the sidecar goes through this class."""

    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self._db = db
        self.path = path
        #: What the ledgers table holds, by session, as this store read or wrote it: an
        #: unchanged ledger is not written again (``put_ledger``).
        self._ledger_text: dict[str, str] = {}

    @classmethod
    async def open(cls, path: Path) -> ViewStore:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _create_private(path)
        db = await aiosqlite.connect(path, isolation_level=None)
        store = cls(db, path)
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute("PRAGMA synchronous=FULL")
            await db.execute("PRAGMA busy_timeout=5000")
            await store._migrate()
            store.make_private()
        except sqlite3.DatabaseError as exc:
            await db.close()
            raise StoreError(
                f"{path} is not a readable view store ({exc}); run `fresh-ls doctor --fix` "
                "to move it aside (kept, renamed) and start with an empty one"
            ) from None
        except Exception:
            await db.close()
            raise
        return store

    def make_private(self) -> None:
        """The database and its WAL side files hold code: readable by this user only.
        SQLite gives the side files the database's mode; this tightens any made before."""
        for suffix in SIDE_FILES:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(f"{self.path}{suffix}", PRIVATE_MODE)

    async def close(self) -> None:
        await self._db.close()

    async def _migrate(self) -> None:
        async with self._db.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this fresh-ls "
                f"understands ({SCHEMA_VERSION}); upgrade fresh-ls or use another --state-dir"
            )
        for number in range(version, SCHEMA_VERSION):
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[number]:
                    await self._db.execute(statement)
                await self._db.execute(f"PRAGMA user_version={number + 1}")
                await self._db.execute("COMMIT")
            except Exception:
                await self._db.execute("ROLLBACK")
                raise

    async def put_view(self, view: View) -> None:
        """Insert or replace a view; returns once it is committed to disk."""
        await self._db.execute(
            """
            INSERT OR REPLACE INTO views (session, view_id, path, first_line, last_line, kind,
                seq, observed_text, observed_sha256, units_json, observed_at, result, ranges)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            (
                view.session,
                view.view_id,
                view.path,
                view.first_line,
                view.last_line,
                view.kind,
                view.seq,
                view.observed_text,
                view.observed_sha256,
                json.dumps([u.to_json() for u in view.units]),
                view.observed_at,
                view.result,
                json.dumps(view.ranges) if view.ranges is not None else None,
            ),
        )

    async def delete_views(self, session: str, view_ids: list[str] | None) -> int:
        if view_ids is None:
            cur = await self._db.execute("DELETE FROM views WHERE session = ?", (session,))
        else:
            marks = ",".join("?" for _ in view_ids)
            cur = await self._db.execute(
                f"DELETE FROM views WHERE session = ? AND view_id IN ({marks})",
                (session, *view_ids),
            )
        return cur.rowcount or 0

    async def delete_session(self, session: str, view_ids: list[str]) -> None:
        """Forget a session on disk in one transaction: these views of it (the ones the
        engine held; a view stored since by another request stays), its ledger and what it
        knew from its own writes."""
        marks = ",".join("?" for _ in view_ids)
        await self._db.execute("BEGIN IMMEDIATE")
        try:
            if view_ids:
                await self._db.execute(
                    f"DELETE FROM views WHERE session = ? AND view_id IN ({marks})",
                    (session, *view_ids),
                )
            await self._db.execute("DELETE FROM ledgers WHERE session = ?", (session,))
            await self._db.execute("DELETE FROM written WHERE session = ?", (session,))
            await self._db.execute("COMMIT")
        except Exception:
            await self._db.execute("ROLLBACK")
            raise
        self._ledger_text.pop(session, None)

    async def put_ledger(self, session: str, body: dict[str, Any]) -> None:
        """Keep a session's refresh ledger; returns once it is committed to disk. A ledger
        the table holds already, byte for byte, is not written again: the proxy projects
        before every model request, mostly with nothing new to record, and each commit is
        an fsync (``synchronous=FULL``)."""
        text = json.dumps(body, separators=(",", ":"))
        if self._ledger_text.get(session) == text:
            return
        await self._db.execute(
            "INSERT OR REPLACE INTO ledgers (session, body) VALUES (?, ?)", (session, text)
        )
        self._ledger_text[session] = text

    async def delete_ledger(self, session: str) -> None:
        await self._db.execute("DELETE FROM ledgers WHERE session = ?", (session,))
        self._ledger_text.pop(session, None)

    async def load_ledgers(self) -> dict[str, dict[str, Any]]:
        async with self._db.execute("SELECT session, body FROM ledgers") as cur:
            rows = await cur.fetchall()
        self._ledger_text = {str(r[0]): str(r[1]) for r in rows}
        return {session: json.loads(text) for session, text in self._ledger_text.items()}

    async def put_written(self, session: str, path: str, views: list[View]) -> None:
        """Keep what ``session`` knows of ``path`` from its own writes (replacing what it knew
        before); returns once it is committed to disk."""
        body = json.dumps([_written_to_json(v) for v in views], separators=(",", ":"))
        await self._db.execute(
            "INSERT OR REPLACE INTO written (session, path, body) VALUES (?, ?, ?)",
            (session, path, body),
        )

    async def delete_written(self, session: str) -> None:
        await self._db.execute("DELETE FROM written WHERE session = ?", (session,))

    async def load_written(self) -> dict[tuple[str, str], list[View]]:
        async with self._db.execute("SELECT session, path, body FROM written") as cur:
            rows = await cur.fetchall()
        return {
            (str(r[0]), str(r[1])): [
                _written_from_json(str(r[0]), str(r[1]), v) for v in json.loads(r[2])
            ]
            for r in rows
        }

    async def load_views(self) -> list[View]:
        async with self._db.execute(
            "SELECT session, view_id, path, first_line, last_line, kind, seq, observed_text,"
            " observed_sha256, units_json, observed_at, result, ranges FROM views ORDER BY seq"
        ) as cur:
            rows = await cur.fetchall()
        return [_row_to_view(r) for r in rows]


def _row_to_view(r: Any) -> View:
    units = [ObservedUnit.from_json(u) for u in json.loads(r[9])]
    return View(
        session=r[0],
        view_id=r[1],
        path=r[2],
        first_line=r[3],
        last_line=r[4],
        kind=r[5],
        seq=r[6],
        observed_text=r[7],
        observed_sha256=r[8],
        units=units,
        observed_at=r[10],
        result=r[11],
        ranges=tuple((a, b) for a, b in json.loads(r[12])) if r[12] is not None else None,
    )


def _written_to_json(view: View) -> dict[str, Any]:
    return {
        "viewId": view.view_id,
        "firstLine": view.first_line,
        "lastLine": view.last_line,
        "seq": view.seq,
        "text": view.observed_text,
        "sha256": view.observed_sha256,
        "units": [u.to_json() for u in view.units],
        "observedAt": view.observed_at,
    }


def _written_from_json(session: str, path: str, d: dict[str, Any]) -> View:
    return View(
        session=session,
        view_id=d["viewId"],
        path=path,
        first_line=d["firstLine"],
        last_line=d["lastLine"],
        kind="read",
        seq=d["seq"],
        observed_text=d["text"],
        observed_sha256=d["sha256"],
        units=[ObservedUnit.from_json(u) for u in d["units"]],
        observed_at=d["observedAt"],
    )
