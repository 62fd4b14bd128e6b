"""The ``replay`` subcommand: run fixtures, print a table and totals (``--json`` for machines)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fresh_ls.replay.agreement import Agreement
from fresh_ls.report import table


def _agreement(fixture: Path, result: Any) -> Agreement | None:
    """The audit's verdicts on the same run, when its transcript is there to read."""
    from fresh_ls.audit.steps import TranscriptError
    from fresh_ls.replay.agreement import compare

    if not (fixture / "trajectory.json").is_file():
        return None
    try:
        meta = json.loads((fixture / "meta.json").read_text())
        return compare(fixture, result, meta.get("format"))
    except (TranscriptError, ValueError, OSError):
        return None


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "replay",
        help="replay recorded agent runs (meta.json, steps.jsonl, base/) against a real server",
    )
    p.add_argument("fixtures", nargs="+", metavar="FIXTURE", help="run folders to replay")
    p.add_argument(
        "--budget-bytes",
        type=int,
        default=131072,
        help="the projection budget of each checked request (default: 131072)",
    )
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.add_argument("--keep", action="store_true", help="keep the scratch roots")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from fresh_ls.replay.runner import RunResult, replay

    fixtures = [Path(f) for f in args.fixtures if Path(f).is_dir()]
    missing = [f for f in args.fixtures if not Path(f).is_dir()]
    for f in missing:
        print(
            f"fresh-ls replay: {f} is not a run folder (meta.json, steps.jsonl, base/)",
            file=sys.stderr,
        )
    if not fixtures:
        return 2
    results: list[RunResult] = []
    agreements: list[Agreement | None] = []
    for n, fixture in enumerate(fixtures, start=1):
        if not args.json:
            print(f"[{n}/{len(fixtures)}] {fixture.name}", file=sys.stderr)
        result = replay(fixture, args.budget_bytes, args.keep)
        results.append(result)
        agreements.append(_agreement(fixture, result))
    totals = _totals(results)
    found = [a for a in agreements if a is not None]
    totals["audit_requests"] = sum(a.requests for a in found)
    totals["audit_agree_strict"] = sum(a.agree_strict for a in found)
    totals["audit_agree_wide"] = sum(a.agree_wide for a in found)
    if args.json:
        runs = []
        for r, a in zip(results, agreements, strict=True):
            runs.append({**r.to_json(), "audit": asdict(a) if a is not None else None})
        print(json.dumps({"runs": runs, "totals": totals}, indent=2))
    else:
        _print(results, totals)
        for a in found:
            for index, audit_ids, server_ids in a.differ_wide:
                print(
                    f"audit differs (wide) · {a.run} · request {index}: audit stale views "
                    f"{audit_ids or 'none'}, server changed views {server_ids or 'none'}"
                )
    failed = (
        totals["false_fresh"]
        or totals["search_false_fresh"]
        or totals["inexact"]
        or totals["lost"]
        or totals["errors"]
    )
    return 1 if failed else 0


def _totals(results: list[Any]) -> dict[str, Any]:
    return {
        "runs": len(results),
        "requests": sum(len(r.requests) for r in results),
        "views_registered": sum(r.views_registered for r in results),
        "edit_results": sum(r.edit_results for r in results),
        "false_fresh": sum(r.false_fresh for r in results),
        "search_views": sum(r.search_views for r in results),
        "stale_search_requests": sum(r.stale_search_requests for r in results),
        "search_false_fresh": sum(r.search_false_fresh for r in results),
        "inexact": sum(r.inexact for r in results),
        "lost": sum(r.lost for r in results),
        "stale_requests_without": sum(r.stale_requests_without for r in results),
        "stale_requests_with": sum(r.stale_requests_with for r in results),
        "runs_stale_without": sum(1 for r in results if r.stale_requests_without),
        "projection_bytes": sum(r.projection_bytes for r in results),
        "whole_file_bytes": sum(r.whole_file_bytes for r in results),
        "diverged_views": sum(r.diverged_views for r in results),
        "not_reproduced": sum(len(r.not_reproduced) for r in results),
        "errors": sum(1 for r in results if r.error),
    }


def _print(results: list[Any], t: dict[str, Any]) -> None:
    rows = [
        [
            r.run,
            f"{len(r.requests)}",
            f"{r.views_registered}",
            f"{r.stale_requests_without}",
            f"{r.stale_requests_with}",
            f"{r.false_fresh}",
            f"{r.inexact}",
            f"{r.projection_bytes} bytes",
            f"{r.whole_file_bytes} bytes",
        ]
        for r in results
    ]
    table(
        rows,
        [
            "run",
            "requests",
            "views",
            "stale w/o",
            "stale with",
            "false fresh",
            "inexact",
            "projected",
            "whole files",
        ],
    )
    print()
    ratio = (t["whole_file_bytes"] / t["projection_bytes"]) if t["projection_bytes"] else 0.0
    print(
        f"{t['runs']} runs · {t['requests']} requests · {t['views_registered']} views "
        f"({t['edit_results']} edit results)"
    )
    print(
        f"requests carrying a stale view: {t['stale_requests_without']} without fresh-ls, "
        f"{t['stale_requests_with']} with it ({t['runs_stale_without']} runs stale without)"
    )
    print(
        f"search results: {t['search_views']} files' printed lines registered · requests "
        f"carrying a stale search line without fresh-ls: {t['stale_search_requests']} · "
        f"stale search results called fresh: {t['search_false_fresh']}"
    )
    print(
        f"false fresh views: {t['false_fresh']} · inexact entries: {t['inexact']} · "
        f"lost units (anchored): {t['lost']}"
    )
    print(
        f"projection {t['projection_bytes']} bytes vs whole-file re-sync "
        f"{t['whole_file_bytes']} bytes ({ratio:.1f}x smaller)"
    )
    for r in results:
        for note in r.not_reproduced:
            print(f"not reproduced · {r.run} · {note}")
        if r.error:
            print(f"error · {r.run} · {r.error}")
    if t.get("audit_requests"):
        print(
            f"audit agreement on stale requests: strict {t['audit_agree_strict']} of "
            f"{t['audit_requests']}, wide {t['audit_agree_wide']} of {t['audit_requests']}"
        )
    if t["diverged_views"]:
        print(
            f"{t['diverged_views']} views showed text that differs from the replayed file "
            "(registered as already changed)"
        )
