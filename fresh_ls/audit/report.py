"""The audit as a readable table or as JSON (schema ``fresh-ls.audit/1``, in docs/audit.md).

Both are built from the same ``Report`` so the numbers cannot disagree. The JSON names are
camelCase like the rest of fresh-ls's wire formats; fields are only ever added.
"""

from __future__ import annotations

from typing import Any

from fresh_ls.audit.ledger import END
from fresh_ls.audit.loader import Report
from fresh_ls.audit.results import RunAudit, Totals

SCHEMA = "fresh-ls.audit/1"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else f"{part}/0"


def _row_cells(run: RunAudit) -> list[str]:
    return [
        run.run,
        run.format,
        str(len(run.requests)),
        str(run.views_strict),
        str(run.views_wide),
        str(run.stale_requests_strict),
        str(run.stale_requests_wide),
        _yes(run.last_stale_strict),
        _yes(run.last_stale_wide),
        str(run.search_results),
        str(run.stale_search_requests),
    ]


HEADERS = [
    "run",
    "format",
    "requests",
    "views",
    "views wide",
    "stale strict",
    "stale wide",
    "last strict",
    "last wide",
    "searches",
    "stale search",
]


def table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [HEADERS, *rows]) for i in range(len(HEADERS))]

    def line(cells: list[str]) -> str:
        parts = [
            cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    return [line(HEADERS), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def render_text(report: Report, verbose: bool = False) -> str:
    out: list[str] = []
    runs = report.runs
    if runs:
        out.extend(table([_row_cells(r) for r in runs]))
        totals = Totals.of(runs)
        out.append("")
        out.append(f"Totals over {totals.runs} runs, {totals.requests} model requests:")
        out.append(
            "  runs with at least one stale request:   "
            f"strict {_share(totals.runs_stale_strict, totals.runs)}, "
            f"wide {_share(totals.runs_stale_wide, totals.runs)}"
        )
        out.append(
            "  runs still stale in their last request: "
            f"strict {_share(totals.runs_last_stale_strict, totals.runs)}, "
            f"wide {_share(totals.runs_last_stale_wide, totals.runs)}"
        )
        out.append(
            "  requests carrying a stale view:         "
            f"strict {_share(totals.stale_requests_strict, totals.requests)}, "
            f"wide {_share(totals.stale_requests_wide, totals.requests)}"
        )
        out.extend(_search_totals(totals))
        shell = (
            "shell reads counted as views (wide)"
            if runs[0].shell_reads
            else ("shell reads not counted (--shell-reads counts them)")
        )
        out.append(
            "  strict: editor views, SWE-agent windows, Claude Code and Pi reads;"
            " wide: also edit results;"
        )
        out.append(f"  {shell}")
        shell_only = sorted({r.format for r in runs if r.format in _SHELL_ONLY})
        if shell_only and not runs[0].shell_reads:
            out.append(
                f"  {', '.join(shell_only)} read files only through the shell:"
                " --shell-reads counts those reads"
            )
        out.extend(_caveats(runs, verbose))
    if report.problems:
        out.append("")
        out.append(f"Could not audit {len(report.problems)} file(s):")
        out.extend(f"  {p.path}: {p.error}" for p in report.problems)
    if report.ignored:
        out.append("")
        out.append(f"Skipped {report.ignored} file(s) that hold no transcript (e.g. meta.json).")
    return "\n".join(out) + "\n"


def _search_totals(totals: Totals) -> list[str]:
    """Search results beside the views: stale when a printed line changed (the strict rule),
    and, by number, also when it moved (the number the model was shown no longer holds)."""
    if not totals.search_results:
        return ["  search results (grep -n, rg -n, git grep -n): none"]
    return [
        f"  search results (grep -n, rg -n, git grep -n): {totals.search_results}, "
        f"printing {totals.search_lines} lines",
        "  stale search results:                   "
        f"changed {_share(totals.stale_search_results, totals.search_results)}, "
        f"changed or moved {_share(totals.misnumbered_search_results, totals.search_results)}",
        "  stale search lines:                     "
        f"changed {_share(totals.stale_search_lines, totals.search_lines)}, "
        f"changed or moved {_share(totals.misnumbered_search_lines, totals.search_lines)}",
        "  requests carrying a stale search line:  "
        f"changed {_share(totals.stale_search_requests, totals.requests)}, "
        f"changed or moved {_share(totals.misnumbered_search_requests, totals.requests)}",
    ]


def _searches_json(
    results: int,
    lines: int,
    stale: tuple[int, int, int],
    misnumbered: tuple[int, int, int],
) -> dict[str, Any]:
    return {
        "results": results,
        "lines": lines,
        "staleResults": {"changed": stale[0], "changedOrMoved": misnumbered[0]},
        "staleLines": {"changed": stale[1], "changedOrMoved": misnumbered[1]},
        "staleRequests": {"changed": stale[2], "changedOrMoved": misnumbered[2]},
    }


#: Formats whose agent has no file-viewing tool: every view is a shell read.
_SHELL_ONLY = frozenset({"codex", "mini-swe-agent"})


def _caveats(runs: list[RunAudit], verbose: bool) -> list[str]:
    lines: list[str] = []
    unplaced = sum(r.unplaced_edits for r in runs)
    unattributed = sum(len(r.unattributed_writes) for r in runs)
    if unplaced:
        lines.append(
            f"  {unplaced} edit(s) could not be placed on lines: every view of their file was"
            " counted stale"
        )
    outside = sum(r.outside_changes for r in runs)
    if outside:
        lines.append(
            f"  {outside} change(s) made outside the agent were seen in later tool output:"
            " the views they hit are counted stale"
        )
    if unattributed:
        lines.append(
            f"  {unattributed} shell write(s) to files that could not be named were ignored"
        )
    if verbose:
        for run in runs:
            details = [
                *(f"{n}" for n in run.notes),
                *(f"unattributed: {w}" for w in run.unattributed_writes),
            ]
            for detail in details:
                lines.append(f"  {run.run}: {detail}")
    return lines


def _last(value: int) -> int | None:
    return None if value >= END else value


def run_json(run: RunAudit, per_request: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "run": run.run,
        "path": run.path,
        "format": run.format,
        "requests": len(run.requests),
        "views": {"strict": run.views_strict, "wide": run.views_wide},
        "staleRequests": {"strict": run.stale_requests_strict, "wide": run.stale_requests_wide},
        "staleInLastRequest": {"strict": run.last_stale_strict, "wide": run.last_stale_wide},
        "edits": {
            "applied": run.edits,
            "failed": run.failed_edits,
            "unplaced": run.unplaced_edits,
            "shell": run.shell_writes,
            "outside": run.outside_changes,
        },
        "unattributedWrites": list(run.unattributed_writes),
        "notes": list(run.notes),
        "searches": _searches_json(
            run.search_results,
            run.search_lines,
            (run.stale_search_results, run.stale_search_lines, run.stale_search_requests),
            (
                run.misnumbered_search_results,
                run.misnumbered_search_lines,
                run.misnumbered_search_requests,
            ),
        ),
    }
    if per_request:
        data["perRequest"] = [
            {
                "index": r.index,
                "afterSteps": r.after_steps,
                "steps": list(r.steps),
                "views": {"strict": r.views_strict, "wide": r.views_wide},
                "stale": {"strict": sorted(r.stale_strict), "wide": sorted(r.stale_wide)},
                "searchLines": {
                    "shown": r.search_lines,
                    "stale": r.stale_search_lines,
                    "changedOrMoved": r.misnumbered_search_lines,
                },
                "staleSearches": sorted(r.stale_searches),
            }
            for r in run.requests
        ]
        data["viewList"] = [
            {
                "id": v.id,
                "path": v.path,
                "firstLine": v.first,
                "lastLine": _last(v.last),
                "strict": v.strict,
                "staleReason": v.stale_reason or None,
            }
            for v in run.views
        ]
        data["searchList"] = [
            {
                "id": s.id,
                "path": s.path,
                "lines": list(s.lines),
                "stale": list(s.stale),
                "moved": list(s.moved),
            }
            for s in run.searches
        ]
    return data


def render_json(report: Report, per_request: bool = False) -> dict[str, Any]:
    totals = Totals.of(report.runs)
    return {
        "schema": SCHEMA,
        "shellReads": bool(report.runs and report.runs[0].shell_reads),
        "runs": [run_json(r, per_request) for r in report.runs],
        "totals": {
            "runs": totals.runs,
            "requests": totals.requests,
            "runsWithStaleRequest": {
                "strict": totals.runs_stale_strict,
                "wide": totals.runs_stale_wide,
            },
            "runsStaleInLastRequest": {
                "strict": totals.runs_last_stale_strict,
                "wide": totals.runs_last_stale_wide,
            },
            "staleRequests": {
                "strict": totals.stale_requests_strict,
                "wide": totals.stale_requests_wide,
            },
            "searches": _searches_json(
                totals.search_results,
                totals.search_lines,
                (
                    totals.stale_search_results,
                    totals.stale_search_lines,
                    totals.stale_search_requests,
                ),
                (
                    totals.misnumbered_search_results,
                    totals.misnumbered_search_lines,
                    totals.misnumbered_search_requests,
                ),
            ),
        },
        "problems": [{"path": p.path, "error": p.error} for p in report.problems],
        "ignoredFiles": report.ignored,
    }
