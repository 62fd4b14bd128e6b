"""Run ``fresh-ls`` with one check of the protocol weakened: the mutants the state machine
(``tests/model``) must catch, so a model test that cannot fail is seen.

    python -P tests/model/launch_mutant.py MUTANT serve --root DIR --listen

imports fresh_ls, replaces one function (never a switch in production code: the mutant
lives here, in a test-only launcher), then runs the normal command line. Each mutant breaks
one invariant of ``docs/reliability.md`` ("The protocol as a model"):

- ``lost-update``: the guard counts a unit as known when any one of its lines is known (a
  per-unit check weakened from "every line"), so an edit over a changed body is allowed.
- ``commit``: ``fresh/commit`` checks the plan's entries only, not the views it left in
  place (the contract before v1.1), so a stale tool result passes.
- ``gate``: ``fresh/gate`` counts a ``changed`` view as holding.
- ``durability``: a view is acknowledged before it is stored (the row is written a while
  later), so a SIGKILL or a restart right after the answer loses it.
- ``stale``: a view's assessment is cached by the view alone, not by the file's content,
  so a view that went stale keeps being reported ``fresh``.
- ``own-writes`` (caught as ``durability`` too): what a session knows from its own writes
  is kept in memory only (the store's ``written`` table is never written), so after a
  restart the session's next edit of code it wrote is refused.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

#: How long the ``durability`` mutant keeps an acknowledged view out of the store.
DEFER_S = 5.0


def lost_update() -> None:
    from fresh_ls.core import guard

    def decide(units: list[Any], knowledge: guard.Knowledge) -> list[guard.UnitVerdict]:
        out = []
        for unit in units:
            first, last = guard.unit_extent(unit)
            lines = range(first, last + 1)
            state = "known" if any(n in knowledge.known for n in lines) else "unseen"
            out.append(guard.UnitVerdict(unit, first, last, state))  # type: ignore[arg-type]
        return out

    guard.decide = decide


def commit() -> None:
    from fresh_ls import protocol as proto
    from fresh_ls.core.text import sha256_text
    from fresh_ls.engine import engine

    def entries_only(self: engine.Engine, p: proto.CommitParams) -> proto.CommitResult:
        plan = self.plans.get(p.plan_id)
        changed: set[str] = set()
        for path, first, last, sha in plan.entries:
            source, _ = self._current_or_none(path)
            now = "".join(source.lines[first - 1 : last]) if source is not None else None
            if now is None or sha256_text(now) != sha:
                changed.add(path)
        return proto.CommitResult(ok=not changed, changed=tuple(sorted(changed)))

    engine.Engine.commit = engine._in_one_moment(entries_only)  # type: ignore[method-assign]


def gate() -> None:
    from fresh_ls import protocol as proto
    from fresh_ls.engine import engine

    real = engine.Engine.gate

    def changed_holds(self: engine.Engine, p: proto.GateParams) -> proto.GateResult:
        result = real(self, p)
        stale = tuple(v for v in result.stale if v.status != proto.Status.CHANGED)
        return proto.GateResult(proceed=not stale, stale=stale)

    engine.Engine.gate = changed_holds  # type: ignore[method-assign]


def durability() -> None:
    from fresh_ls.core.model import View
    from fresh_ls.engine.store import ViewStore

    real = ViewStore.put_view
    pending: set[asyncio.Task[None]] = set()

    async def acknowledged_first(self: ViewStore, view: View) -> None:
        async def later() -> None:
            await asyncio.sleep(DEFER_S)
            await real(self, view)

        task = asyncio.get_running_loop().create_task(later())
        pending.add(task)
        task.add_done_callback(pending.discard)

    ViewStore.put_view = acknowledged_first  # type: ignore[method-assign]


def stale() -> None:
    from fresh_ls.core.model import View, ViewAssessment
    from fresh_ls.core.staleness import assess_view
    from fresh_ls.engine import engine

    def by_view_only(self: engine.Engine, view: View) -> ViewAssessment:
        assessed = self._session(view.session).assessed
        cached = assessed.get(view.view_id)
        if cached is not None and cached[1] == view.seq:
            return cached[2]
        source, reason = self._current_or_none(view.path)
        assessment = assess_view(view, source, reason)
        assessed[view.view_id] = ("", view.seq, assessment)
        return assessment

    engine.Engine._assess = by_view_only  # type: ignore[method-assign]


def own_writes() -> None:
    from fresh_ls.core.model import View
    from fresh_ls.engine.store import ViewStore

    async def kept_in_memory(self: ViewStore, session: str, path: str, views: list[View]) -> None:
        return None

    ViewStore.put_written = kept_in_memory  # type: ignore[method-assign]


MUTANTS: dict[str, Callable[[], None]] = {
    "lost-update": lost_update,
    "commit": commit,
    "gate": gate,
    "durability": durability,
    "stale": stale,
    "own-writes": own_writes,
}

#: The invariant each mutant breaks, as a failure names it (``[durability]``).
CAUGHT_AS = {name: name for name in MUTANTS} | {"own-writes": "durability"}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in MUTANTS:
        print(
            f"launch_mutant: name one mutant of {', '.join(sorted(MUTANTS))}, then the "
            "fresh-ls command line",
            file=sys.stderr,
        )
        return 2
    MUTANTS[argv[0]]()
    from fresh_ls.cli import main as fresh_main

    return fresh_main(argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
