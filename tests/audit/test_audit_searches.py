"""Search results in the audit: each printed line a one-line view, counted beside the views.

``fixtures/searches/grep-run.traj.json`` (mini-swe-agent format, ``src/calc.py`` holds
``value_N = N`` on line N): step 0 ``grep -n 'value_[34]'`` prints lines 3 and 4, step 1
``grep -rn -A1 value_8 src`` lines 8 and 9 (a match and a context line), step 2 ``grep -c`` (a
count: no lines), step 3 inserts a line at the top (every printed line moves), step 4 rewrites
line 5 (the old line 4: changed). Request ``i`` is sent before step ``i``; request 5 after all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fresh_ls.audit import audit_paths, audit_run
from fresh_ls.audit.report import render_json, render_text
from fresh_ls.audit.results import SearchRecord, Totals

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "fixtures" / "searches" / "grep-run.traj.json"
SHARED = ROOT.parent / "shared" / "fixtures" / "trajectories"


def test_search_lines_are_sparse_views_under_the_strict_rule() -> None:
    run = audit_run(RUN)
    assert run.searches == [
        SearchRecord(0, "src/calc.py", (3, 4), stale=(4,), moved=(3,)),
        SearchRecord(1, "src/calc.py", (8, 9), stale=(), moved=(8, 9)),
    ]
    assert [r.search_lines for r in run.requests] == [0, 2, 4, 4, 4, 4]
    # changed: only once step 4 rewrote the printed line 4 (now line 5)
    assert [r.stale_search_lines for r in run.requests] == [0, 0, 0, 0, 0, 1]
    assert [sorted(r.stale_searches) for r in run.requests][-1] == [0]
    # by number: from the insertion on, no printed number holds its line
    assert [r.misnumbered_search_lines for r in run.requests] == [0, 0, 0, 0, 4, 4]
    assert (run.search_results, run.stale_search_results, run.misnumbered_search_results) == (
        2,
        1,
        2,
    )
    assert (run.stale_search_requests, run.misnumbered_search_requests) == (1, 2)
    assert (run.views_strict, run.stale_requests_strict) == (0, 0)  # no file view involved


def test_text_and_json_report_the_search_counts() -> None:
    report = audit_paths([str(RUN)])
    text = render_text(report)
    assert "search results (grep -n, rg -n, git grep -n): 2, printing 4 lines" in text
    assert "stale search results:                   changed 1/2 (50.0%)" in text
    assert "requests carrying a stale search line:  changed 1/6 (16.7%)" in text
    data = json.loads(json.dumps(render_json(report, per_request=True)))
    assert data["totals"]["searches"] == {
        "results": 2,
        "lines": 4,
        "staleResults": {"changed": 1, "changedOrMoved": 2},
        "staleLines": {"changed": 1, "changedOrMoved": 4},
        "staleRequests": {"changed": 1, "changedOrMoved": 2},
    }
    (run,) = data["runs"]
    assert run["searchList"][0] == {
        "id": 0,
        "path": "src/calc.py",
        "lines": [3, 4],
        "stale": [4],
        "moved": [3],
    }
    assert run["perRequest"][5]["searchLines"] == {"shown": 4, "stale": 1, "changedOrMoved": 4}


def test_the_shared_runs() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (the shared recorded runs)")
    totals = Totals.of(audit_paths([str(SHARED)]).runs)
    assert (totals.runs, totals.requests) == (16, 336)
    # 20 grep -n results printing 183 lines; 8 of them went stale by number (a line changed
    # or moved), 3 by the strict rule (a printed line itself changed)
    assert (totals.search_results, totals.search_lines) == (20, 183)
    assert (totals.stale_search_results, totals.misnumbered_search_results) == (3, 8)
    assert (totals.stale_search_lines, totals.misnumbered_search_lines) == (3, 34)
    assert (totals.stale_search_requests, totals.misnumbered_search_requests) == (38, 101)
    # the file views' counts are what they were before searches were read
    assert (totals.stale_requests_strict, totals.stale_requests_wide) == (159, 172)
