"""The library entry points: audit one run, or everything under some paths."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fresh_ls.audit.formats import FORMATS
from fresh_ls.audit.loader import Auditor, Report, discover
from fresh_ls.audit.results import RunAudit
from fresh_ls.audit.steps import TranscriptError


def _check_format(fmt: str | None) -> None:
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def audit_paths(
    paths: list[str],
    fmt: str | None = None,
    shell_reads: bool = False,
    on_file: Callable[[Path], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> Report:
    """Audit every run found under ``paths``; unreadable files become ``Report.problems``.

    ``on_start(number_of_files)`` and ``on_file(path)`` let a caller show progress.
    """
    _check_format(fmt)
    units, problems = discover(paths)
    if on_start:
        on_start(sum(len(u.files) for u in units))
    auditor = Auditor(fmt, shell_reads, on_file)
    auditor.report.problems.extend(problems)
    for unit in units:
        auditor.unit(unit)
    return auditor.report


def audit_run(path: str | Path, fmt: str | None = None, shell_reads: bool = False) -> RunAudit:
    """Audit the one run at ``path`` (a transcript file or a directory of completion logs).

    ``RunAudit.requests[i]`` is model request ``i`` (0-based, in call order) with the ids of
    the views that were stale in it (``stale_strict``, ``stale_wide``); a view's id is the
    0-based index of the tool call that produced it. Raises ``TranscriptError`` when the path
    holds no readable run or more than one.
    """
    report = audit_paths([str(path)], fmt, shell_reads)
    if len(report.runs) == 1:
        return report.runs[0]
    if not report.runs:
        reasons = "; ".join(f"{p.path}: {p.error}" for p in report.problems)
        detail = f" ({reasons})" if reasons else ""
        raise TranscriptError(f"no readable transcript at {path}{detail}")
    raise TranscriptError(
        f"{path} holds {len(report.runs)} runs; use audit_paths() to audit them all"
    )
