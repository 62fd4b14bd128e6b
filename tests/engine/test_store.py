"""The store on a real SQLite file: round trip, replace, delete, schema versions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fresh_ls.core.model import ObservedUnit, View
from fresh_ls.engine.store import SCHEMA_VERSION, StoreError, ViewStore


def make_view(view_id: str, seq: int, session: str = "s") -> View:
    unit = ObservedUnit(
        "u-1", "symbol", 3, 4, "a\nb\n", 2, 5, name="Cart.total", symbol_kind="method"
    )
    return View(session, view_id, "src/cart.py", 3, 4, "read", seq, "a\nb\n", "abc", [unit], 1.5)


async def test_round_trip_replace_and_delete(tmp_path: Path) -> None:
    db = tmp_path / "state" / "views.sqlite3"
    store = await ViewStore.open(db)
    await store.put_view(make_view("v1", 1))
    await store.put_view(make_view("v2", 2))
    await store.put_view(make_view("v1", 3))  # observing the same id again replaces it
    await store.close()

    store = await ViewStore.open(db)
    views = await store.load_views()
    assert [(v.view_id, v.seq) for v in views] == [("v2", 2), ("v1", 3)]
    assert views[1].units[0] == make_view("v1", 3).units[0]
    assert await store.delete_views("s", ["v2", "nope"]) == 1
    assert await store.delete_views("s", None) == 1
    assert await store.load_views() == []
    await store.close()


async def test_wal_and_schema_version(tmp_path: Path) -> None:
    db = tmp_path / "views.sqlite3"
    store = await ViewStore.open(db)
    await store.close()
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    con.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer than this fresh-ls"):
        await ViewStore.open(db)


async def _ledgers_on_disk(db: Path) -> dict[str, object]:
    store = await ViewStore.open(db)
    try:
        return dict(await store.load_ledgers())
    finally:
        await store.close()


async def test_a_ledger_the_table_holds_is_not_written_again(tmp_path: Path) -> None:
    """The proxy projects before every model request: an unchanged ledger costs no commit
    (an fsync), and whatever the order of writes and deletes, the table holds the last."""
    db = tmp_path / "views.sqlite3"
    a, b = {"nextSeq": 1, "refreshes": []}, {"nextSeq": 2, "refreshes": []}
    store = await ViewStore.open(db)
    try:
        await store.put_ledger("s", a)
        written = store._db.total_changes
        await store.put_ledger("s", a)
        assert store._db.total_changes == written  # nothing written
        await store.put_ledger("s", b)
        await store.put_ledger("s", a)  # back to what was written first: written again
        assert await _ledgers_on_disk(db) == {"s": a}
        await store.delete_ledger("s")
        await store.put_ledger("s", a)  # the same as before the delete: written again
        assert await _ledgers_on_disk(db) == {"s": a}
        await store.delete_session("s", [])
        await store.put_ledger("s", a)
        assert await _ledgers_on_disk(db) == {"s": a}
    finally:
        await store.close()

    store = await ViewStore.open(db)  # what it loads is what the table holds
    try:
        assert await store.load_ledgers() == {"s": a}
        written = store._db.total_changes
        await store.put_ledger("s", a)
        assert store._db.total_changes == written
        await store.put_ledger("s", b)
    finally:
        await store.close()
    assert await _ledgers_on_disk(db) == {"s": b}
