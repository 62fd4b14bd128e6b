"""The protocol as a model (issue 23): real servers, socket and MCP sessions, random
interleavings of reads, writes, checks, gates, plans, commits, forgets, restarts and
SIGKILLs; the invariants hold after every step (``protocol_machine``). Quick here (a fixed,
derandomized set of examples), full under ``make soak``."""

from __future__ import annotations

import pytest

from ._rig import Rig
from ._run import FULL, count, figures, model_settings, run
from .protocol_machine import machine

# Green, a quick run takes seconds; a failing one shrinks its example for up to five minutes
# (hypothesis's own bound) before it prints it, and must not be cut off first.
pytestmark = pytest.mark.timeout(3600 if FULL else 900)


def test_the_protocol_keeps_its_invariants(rig: Rig) -> None:
    rig.use(None)
    factory = machine(rig, max_restarts=count(2, 6))
    how = model_settings(max_examples=count(15, 60), steps=count(40, 60), randomize=FULL)
    try:
        run(factory, how)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{rig.logs()}") from exc
    finally:
        figures("protocol-model", factory.tally)
