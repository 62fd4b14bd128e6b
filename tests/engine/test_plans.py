"""Plans ``fresh/commit`` can still check: the newest ``PLANS_KEPT`` of each session however
old, and any plan younger than ``PLAN_TTL_S``; beyond both, -32012 (contract: "Unknown or
expired plan: -32012. A server keeps at least the 16 most recent plans of each session for
30 minutes")."""

from __future__ import annotations

from pathlib import Path

import pytest

from fresh_ls.engine.engine import Engine
from fresh_ls.engine.plans import PLAN_TTL_S, PLANS_KEPT
from fresh_ls.errors import UNKNOWN_ID, UnknownId
from fresh_ls.protocol import CommitParams, unstructure

from ._support import MOD, FakeClock, observe, project


async def _plans(engine: Engine, session: str, count: int) -> list[str]:
    return [(await project(engine, session)).plan_id for _ in range(count)]


@pytest.fixture
async def viewed(engine: Engine, root: Path) -> Engine:
    (root / "m.py").write_text(MOD)
    for session in ("a", "b"):
        await observe(engine, session, "m.py", "one", 1, 2)
    return engine


def _expired(engine: Engine, plan_id: str) -> UnknownId:
    with pytest.raises(UnknownId) as caught:
        engine.commit(CommitParams(plan_id=plan_id))
    assert caught.value.code == UNKNOWN_ID == -32012
    assert "planId" in caught.value.message and plan_id in caught.value.message
    return caught.value


async def test_the_contract_floor_is_what_is_kept() -> None:
    assert (PLANS_KEPT, PLAN_TTL_S) == (16, 30 * 60)


async def test_a_plan_older_than_the_ttl_but_among_the_newest_is_kept(
    viewed: Engine, clock: FakeClock
) -> None:
    plans = await _plans(viewed, "a", PLANS_KEPT)
    clock.advance(PLAN_TTL_S * 10)
    for plan_id in plans:
        assert unstructure(viewed.commit(CommitParams(plan_id=plan_id))) == {
            "ok": True,
            "changed": [],
        }


async def test_a_plan_beyond_the_newest_but_younger_than_the_ttl_is_kept(
    viewed: Engine, clock: FakeClock
) -> None:
    plans = await _plans(viewed, "a", PLANS_KEPT + 5)
    clock.advance(PLAN_TTL_S)  # not older than the TTL yet
    await _plans(viewed, "a", 1)
    assert all(viewed.commit(CommitParams(plan_id=p)).ok for p in plans)


async def test_a_plan_beyond_both_is_refused_with_the_unknown_id_error(
    viewed: Engine, clock: FakeClock
) -> None:
    plans = await _plans(viewed, "a", PLANS_KEPT + 1)
    clock.advance(PLAN_TTL_S + 1)
    # Expired by the clock alone, before any new plan of the session prunes it.
    _expired(viewed, plans[0])
    assert viewed.commit(CommitParams(plan_id=plans[1])).ok is True
    await _plans(viewed, "a", 1)
    _expired(viewed, plans[0])
    _expired(viewed, plans[1])
    assert viewed.commit(CommitParams(plan_id=plans[2])).ok is True


async def test_an_unknown_plan_is_refused(viewed: Engine) -> None:
    _expired(viewed, "p-000000000000")


async def test_pruning_looks_only_at_the_plans_own_session(
    viewed: Engine, clock: FakeClock
) -> None:
    old = await _plans(viewed, "a", PLANS_KEPT + 4)
    clock.advance(PLAN_TTL_S + 1)
    await _plans(viewed, "b", PLANS_KEPT + 4)
    # Session b's plans pruned nothing of session a's, expired as four of them are.
    assert viewed.status().plans == 2 * (PLANS_KEPT + 4)
    for plan_id in old[:4]:
        _expired(viewed, plan_id)
    await _plans(viewed, "a", 1)
    assert viewed.status().plans == (PLANS_KEPT + 4) + PLANS_KEPT
    assert all(viewed.commit(CommitParams(plan_id=p)).ok for p in old[5:])


async def test_a_plan_is_dated_by_the_engines_clock(viewed: Engine, clock: FakeClock) -> None:
    plan_id = (await project(viewed, "a")).plan_id
    assert viewed.plans.get(plan_id).created == clock.now
