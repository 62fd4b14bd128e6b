"""The recorded OpenHands runs through the real proxy (benchmarks/econ/proxy_run.py): no
stale file view and no stale search line reaches the upstream, at no more than 1.2x the
cost of sending the same requests directly (a prompt cache keyed on the request's bytes)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "econ"))

import proxy_run  # noqa: E402

pytestmark = pytest.mark.timeout(900)


@pytest.mark.shared
def test_recorded_runs_through_the_proxy(shared_fixtures: Path) -> None:
    assert proxy_run.main(["--fixtures", str(shared_fixtures / "trajectories"), "--json"]) == 0


@pytest.mark.shared
def test_the_check_sees_stale_lines_without_the_proxy(shared_fixtures: Path) -> None:
    """The measure can fail: sent directly, the same requests carry stale views and stale
    search lines (a run with grep -n results that went stale)."""
    run = shared_fixtures / "trajectories" / "openhands-astropy__astropy-13453"
    result = asyncio.run(proxy_run.proxy_run(run))
    assert result.error is None
    assert result.stale_views_direct > 0 and result.stale_search_lines_direct > 0
    assert result.stale_views == 0 and result.stale_search_lines == 0
