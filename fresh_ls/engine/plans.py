"""The plans ``fresh/project`` made, kept for ``fresh/commit``, and when they expire.

A plan is kept while it is one of the ``PLANS_KEPT`` newest plans of its session or younger
than ``PLAN_TTL_S`` by the clock (the contract's floor: at least the 16 most recent plans of
each session for 30 minutes). Beyond both it is expired: ``get`` refuses it with the
contract's unknown-id error (-32012), whether or not it was pruned yet. Pruning runs when a
session keeps a new plan and looks only at that session's plans, so it costs the same
whatever the number of sessions.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from fresh_ls.errors import UnknownId

#: Plans kept per session at least, and how long each is kept at least (the contract's floor).
PLANS_KEPT = 16
PLAN_TTL_S = 30 * 60

Clock = Callable[[], float]


@dataclass(slots=True)
class Plan:
    plan_id: str
    session: str
    created: float
    entries: list[tuple[str, int, int, str]]  # path, first, last, sha256
    #: Views the plan left in place (no marker): the request carries them as the tools
    #: returned them, so commit fails if they are no longer fresh (contract v1.1).
    kept: list[str] = field(default_factory=list)
    #: The plan's place among its session's plans (1 for the first one ever kept).
    number: int = 0


class Plans:
    """Every plan not yet pruned, by id, with each session's plans in the order kept."""

    def __init__(self, clock: Clock, kept: int = PLANS_KEPT, ttl_s: float = PLAN_TTL_S) -> None:
        self.clock = clock
        self.kept = kept
        self.ttl_s = ttl_s
        self._plans: dict[str, Plan] = {}
        self._by_session: dict[str, deque[str]] = {}
        self._made: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._plans)

    def keep(
        self, session: str, entries: list[tuple[str, int, int, str]], kept: list[str]
    ) -> Plan:
        """A new plan of ``session``, kept from now; the session's expired plans go."""
        number = self._made.get(session, 0) + 1
        self._made[session] = number
        plan = Plan(
            plan_id=f"p-{uuid.uuid4().hex[:12]}",
            session=session,
            created=self.clock(),
            entries=entries,
            kept=kept,
            number=number,
        )
        self._plans[plan.plan_id] = plan
        mine = self._by_session.setdefault(session, deque())
        mine.append(plan.plan_id)
        now = plan.created
        while len(mine) > self.kept:
            oldest = self._plans.get(mine[0])
            if oldest is not None and not self._expired(oldest, now):
                break  # kept in order: every later plan is younger
            self._plans.pop(mine.popleft(), None)
        return plan

    def get(self, plan_id: str) -> Plan:
        """The plan, or UnknownId (-32012) when it is unknown or expired."""
        plan = self._plans.get(plan_id)
        if plan is None or self._expired(plan, self.clock()):
            raise UnknownId(
                f"planId: unknown or expired plan {plan_id!r}; call fresh/project again"
            )
        return plan

    def _expired(self, plan: Plan, now: float) -> bool:
        newer = self._made[plan.session] - plan.number
        return newer >= self.kept and now - plan.created > self.ttl_s
