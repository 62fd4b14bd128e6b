"""Replays against a real server: a hand-written run with known answers, and the real runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fresh_ls.replay.actions import run_sed_inplace
from fresh_ls.replay.agreement import compare
from fresh_ls.replay.runner import replay

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "fixtures" / "replay" / "openhands-mini"


def test_hand_written_run_has_known_answers() -> None:
    r = replay(MINI)
    assert r.error is None and r.not_reproduced == []
    assert (r.views_registered, r.edit_results, r.diverged_views) == (4, 2, 0)
    # one request before each step after the first view
    assert [q.index for q in r.requests] == [1, 2, 3, 4, 5, 6, 7]
    # the whole-file view goes stale with the agent's own edit at step 2
    assert [q.stale_truth for q in r.requests] == [0, 0, 1, 1, 1, 3, 4]
    assert [q.nonfresh for q in r.requests] == [0, 0, 1, 1, 1, 3, 4]
    assert r.false_fresh == 0 and r.inexact == 0
    assert all(q.commit_ok for q in r.requests)
    assert r.stale_requests_with == 0


def test_sed_emulation_is_narrow() -> None:
    text = "a\nb\nc\n"
    assert run_sed_inplace("sed -i '2s/b/B/' f.py", text) == "a\nB\nc\n"
    assert run_sed_inplace("sed -i '1,3s/^/> /' f.py", text) == "> a\n> b\n> c\n"
    assert run_sed_inplace("sed -i 's/b/B/' f.py", text) is None  # no line address
    assert run_sed_inplace("sed -i '2d' f.py", text) is None


@pytest.mark.shared
def test_real_runs_have_no_false_fresh_views_and_no_inexact_entries(
    shared_fixtures: Path,
) -> None:
    runs = sorted(p for p in (shared_fixtures / "trajectories").iterdir() if p.is_dir())
    assert len(runs) >= 16
    results = [replay(run) for run in runs]
    agreements = [compare(run, r) for run, r in zip(runs, results, strict=True)]
    # The transcript-only audit and the server agree on every request (strict rule).
    assert sum(a.requests for a in agreements) > 300
    assert all(a.differ_strict == [] for a in agreements)
    for r in results:
        assert r.error is None, r.error
        assert r.false_fresh == 0, r.run
        assert r.inexact == 0, r.run
        assert r.diverged_views == 0, r.run
        assert r.not_reproduced == [], r.run
    assert sum(len(r.requests) for r in results) > 200
    assert sum(r.stale_requests_without for r in results) > 0
    assert sum(r.stale_requests_with for r in results) == 0
