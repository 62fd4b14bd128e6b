"""A session's state lives in one ``Session`` object: forgetting the session leaves nothing
of it anywhere in the engine (or its store), whatever the session did before."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from fresh_ls.engine.engine import Engine
from fresh_ls.engine.session import Session
from fresh_ls.protocol import (
    CheckEditParams,
    ForgetParams,
    GateParams,
    StaleParams,
    ViewTextParams,
)

from ._support import FakeClock, edit, observe, project

GONE = "forget-me"
STAYS = "keep-me"
THREE = "def one():\n    return 1\n\n\ndef two():\n    return 2\n\n\ndef three():\n    return 3\n"


def _mentions(obj: Any, name: str, skip: tuple[object, ...]) -> list[str]:
    """Where in ``obj``'s object graph the string ``name`` stands (a key, a value, a field
    of a view), as paths; ``skip``: objects not walked."""
    found: list[str] = []
    seen: set[int] = set()

    def walk(x: Any, where: str) -> None:
        if any(x is s for s in skip) or id(x) in seen:
            return
        if isinstance(x, str):
            if x == name:
                found.append(where)
            return
        if isinstance(x, bytes | int | float | bool | type(None)) or callable(x):
            return
        seen.add(id(x))
        if isinstance(x, dict):
            for k, v in x.items():
                walk(k, f"{where}[key {k!r}]")
                walk(v, f"{where}[{k!r}]")
        elif isinstance(x, list | tuple | set | frozenset):
            for i, v in enumerate(x):
                walk(v, f"{where}[{i}]")
        elif dataclasses.is_dataclass(x) or hasattr(x, "__dict__") or hasattr(x, "__slots__"):
            names = list(getattr(x, "__dict__", {}))
            for cls in type(x).__mro__:
                names += [s for s in getattr(cls, "__slots__", ()) if isinstance(s, str)]
            for attr in dict.fromkeys(names):
                if hasattr(x, attr):
                    walk(getattr(x, attr), f"{where}.{attr}")

    walk(obj, "engine")
    return found


async def _busy(engine: Engine, root: Path, session: str) -> None:
    """Everything a session can leave behind: views (assessed, statuses told), a ledger of
    an anchored projection, a projection kept in the cache, its own writes."""
    await observe(engine, session, "m.py", "call_1")
    await observe(engine, session, "m.py", "two", 5, 6)
    await observe(engine, session, "n.py", "n", 1, 2)
    edit(root / "m.py", "return 2", "return 20")
    engine.sync(["m.py"])
    engine.stale(StaleParams(session=session))
    engine.gate(GateParams(session=session))
    engine.view_text(ViewTextParams(session=session, view_id="two"))
    await project(engine, session)
    await project(engine, session, results=["call_1", "call_2"])
    edit(root / "n.py", "return 1", "return 10")
    await engine.record_write(session, "n.py")
    await engine.check_edit(
        CheckEditParams(session=session, path="o.py", first_line=1, last_line=2)
    )


async def test_forget_leaves_nothing_of_the_session(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    (root / "m.py").write_text(THREE)
    (root / "n.py").write_text("def n():\n    return 1\n")
    (root / "o.py").write_text("def o():\n    return 1\n")  # never read: checkEdit denies
    await _busy(engine, root, GONE)
    await _busy(engine, root, STAYS)
    skip = (engine.store, engine.plans)  # plans outlive their session (session.py says why)
    # the walk finds a session's state while it is held (else it could not fail)
    assert _mentions(engine, GONE, skip)
    assert isinstance(engine.sessions[GONE], Session)
    assert engine.sessions[GONE].ledger is not None and engine.sessions[GONE].written

    got = await engine.forget(ForgetParams(session=GONE))

    assert got.forgotten == 4  # three views observed, one from the denied checkEdit
    assert GONE not in engine.sessions
    assert _mentions(engine, GONE, skip) == []
    assert _mentions(engine, STAYS, skip)  # the other session is untouched
    assert engine.sessions[STAYS].ledger is not None
    assert {v.session for v in await engine.store.load_views()} == {STAYS}
    assert set(await engine.store.load_ledgers()) == {STAYS}
    assert {s for s, _ in await engine.store.load_written()} == {STAYS}
