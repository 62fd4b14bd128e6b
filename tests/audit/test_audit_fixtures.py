"""Exact counts on the purpose-written transcripts, one per format.

The story behind every fixture is told in ``audit_fixture_builder.py``: strict views go stale in
requests 7-9, the edit-result snippets from request 5 on, the shell read from request 3 on.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from fresh_ls.audit import audit_run

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "transcripts"

EDITOR_RUNS = [
    ("openhands-completion/calc-run.json", "openhands-completion"),
    ("openhands-completion/llm_completions/calc-split", "openhands-completion"),
    ("openhands-events/output.jsonl", "openhands-events"),
    ("swe-agent-traj/calc-windowed.traj", "swe-agent-traj"),
    ("swe-agent-traj/calc-editor.traj", "swe-agent-traj"),
]
MINI_RUNS = ["mini-swe-agent/calc.traj.json", "mini-swe-agent/calc-text.traj.json"]


@pytest.mark.parametrize(("relative", "fmt"), EDITOR_RUNS)
def test_editor_runs_count_exactly(relative: str, fmt: str) -> None:
    run = audit_run(FIXTURES / relative)
    assert run.format == fmt
    assert len(run.requests) == 10
    assert (run.views_strict, run.views_wide) == (2, 7)
    assert run.stale_requests_strict == 3  # requests 7, 8, 9: view A after the edit of line 4
    assert run.stale_requests_wide == 5  # requests 5..9: snippet C after the edit of line 21
    assert run.last_stale_strict and run.last_stale_wide
    assert (run.edits, run.failed_edits, run.unplaced_edits) == (5, 1, 0)
    stale_from = [r.index for r in run.requests if r.stale_strict]
    assert stale_from == [7, 8, 9]
    assert [r.index for r in run.requests if r.stale_wide] == [5, 6, 7, 8, 9]


@pytest.mark.parametrize(("relative", "fmt"), EDITOR_RUNS)
def test_shell_reads_widen_only_the_wide_count(relative: str, fmt: str) -> None:
    run = audit_run(FIXTURES / relative, shell_reads=True)
    assert (run.views_strict, run.views_wide) == (2, 8)
    assert run.stale_requests_strict == 3
    assert run.stale_requests_wide == 7  # the sed -n read of lines 17-19 goes stale at step 2


@pytest.mark.parametrize("relative", MINI_RUNS)
def test_mini_swe_agent_has_shell_views_only(relative: str) -> None:
    plain = audit_run(FIXTURES / relative)
    assert plain.format == "mini-swe-agent"
    assert len(plain.requests) == 10
    assert (plain.views_strict, plain.views_wide) == (0, 0)
    assert (plain.stale_requests_strict, plain.stale_requests_wide) == (0, 0)
    wide = audit_run(FIXTURES / relative, shell_reads=True)
    assert (wide.views_strict, wide.views_wide) == (0, 3)
    assert (wide.stale_requests_strict, wide.stale_requests_wide) == (0, 7)
    # The failed sed on a missing file and the heredoc to notes.txt change no viewed line.
    assert wide.edits == 5
    views = {v.id: v for v in wide.views}
    assert views[0].stale_reason  # lines 1-10, hit by the sed of line 4
    assert views[1].stale_reason  # lines 17-19, hit by the unaddressed s/value_18 = 18$/
    assert not views[5].stale_reason  # lines 15-20, moved to 16-21: the sed of line 15 misses


def test_view_ids_are_the_tool_calls_that_made_them() -> None:
    run = audit_run(FIXTURES / "openhands-completion/calc-run.json", shell_reads=True)
    strict = sorted(v.id for v in run.views if v.strict)
    assert strict == [0, 5]
    last = run.requests[-1]
    assert last.stale_strict == frozenset({0})
    # read D (1), snippet C (2), snippet G (6) and view A (0); view F (5) stayed fresh.
    assert last.stale_wide == frozenset({0, 1, 2, 6})
    assert last.after_steps == 9 and last.steps == (9,)
    assert run.requests[3].after_steps == 3 and run.requests[3].steps == (3,)


def test_events_step_ids_count_the_system_prompt() -> None:
    run = audit_run(FIXTURES / "openhands-events/output.jsonl")
    # Step 0 is the system prompt, as in the shared steps.jsonl; request 0 follows it.
    assert run.requests[0].after_steps == 1
    assert sorted(v.id for v in run.views if v.strict) == [1, 6]


def test_one_file_per_request_agrees_with_the_reconstructed_sequence() -> None:
    single = audit_run(FIXTURES / "openhands-completion/calc-run.json")
    split = audit_run(FIXTURES / "openhands-completion/llm_completions/calc-split")
    assert split.run == "calc-split"
    for one, other in zip(single.requests, split.requests, strict=True):
        assert (one.stale_strict, one.stale_wide) == (other.stale_strict, other.stale_wide)
        assert (one.views_strict, one.views_wide) == (other.views_strict, other.views_wide)


def test_fixtures_are_what_the_builder_builds() -> None:
    spec = importlib.util.spec_from_file_location(
        "audit_fixture_builder", Path(__file__).with_name("audit_fixture_builder.py")
    )
    assert spec and spec.loader
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    for relative, document in builder.build().items():
        committed = (FIXTURES / relative).read_text(encoding="utf-8")
        assert committed == builder.serialize(relative, document), relative
        if not relative.endswith(".jsonl"):
            json.loads(committed)
