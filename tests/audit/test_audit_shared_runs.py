"""The audit over the real agent runs in ``../shared/fixtures`` (skipped when absent).

Sanity: every run parses, its format is the one ``meta.json`` names, and the counts are
consistent. Beyond sanity, the strict verdicts inferred from the transcript alone are compared
with a replay of ``steps.jsonl`` over the ``base/`` files, where each edit's lines are found in
the real file content instead of being inferred.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fresh_ls.audit import RunAudit, audit_paths
from fresh_ls.audit.locate import trimmed_lines

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "fixtures"
RUNS = SHARED / "trajectories"
MINI = SHARED / "transcripts" / "mini-swe-agent"

pytestmark = [
    pytest.mark.shared,
    pytest.mark.skipif(
        not RUNS.is_dir(),
        reason=f"real agent runs not found at {SHARED} (the ../shared checkout is absent)",
    ),
]


@pytest.fixture(scope="module", params=[False, True], ids=["views", "shell-reads"])
def audited(request: pytest.FixtureRequest) -> list[RunAudit]:
    report = audit_paths([str(RUNS), str(MINI)], shell_reads=request.param)
    assert report.problems == []
    return report.runs


def test_every_run_parses_with_consistent_counts(audited: list[RunAudit]) -> None:
    run_dirs = sorted(p for p in RUNS.iterdir() if (p / "meta.json").is_file())
    assert len(audited) == len(run_dirs) + len(list(MINI.glob("*.traj.json")))
    for run in audited:
        assert run.requests, run.run
        assert 0 <= run.stale_requests_strict <= run.stale_requests_wide <= len(run.requests)
        assert run.views_strict <= run.views_wide
        ids = {v.id for v in run.views}
        previous: frozenset[int] = frozenset()
        for index, request in enumerate(run.requests):
            assert request.index == index
            assert request.stale_strict <= request.stale_wide <= ids
            assert previous <= request.stale_wide  # nothing leaves an append-only context
            previous = request.stale_wide
        assert run.last_stale_strict == bool(run.requests[-1].stale_strict)


def test_formats_are_detected_as_meta_json_says(audited: list[RunAudit]) -> None:
    by_name = {run.run: run for run in audited}
    for directory in RUNS.iterdir():
        meta = directory / "meta.json"
        if meta.is_file():
            assert by_name[directory.name].format == json.loads(meta.read_text())["format"]
    for run in audited:
        if Path(run.path).parent == MINI:
            assert run.format == "mini-swe-agent"


_NUMBERED = re.compile(r"^ *(\d+)\t|^(\d+):", re.M)
_FAILED = ("ERROR", "No replacement was performed", "syntax error")


def _shown(observation: str) -> tuple[int, int] | None:
    numbers = [int(m.group(1) or m.group(2)) for m in _NUMBERED.finditer(observation)]
    if not numbers or observation.startswith("Here's the files"):
        return None
    last = numbers[0]
    for number in numbers[1:]:
        if number != last + 1:
            break
        last = number
    return numbers[0], last


def replay_strict(run_dir: Path) -> list[set[int]]:
    """Stale strict view ids after each step, with edits placed in the real file content."""
    steps = [json.loads(line) for line in (run_dir / "steps.jsonl").read_text().splitlines()]
    files: dict[str, list[str]] = {}
    views: list[list] = []  # [id, path, first, last, stale]
    after: list[set[int]] = []

    def content(path: str) -> list[str]:
        if path not in files:
            base = run_dir / "base" / path
            files[path] = base.read_text().split("\n") if base.is_file() else []
        return files[path]

    def edit(path: str, first: int, old_count: int, new_count: int) -> None:
        last = first + old_count - 1
        for view in views:
            if view[1] != path or view[4]:
                continue
            hit = view[2] <= last and view[3] >= first if old_count else view[2] < first <= view[3]
            if hit:
                view[4] = True
            elif view[2] > last:
                view[2] += new_count - old_count
                view[3] += new_count - old_count

    for index, step in enumerate(steps):
        tool, path, observation = step["tool"], step.get("path"), step.get("observation") or ""
        failed = any(marker in observation[:300] for marker in _FAILED)
        if tool == "view" and path and not failed and _shown(observation):
            first, last = _shown(observation)  # type: ignore[misc]
            views.append([index, path, first, last, False])
        elif tool in ("str_replace", "edit_lines", "insert") and path and not failed:
            lines = content(path)
            if tool == "str_replace":
                text = "\n".join(lines)
                old, new = step["old_str"], step.get("new_str") or ""
                assert text.count(old) == 1, (run_dir.name, index)
                start = text[: text.index(old)].count("\n") + 1
                end = start + old.count("\n")
                files[path] = text.replace(old, new, 1).split("\n")
                replaced = files[path][start - 1 : start + new.count("\n")]
                change = trimmed_lines(start, list(lines[start - 1 : end]), replaced, "base")
            elif tool == "insert":
                at, new = step["insert_line"], (step.get("new_str") or "").split("\n")
                files[path] = lines[:at] + new + lines[at:]
                change = trimmed_lines(at + 1, [], new, "base")
            else:
                start, end = step["start"], step["end"]
                new = (step.get("new_str") or "").split("\n")
                files[path] = lines[: start - 1] + new + lines[end:]
                change = trimmed_lines(start, list(lines[start - 1 : end]), new, "base")
            if change.old_count or change.new_lines:
                edit(path, change.first, change.old_count, len(change.new_lines))
        elif tool == "create" and path and not failed:
            for view in views:
                view[4] = view[4] or view[1] == path
            files[path] = (step.get("file_text") or "").split("\n")
        after.append({view[0] for view in views if view[4]})
    return after


def test_strict_verdicts_match_a_replay_over_base_files() -> None:
    report = audit_paths([str(RUNS)])
    by_name = {run.run: run for run in report.runs}
    for run_dir in sorted(p for p in RUNS.iterdir() if (p / "base").is_dir()):
        truth = replay_strict(run_dir)
        run = by_name[run_dir.name]
        for request in run.requests:
            expected = truth[request.after_steps - 1] if request.after_steps else set()
            assert set(request.stale_strict) == expected, (run.run, request.index)
