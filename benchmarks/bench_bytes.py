"""Bytes put back into the prompt when a few of many views went stale: whole-file re-sync
vs our projection.

Scenario: the 100 generated modules / 500 views of ``bench_project.py``, then a few
files edited on disk. Two edit shapes:

* ``in place``: one statement line rewritten inside one view in each of 5 files (the
  line count stays, so only the views holding that line go stale);
* ``insert``: one statement line added inside one view in each of 5 files (every view
  below the edit in those files now sits at other line numbers: ``moved``, also stale
  for ``policy: "stale"``).

Compared, for the views ``fresh/stale`` reports not fresh:

* whole-file re-sync (CORVUS-style): the whole current file for every stale view, in
  bytes; also with each file counted once (the kindest reading of the baseline);
* ours: ``usedBytes`` of ``Engine.project`` (default budget, policy ``stale``): the
  rendered entries with their headers, which is what is appended to the prompt. The
  markers that replace the old tool results are reported beside it; the contract does
  not count them in ``usedBytes``.

    .venv/bin/python benchmarks/bench_bytes.py [--json]
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any

import _common as C

from fresh_ls.core.text import utf8_len
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import ObserveParams, StaleParams, unstructure

SESSION = "agent-1"
EDITED_FILES = 5
_SIMPLE = re.compile(r"^(\s+)\w+ = \w+ \* \d+ \+ len\(\w+\)\n$")


async def _scenario(shape: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fresh-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        corpus = C.write_corpus(root, 100, (200, 450))
        views = C.plan_views(corpus, 5)
        engine = await Engine.open(root, Path(tmp) / "state")
        for vid, rel, first, last in views:
            await engine.observe(
                ObserveParams(
                    session=SESSION, path=rel, view_id=vid, first_line=first, last_line=last
                )
            )
        assert json.loads(C.project(engine, SESSION))["usedBytes"] == 0

        rng = random.Random(3)
        edited = 0
        for rel in rng.sample(corpus.files, len(corpus.files)):
            if edited == EDITED_FILES:
                break
            lines = (root / rel).read_text("utf-8").splitlines(keepends=True)
            # a statement line inside a ranged (not whole-file) view of this file
            ranged = [(f, last) for _, p, f, last in views if p == rel and last - f < 200]
            spots = [
                n
                for f, last in ranged
                for n in range(f, last + 1)
                if n <= len(lines) and _SIMPLE.match(lines[n - 1])
            ]
            if not spots:
                continue
            n = rng.choice(spots)
            m = _SIMPLE.match(lines[n - 1])
            assert m is not None
            new = f"{m.group(1)}bench_value = {edited}\n"
            if shape == "in place":
                lines[n - 1] = new
            else:
                lines.insert(n, new)
            (root / rel).write_text("".join(lines), "utf-8")
            edited += 1

        stale = unstructure(engine.stale(StaleParams(session=SESSION)))["views"]
        stale = [v for v in stale if v["status"] != "fresh"]
        plan = json.loads(C.project(engine, SESSION))
        await engine.close()
        size = {rel: (root / rel).stat().st_size for rel in corpus.files}
        ranged = 0  # re-reading exactly the stale views' line ranges, as they are now
        for v in stale:
            now = (root / v["path"]).read_text("utf-8").splitlines(keepends=True)
            ranged += utf8_len(
                "".join(now[v["observed"]["firstLine"] - 1 : v["observed"]["lastLine"]])
            )

    statuses: dict[str, int] = {}
    for v in stale:
        statuses[v["status"]] = statuses.get(v["status"], 0) + 1
    whole_per_view = sum(size[v["path"]] for v in stale)
    whole_per_file = sum(size[p] for p in {v["path"] for v in stale})
    markers = sum(utf8_len(m["text"]) for m in plan["markers"])
    used = plan["usedBytes"]
    by_status: dict[str, int] = {}
    for e in plan["entries"]:
        by_status[e["status"]] = by_status.get(e["status"], 0) + e["bytes"]
    return {
        "shape": shape,
        "views": len(views),
        "stale_views": len(stale),
        "stale_by_status": statuses,
        "edited_files": edited,
        "whole_file_per_view_bytes": whole_per_view,
        "whole_file_per_file_bytes": whole_per_file,
        "ours_used_bytes": used,
        "ours_entries": len(plan["entries"]),
        "ours_omitted": len(plan["omitted"]),
        "ours_marker_bytes": markers,
        "ours_entry_bytes_by_status": by_status,
        "stale_ranges_reread_bytes": ranged,
        "budget_bytes": plan["budgetBytes"],
        "ratio_whole_per_view_over_ours": C.ratio(whole_per_view, used),
        "ratio_whole_per_file_over_ours": C.ratio(whole_per_file, used),
        "ratio_whole_per_view_over_ours_with_markers": C.ratio(whole_per_view, used + markers),
    }


def run(reps: int | None = None) -> dict[str, Any]:
    del reps  # byte counts are deterministic
    return {
        "machine": C.machine(),
        "scenarios": [asyncio.run(_scenario(shape)) for shape in ("in place", "insert")],
    }


def report(r: dict[str, Any]) -> str:
    rows = []
    for s in r["scenarios"]:
        by = ", ".join(f"{n} {k}" for k, n in sorted(s["stale_by_status"].items()))
        rows.append(
            [
                f"{s['shape']}: {s['stale_views']} of {s['views']} views stale ({by})",
                C.fmt_bytes(s["whole_file_per_view_bytes"]),
                C.fmt_bytes(s["whole_file_per_file_bytes"]),
                C.fmt_bytes(s["ours_used_bytes"]),
                C.fmt_bytes(s["ours_marker_bytes"]),
                C.fmt_x(s["ratio_whole_per_view_over_ours"]),
                C.fmt_x(s["ratio_whole_per_file_over_ours"]),
            ]
        )

    def by_status(s: dict[str, Any]) -> str:
        items = sorted(s["ours_entry_bytes_by_status"].items())
        return ", ".join(f"{C.fmt_bytes(n)} {k}" for k, n in items)

    notes = [
        f"    {s['shape']}: ours serves {s['ours_entries']} entries ({by_status(s)} of text); "
        "re-reading exactly the stale views' ranges would be "
        f"{C.fmt_bytes(s['stale_ranges_reread_bytes'])}"
        for s in r["scenarios"]
    ]
    return "\n".join(
        [
            f"[4] Bytes to re-sync after one-line edits in {r['scenarios'][0]['edited_files']} "
            "of 100 files (deterministic: one run)",
            C.table(
                [
                    "",
                    "whole files/view",
                    "whole files/file",
                    "ours usedBytes",
                    "ours markers",
                    "ratio/view",
                    "ratio/file",
                ],
                rows,
            ),
            *notes,
        ]
    )


def main() -> None:
    args = C.cli(__doc__.splitlines()[0] if __doc__ else "")
    C.emit(run(), report, args.json)


if __name__ == "__main__":
    main()
