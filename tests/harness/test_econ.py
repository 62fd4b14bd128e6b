"""The cost model (benchmarks/econ/run.py) on one recorded run, and its prefix rule."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

RUN_PY = Path(__file__).resolve().parents[2] / "benchmarks" / "econ" / "run.py"


def _econ() -> ModuleType:
    spec = importlib.util.spec_from_file_location("econ_run", RUN_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["econ_run"] = module
    spec.loader.exec_module(module)
    return module


def test_common_prefix() -> None:
    econ = _econ()
    assert econ.common_prefix(b"", b"abc") == 0
    assert econ.common_prefix(b"abc", b"abc") == 3
    assert econ.common_prefix(b"abcdef", b"abcxef") == 3
    assert econ.common_prefix(b"abc", b"abcdef") == 3


@pytest.mark.shared
def test_one_recorded_run(shared_fixtures: Path) -> None:
    econ = _econ()
    run = shared_fixtures / "trajectories" / "openhands-astropy__astropy-12907"
    if not run.is_dir():
        pytest.skip(f"{run} is absent")
    result = econ.econ_run(run, 131072)
    assert result.error is None
    assert result.requests == result.steps - 1 and result.stale_requests > 0
    arms = result.arms
    assert arms["append-only"].leaking_requests == result.stale_requests
    assert arms["whole-file"].leaking_requests == result.stale_requests  # history kept
    assert arms["fresh-ls stale"].leaking_requests == 0
    assert arms["fresh-ls all"].leaking_requests == 0
    for totals in arms.values():
        assert totals.requests == result.requests
        assert 0 < totals.cached_bytes < totals.input_bytes
        assert totals.cost < totals.input_bytes
    assert arms["append-only"].tail_bytes == 0
    assert arms["fresh-ls stale"].tail_bytes > 0
