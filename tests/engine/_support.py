"""Small helpers shared by the engine tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fresh_ls.engine import wire
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import (
    ObserveParams,
    ObserveResult,
    Placement,
    Policy,
    ProjectParams,
    ProjectResult,
    StaleParams,
    unstructure,
)


class FakeClock:
    """Time stands still until the test moves it."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


#: Two functions: ``one`` is lines 1-2, ``two`` is lines 5-6.
MOD = "def one():\n    return 1\n\n\ndef two():\n    return 2\n"


def edit(path: Path, old: str, new: str) -> None:
    """Change the file on disk (the engine sees it at its next read: the file is too
    recent for its stat to be trusted, so it is re-hashed)."""
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")


async def observe(
    engine: Engine,
    session: str,
    path: str,
    view_id: str,
    first_line: int | None = None,
    last_line: int | None = None,
    text: str | None = None,
) -> ObserveResult:
    """``fresh/observe`` as a harness sends it."""
    return await engine.observe(
        ObserveParams(
            session=session,
            path=path,
            view_id=view_id,
            first_line=first_line,
            last_line=last_line,
            text=text,
        )
    )


def unit(engine: Engine, session: str, view_id: str) -> dict[str, Any]:
    """The single unit of a view, as ``stale`` answers it on the wire."""
    (view,) = unstructure(engine.stale(StaleParams(session=session, view_ids=[view_id])))["views"]
    (only,) = view["units"]
    return dict(only)


def changed_by(engine: Engine, session: str, view_id: str) -> str | None:
    found = unit(engine, session, view_id)
    assert found["status"] != "fresh", found
    by: str | None = found["changedBy"]
    return by


async def project(
    engine: Engine,
    session: str,
    budget_bytes: int | None = None,
    policy: str | None = None,
    view_ids: list[str] | None = None,
    results: list[str] | None = None,
    bytes_after: list[int] | None = None,
) -> ProjectResult:
    """``fresh/project`` (``placement: anchored`` when ``results`` are given), its answer
    read back from the JSON the engine encodes for the wire."""
    text = await engine.project(
        ProjectParams(
            session=session,
            budget_bytes=budget_bytes,
            policy=Policy(policy) if policy is not None else None,
            view_ids=view_ids,
            placement=Placement.ANCHORED if results is not None else None,
            results=results,
            bytes_after=bytes_after,
        )
    )
    return wire.read_project(text)
