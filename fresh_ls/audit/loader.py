"""From command-line paths to audited runs, reporting every file that cannot be read.

A path may be a transcript file, a JSON-lines file of event-history records (one run per
line), an agent's own session file (Claude Code, Codex, Pi: one run per JSON-lines file), a
directory of OpenHands completion logs (one run: each file is one request), or any directory
holding such things (searched recursively). Files that are not transcripts at all
(``meta.json``, ``steps.jsonl``) are skipped quietly inside directories but reported when named
directly; broken files are always reported, with what is wrong, and never stop the run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fresh_ls.audit.formats import SESSION_FORMATS, openhands_completion
from fresh_ls.audit.formats.detect import LOOKS_LIKE, PARSERS, detect, detect_session
from fresh_ls.audit.interpret import interpret
from fresh_ls.audit.results import Problem, RunAudit, ViewRecord
from fresh_ls.audit.steps import TranscriptError

_LOG_NAME = re.compile(r"-\d{9,}(\.\d+)?\.json$")
_GENERIC_STEMS = {"trajectory", "output", "traj", "history", "messages", "run", "log"}


@dataclass
class Unit:
    """Files read together: one file, or the JSON files of one directory."""

    files: list[Path]
    directory: Path | None = None
    named: bool = False  # given on the command line (not found by searching a directory)


@dataclass
class Report:
    runs: list[RunAudit] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    ignored: int = 0
    files_read: int = 0


def run_name(path: Path) -> str:
    name = path.name
    for suffix in (".traj.json", ".traj", ".jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name in _GENERIC_STEMS and path.parent.name:
        return path.parent.name
    return name


def session_run_name(path: Path) -> str:
    """Claude Code names a session ``<uuid>.jsonl`` in its project's folder, Codex
    ``rollout-<time>-<uuid>.jsonl``, Pi ``<time>_<uuid>.jsonl``: the session id, which the
    agent prints and resumes by."""
    name = run_name(path)
    match = re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", name)
    return match.group(0) if match else name


def completion_run_name(path: Path) -> str:
    """OpenHands names each log ``<model>-<unix time>.json``: the run is its directory."""
    if _LOG_NAME.search(path.name) or run_name(path) == path.parent.name:
        return path.parent.name or run_name(path)
    return run_name(path)


def discover(paths: list[str]) -> tuple[list[Unit], list[Problem]]:
    units: list[Unit] = []
    problems: list[Problem] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            units.append(Unit([path], named=True))
        elif path.is_dir():
            units.extend(_walk(path))
        else:
            problems.append(Problem(raw, "no such file or directory"))
    return units, problems


def _walk(root: Path) -> Iterator[Unit]:
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        here = Path(directory)
        singles = (".jsonl", ".traj", ".traj.json")
        jsons = sorted(here / n for n in names if n.endswith(".json") and not n.endswith(singles))
        others = sorted(here / n for n in names if n.endswith(singles))
        if jsons:
            yield Unit(jsons, directory=here)
        for other in others:
            yield Unit([other])


def read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TranscriptError(f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise TranscriptError(f"cannot be read: {error.strerror}") from None
    if not text.strip():
        raise TranscriptError("empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        at_end = error.pos >= len(text.rstrip()) - 1 or error.msg.startswith("Unterminated")
        cut = " (the file looks truncated)" if at_end else ""
        raise TranscriptError(f"invalid JSON at {where}: {error.msg}{cut}") from None


def _records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, record or TranscriptError) of a JSON-lines file."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                yield (
                    number,
                    TranscriptError(
                        f"line {number} is not valid JSON ({error.msg} at column {error.colno};"
                        " truncated?)"
                    ),
                )


class Auditor:
    def __init__(
        self, fmt: str | None, shell_reads: bool, tick: Callable[[Path], None] | None = None
    ) -> None:
        self.fmt = fmt
        self.shell_reads = shell_reads
        self.tick = tick or (lambda _path: None)
        self.report = Report()

    def problem(self, where: str, error: str) -> None:
        self.report.problems.append(Problem(where, error))

    def unit(self, unit: Unit) -> None:
        completions: list[tuple[Path, Any]] = []
        for path in unit.files:
            self.report.files_read += 1
            try:
                self._file(path, unit, completions)
            except TranscriptError as error:
                self.problem(str(path), str(error))
            except Exception as error:  # never let one bad file stop the audit
                self.problem(str(path), f"could not be audited: {type(error).__name__}: {error}")
            finally:
                self.tick(path)
        if completions:
            where = str(unit.directory or completions[0][0])
            try:
                self._completion_run(unit, completions)
            except TranscriptError as error:
                self.problem(where, str(error))
            except Exception as error:
                self.problem(where, f"could not be audited: {type(error).__name__}: {error}")

    def _file(self, path: Path, unit: Unit, completions: list[tuple[Path, Any]]) -> None:
        if path.name.endswith(".jsonl"):
            self._jsonl(path, unit)
            return
        data = read_json(path)
        fmt = self._format(data, path.name, unit)
        if fmt is None:
            if unit.named:
                raise TranscriptError(
                    "not a transcript this tool reads (OpenHands completion log or event"
                    " history, SWE-agent .traj, mini-swe-agent .traj.json, Claude Code, Codex"
                    " or Pi session .jsonl); --format forces one"
                )
            self.report.ignored += 1
            return
        if fmt == openhands_completion.FORMAT:
            completions.append((path, data))
            return
        self._add(PARSERS[fmt](data, run_name(path), str(path)))

    def _format(self, data: Any, name: str, unit: Unit) -> str | None:
        """The forced format for named files; inside directories only where it fits."""
        if self.fmt is None:
            return detect(data, name)
        if unit.named or LOOKS_LIKE[self.fmt](data):
            return self.fmt
        return None

    def _jsonl(self, path: Path, unit: Unit) -> None:
        records = list(_records(path))
        if self._session(path, unit, records):
            return
        found = 0
        for number, record in records:
            where = f"{path}:{number}"
            if isinstance(record, TranscriptError):
                self.problem(str(path), str(record))
                continue
            fmt = self._format(record, path.name, unit)
            if fmt is None:
                continue
            found += 1
            name = record.get("instance_id") if isinstance(record, dict) else None
            run = str(name) if name else f"{run_name(path)}#{number}"
            try:
                self._add(PARSERS[fmt](record, run, where))
            except TranscriptError as error:
                self.problem(where, str(error))
        if not found and unit.named and not self.report.problems:
            raise TranscriptError("no transcript record in this JSON-lines file")
        if not found:
            self.report.ignored += 1

    def _session(self, path: Path, unit: Unit, records: list[tuple[int, Any]]) -> bool:
        """An agent's own session file (Claude Code, Codex, Pi): all its records are one run. A
        broken line (a session still being written ends mid-line) is reported and skipped."""
        good = [r for _, r in records if not isinstance(r, TranscriptError)]
        if self.fmt is not None:
            fmt = self.fmt if self.fmt in SESSION_FORMATS else None
            if fmt and not unit.named and not LOOKS_LIKE[fmt](good):
                fmt = None
        else:
            fmt = detect_session(good)
        if fmt is None:
            return False
        for number, record in records:
            if isinstance(record, TranscriptError):
                self.problem(f"{path}:{number}", f"{record} (line skipped, the rest audited)")
        transcript = PARSERS[fmt](good, session_run_name(path), str(path))
        if not transcript.requests:
            if unit.named:
                raise TranscriptError("holds no model request")
            self.report.ignored += 1
            return True
        self._add(transcript)
        return True

    def _add(self, transcript: Any) -> None:
        if not transcript.requests:
            raise TranscriptError("holds no model request")
        self.report.runs.append(interpret(transcript, self.shell_reads))

    def _completion_run(self, unit: Unit, logs: list[tuple[Path, Any]]) -> None:
        if len(logs) == 1:
            path, data = logs[0]
            self._add(openhands_completion.parse(data, completion_run_name(path), str(path)))
            return
        directory = unit.directory or logs[0][0].parent
        run = audit_completion_logs(logs, directory.name, str(directory), self.shell_reads)
        self.report.runs.append(run)


def audit_completion_logs(
    logs: list[tuple[Path, Any]], run: str, source: str, shell_reads: bool
) -> RunAudit:
    """A run recorded as one completion log per request: audit each file as its request.

    Files are taken in time order (their ``timestamp``, else their name). A tool call keeps one
    id across files (its ``tool_call_id``), so view ids in different requests agree. The run's
    edit counts come from the longest file, the one that saw the whole conversation.
    """
    ordered = sorted(logs, key=lambda item: (_timestamp(item[1]), item[0].name))
    ids: dict[str, int] = {}

    def step_id(call_id: str | None, position: int) -> int:
        if call_id is None:
            return position
        return ids.setdefault(call_id, len(ids))

    combined = RunAudit(run, source, openhands_completion.FORMAT, shell_reads)
    longest = -1
    views: dict[int, ViewRecord] = {}
    for index, (path, data) in enumerate(ordered):
        transcript = openhands_completion.parse(data, run, str(path), step_id)
        audit = interpret(transcript, shell_reads)
        if not audit.requests:
            continue
        # the file's last request is the one it records; its search counts come along
        combined.requests.append(dataclasses.replace(audit.requests[-1], index=index))
        views.update((v.id, v) for v in audit.views)
        size = len(data.get("messages", []))
        if size > longest:
            longest = size
            for name in (
                "edits",
                "failed_edits",
                "unplaced_edits",
                "shell_writes",
                "outside_changes",
            ):
                setattr(combined, name, getattr(audit, name))
            combined.unattributed_writes = list(audit.unattributed_writes)
            combined.notes = list(audit.notes)
    combined.views = [views[k] for k in sorted(views)]
    return combined


def _timestamp(data: Any) -> float:
    value = data.get("timestamp") if isinstance(data, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0
