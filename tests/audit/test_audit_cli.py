"""The ``audit`` subcommand: registration, exit codes, text and JSON output, progress."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest

from fresh_ls.audit.cli import register
from fresh_ls.audit.progress import Progress

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="fresh-ls")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["audit", *argv])
    return int(args.func(args))


def test_text_output_has_the_table_and_the_totals(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run([str(FIXTURES), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == [
        "run", "format", "requests", "views", "views", "wide", "stale", "strict", "stale",
        "wide", "last", "strict", "last", "wide", "searches", "stale", "search",
    ]  # fmt: skip
    row = next(line for line in out.splitlines() if line.startswith("calc-windowed "))
    cells = ["calc-windowed", "swe-agent-traj", "10", "2", "7", "3", "5", "yes", "yes", "0", "0"]
    assert row.split() == cells
    assert "Totals over 7 runs, 70 model requests:" in out
    assert "runs with at least one stale request:   strict 5/7 (71.4%), wide 5/7 (71.4%)" in out
    assert "requests carrying a stale view:         strict 15/70 (21.4%), wide 25/70" in out


# The documented JSON layout (docs/audit.md): key -> type, nested where it is an object.
SEARCHES_SCHEMA: dict[str, Any] = {
    "results": int,
    "lines": int,
    "staleResults": {"changed": int, "changedOrMoved": int},
    "staleLines": {"changed": int, "changedOrMoved": int},
    "staleRequests": {"changed": int, "changedOrMoved": int},
}
RUN_SCHEMA: dict[str, Any] = {
    "run": str,
    "path": str,
    "format": str,
    "requests": int,
    "views": {"strict": int, "wide": int},
    "staleRequests": {"strict": int, "wide": int},
    "staleInLastRequest": {"strict": bool, "wide": bool},
    "edits": {"applied": int, "failed": int, "unplaced": int, "shell": int, "outside": int},
    "unattributedWrites": list,
    "notes": list,
    "searches": SEARCHES_SCHEMA,
}
REQUEST_SCHEMA: dict[str, Any] = {
    "index": int,
    "afterSteps": int,
    "steps": list,
    "views": {"strict": int, "wide": int},
    "stale": {"strict": list, "wide": list},
    "searchLines": {"shown": int, "stale": int, "changedOrMoved": int},
    "staleSearches": list,
}
VIEW_SCHEMA: dict[str, Any] = {
    "id": int,
    "path": str,
    "firstLine": int,
    "lastLine": (int, type(None)),
    "strict": bool,
    "staleReason": (str, type(None)),
}
TOP_SCHEMA: dict[str, Any] = {
    "schema": str,
    "shellReads": bool,
    "runs": list,
    "totals": {
        "runs": int,
        "requests": int,
        "runsWithStaleRequest": {"strict": int, "wide": int},
        "runsStaleInLastRequest": {"strict": int, "wide": int},
        "staleRequests": {"strict": int, "wide": int},
        "searches": SEARCHES_SCHEMA,
    },
    "problems": list,
    "ignoredFiles": int,
}


def _conforms(value: Any, schema: Any, where: str = "$") -> None:
    if isinstance(schema, dict):
        assert isinstance(value, dict), where
        assert set(value) == set(schema), f"{where}: {sorted(value)} != {sorted(schema)}"
        for key, sub in schema.items():
            _conforms(value[key], sub, f"{where}.{key}")
    else:
        assert isinstance(value, schema), f"{where}: {type(value).__name__}"


def test_json_output_follows_the_documented_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.traj"
    broken.write_text("{", encoding="utf-8")
    assert _run([str(FIXTURES), str(broken), "--json", "--shell-reads"]) == 0
    data = json.loads(capsys.readouterr().out)
    _conforms(data, TOP_SCHEMA)
    assert data["schema"] == "fresh-ls.audit/1" and data["shellReads"] is True
    for run in data["runs"]:
        _conforms(run, RUN_SCHEMA)
    assert data["problems"] == [{"path": str(broken), "error": data["problems"][0]["error"]}]
    assert data["totals"]["runs"] == 7 and data["totals"]["staleRequests"]["wide"] == 49


def test_json_per_request_detail(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "swe-agent-traj" / "calc-windowed.traj"
    assert _run([str(path), "--json", "--per-request"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    _conforms(run, dict(RUN_SCHEMA, perRequest=list, viewList=list, searchList=list))
    for request in run["perRequest"]:
        _conforms(request, REQUEST_SCHEMA)
    for view in run["viewList"]:
        _conforms(view, VIEW_SCHEMA)
    assert [r["index"] for r in run["perRequest"]] == list(range(10))
    assert run["perRequest"][7]["stale"] == {"strict": [0], "wide": [0, 2]}
    assert run["perRequest"][9]["stale"] == {"strict": [0], "wide": [0, 2, 6]}
    first = run["viewList"][0]
    assert (first["firstLine"], first["lastLine"], first["strict"]) == (1, 10, True)
    assert first["staleReason"].startswith("edited by step 6")


def test_nothing_readable_exits_2_with_advice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert _run([str(tmp_path / "missing")]) == 2
    captured = capsys.readouterr()
    assert "no such file or directory" in captured.out
    assert "no transcript could be read" in captured.err and "--format" in captured.err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run([str(empty), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["runs"] == []


def test_forced_format_and_verbose_notes(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "mini-swe-agent" / "calc-text.traj.json"
    assert _run([str(path), "--format", "mini-swe-agent", "-v"]) == 0
    assert "calc-text" in capsys.readouterr().out


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal_and_for_many_files() -> None:
    tty = _Tty()
    bar = Progress(8, tty)
    for _ in range(8):
        bar.tick(Path("a.json"))
    bar.finish()
    assert "8/8 files" in tty.getvalue() and tty.getvalue().endswith("\r")
    few, pipe = _Tty(), io.StringIO()
    Progress(3, few).tick(Path("a.json"))
    Progress(50, pipe).tick(Path("a.json"))
    assert few.getvalue() == "" and pipe.getvalue() == ""
    quiet = _Tty()
    Progress(50, quiet, enabled=False).tick(Path("a.json"))
    assert quiet.getvalue() == ""
