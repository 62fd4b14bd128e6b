"""How the protocol model runs: quick in ``make test``, full in ``make soak``
(``FRESH_LS_SOAK=1``, as the reliability suite), and how a failure is replayed.

Quick runs are derandomized: the same examples every run, so CI is repeatable and a failure
there is reproduced by running the test again. Full runs draw new examples each time; a
failure prints the steps of the shrunk example and a ``@reproduce_failure(...)`` line:
pass that line in ``FRESH_LS_MODEL_REPRODUCE`` (or a seed in ``FRESH_LS_MODEL_SEED``) to
run exactly that example again (docs/reliability.md).
"""

from __future__ import annotations

import os
import re
from typing import Any

from hypothesis import HealthCheck, Phase, reproduce_failure, seed, settings
from hypothesis.stateful import run_state_machine_as_test

FULL = os.environ.get("FRESH_LS_SOAK", "").strip() not in ("", "0", "no", "false")


def count(quick: int, full: int) -> int:
    return full if FULL else quick


def model_settings(
    max_examples: int, steps: int, shrink: bool = True, randomize: bool = False
) -> settings:
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    if shrink:
        phases.append(Phase.shrink)
    replay = os.environ.get("FRESH_LS_MODEL_SEED") or os.environ.get("FRESH_LS_MODEL_REPRODUCE")
    return settings(
        max_examples=max_examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,
        derandomize=not randomize and not replay,
        print_blob=True,
        report_multiple_bugs=False,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )


_BLOB = re.compile(r"reproduce_failure\(\s*'([^']+)'\s*,\s*b'([^']+)'\s*\)")


def replaying(factory: Any) -> Any:
    """``factory`` with the seed or the failure named in the environment applied."""
    wanted = os.environ.get("FRESH_LS_MODEL_SEED", "").strip()
    if wanted:
        factory = seed(int(wanted))(factory)
    blob = _BLOB.search(os.environ.get("FRESH_LS_MODEL_REPRODUCE", ""))
    if blob is not None:
        factory = reproduce_failure(blob.group(1), blob.group(2).encode("ascii"))(factory)
    return factory


def run(factory: Any, how: settings) -> None:
    run_state_machine_as_test(replaying(factory), settings=how)


def figures(name: str, tally: Any) -> None:
    """One line of what ran (``pytest -s`` shows it; ``make soak`` prints it at the end)."""
    mode = "full" if FULL else "quick"
    parts = " ".join(f"{k.replace(' ', '_')}={v}" for k, v in sorted(tally.items()))
    line = f"model: {name} mode={mode} {parts}"
    FIGURES.append(line)
    print(line, flush=True)


#: The figures of this run, printed at its end (conftest's summary hook).
FIGURES: list[str] = []
