"""Broken, truncated and foreign files are reported by name and skipped; the audit goes on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fresh_ls.audit import TranscriptError, audit_paths, audit_run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
GOOD = FIXTURES / "swe-agent-traj" / "calc-windowed.traj"


def _errors(paths: list[Path]) -> dict[str, str]:
    report = audit_paths([str(p) for p in paths])
    return {Path(p.path).name: p.error for p in report.problems}


def test_a_truncated_file_is_reported_with_what_is_wrong(tmp_path: Path) -> None:
    text = GOOD.read_text(encoding="utf-8")
    cut = tmp_path / "cut.traj"
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    report = audit_paths([str(cut), str(GOOD)])
    assert [r.run for r in report.runs] == ["calc-windowed"]
    (problem,) = report.problems
    assert problem.path == str(cut)
    assert "invalid JSON" in problem.error and "truncated" in problem.error


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.json", "", "empty file"),
        ("words.traj", "not json at all", "invalid JSON"),
        ("meta.json", json.dumps({"agent": "x", "format": "y"}), "not a transcript"),
        ("list.json", json.dumps([1, 2, 3]), "not a transcript"),
    ],
)
def test_unreadable_files_named_directly_are_problems(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    errors = _errors([path])
    assert message in errors[name]


def test_wrong_structure_inside_a_known_format(tmp_path: Path) -> None:
    bad_trajectory = tmp_path / "bad.traj"
    bad_trajectory.write_text(json.dumps({"trajectory": [{"action": 5}]}), encoding="utf-8")
    bad_messages = tmp_path / "bad-messages.json"
    bad_messages.write_text(
        json.dumps({"messages": [{"role": "system"}, "oops"], "response": {}}), encoding="utf-8"
    )
    errors = _errors([bad_trajectory, bad_messages])
    assert errors["bad.traj"] == "trajectory entry 0 has no 'action' text"
    assert "message 1 is str" in errors["bad-messages.json"]


def test_a_forced_format_that_does_not_fit_is_reported(tmp_path: Path) -> None:
    report = audit_paths([str(GOOD)], fmt="openhands-events")
    assert not report.runs
    assert "not an OpenHands event history" in report.problems[0].error


def test_a_bad_line_of_a_jsonl_file_skips_only_that_record(tmp_path: Path) -> None:
    source = (FIXTURES / "openhands-events" / "output.jsonl").read_text(encoding="utf-8")
    mixed = tmp_path / "output.jsonl"
    mixed.write_text(source + source[:300] + "\n" + source, encoding="utf-8")
    report = audit_paths([str(mixed)])
    assert len(report.runs) == 2
    (problem,) = report.problems
    assert "line 2 is not valid JSON" in problem.error


def test_directories_skip_foreign_json_quietly_and_report_broken_files(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "one"
    run_dir.mkdir(parents=True)
    shutil.copy(GOOD, run_dir / "calc.traj")
    (run_dir / "meta.json").write_text(json.dumps({"agent": "x"}), encoding="utf-8")
    (run_dir / "steps.jsonl").write_text(json.dumps({"tool": "view"}) + "\n", encoding="utf-8")
    (run_dir / "broken.traj").write_text('{"trajectory": [', encoding="utf-8")
    report = audit_paths([str(tmp_path / "runs")])
    assert [r.run for r in report.runs] == ["calc"]
    assert report.ignored == 2
    assert [Path(p.path).name for p in report.problems] == ["broken.traj"]


def test_missing_paths_are_problems_not_crashes(tmp_path: Path) -> None:
    report = audit_paths([str(tmp_path / "nope"), str(GOOD)])
    assert len(report.runs) == 1
    assert report.problems[0].error == "no such file or directory"


def test_a_transcript_cut_after_a_tool_call_still_counts(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "openhands-completion" / "calc-run.json").read_text())
    data["messages"] = data["messages"][:-1]  # drop the last tool result
    path = tmp_path / "cut-run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    run = audit_run(path)
    assert len(run.requests) == 10
    assert any("has no tool result" in note for note in run.notes)


def test_audit_run_raises_when_nothing_is_readable(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(TranscriptError, match="invalid JSON"):
        audit_run(path)
    with pytest.raises(TranscriptError, match="holds 2 runs"):
        audit_run(FIXTURES / "swe-agent-traj")
    with pytest.raises(ValueError, match="unknown format"):
        audit_run(GOOD, fmt="aider")


def _locations(document: object, prefix: tuple = ()) -> list[tuple]:
    found: list[tuple] = []
    children = (
        document.items()
        if isinstance(document, dict)
        else enumerate(document)
        if isinstance(document, list)
        else []
    )
    for key, value in children:
        found.append((*prefix, key))
        found.extend(_locations(value, (*prefix, key)))
    return found


ODD_VALUES = [None, 1, -5, "x", "ERROR:", [], {}, [1], {"a": 1}, True]
MUTATED = [
    "openhands-completion/calc-run.json",
    "swe-agent-traj/calc-windowed.traj",
    "swe-agent-traj/calc-editor.traj",
    "mini-swe-agent/calc.traj.json",
    "mini-swe-agent/calc-text.traj.json",
]


@pytest.mark.parametrize("relative", [*MUTATED, "openhands-events/output.jsonl"])
@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data())
def test_odd_shapes_inside_a_transcript_never_cause_internal_errors(
    relative: str, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = (FIXTURES / relative).read_text(encoding="utf-8")
    document = json.loads(text.splitlines()[0] if relative.endswith(".jsonl") else text)
    locations = _locations(document)
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(locations))
        parent = document
        try:
            for key in where[:-1]:
                parent = parent[key]
            parent[where[-1]] = data.draw(st.sampled_from(ODD_VALUES))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed this place
    path = tmp_path_factory.mktemp("odd") / Path(relative).name
    path.write_text(json.dumps(document) + "\n", encoding="utf-8")
    report = audit_paths([str(path)], shell_reads=True)
    assert len(report.runs) + len(report.problems) == 1
    assert not any(p.error.startswith("could not be audited") for p in report.problems)
