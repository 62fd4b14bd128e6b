"""A model test that cannot fail is no test: for each invariant, the server with that check
weakened (``launch_mutant.py``) must make the state machine fail, naming the invariant.

Shrinking is skipped (the first failure is enough, and each replay costs real processes);
the examples are derandomized, so the same ones run every time. The rig keeps serving the
mutant after a test (the next test, or the model test, switches the server it needs)."""

from __future__ import annotations

import pytest
from hypothesis.errors import FlakyFailure

from ._rig import Rig
from ._run import FULL, count, figures, model_settings, run
from .launch_mutant import CAUGHT_AS, MUTANTS
from .protocol_machine import machine

pytestmark = pytest.mark.timeout(1800 if FULL else 240)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_model_catches_the_mutant(rig: Rig, mutant: str) -> None:
    rig.use(mutant)
    factory = machine(rig, max_restarts=count(2, 4))
    how = model_settings(max_examples=count(25, 100), steps=30, shrink=False)
    try:
        with pytest.raises((AssertionError, FlakyFailure)) as caught:
            run(factory, how)
    finally:
        figures(f"mutant-{mutant}", factory.tally)
    message = str(caught.value)
    if isinstance(caught.value, FlakyFailure):
        message = " ".join(str(e) for e in caught.value.exceptions)
    name = CAUGHT_AS[mutant]
    assert f"[{name}]" in message, f"the {mutant} mutant broke another check: {message}"
