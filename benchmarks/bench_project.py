"""fresh/project with nothing changed: ours (in process and over the wire) vs a naive check.

Scenario: 100 generated Python modules (200-450 lines each), one session holding 500
views of various ranges (single lines, slices of 5-150 lines, a few whole files). No file
changes, and every file is dated an hour into the past with ``os.utime`` so SourceTable
trusts its stat (files modified in the last ``RACY_WINDOW_S`` = 2 s are re-hashed on every
request by design; that cost is what ``bench_edit.py`` measures).

* ours, in process: ``Engine.project`` (policy ``stale``, default budget), the JSON text
  the server sends.
* ours, over the wire: ``fresh/project`` through ``SyncClient.spawn(root)``, a real
  ``python -m fresh_ls serve --stdio`` subprocess (JSON-RPC framing, pipes, pygls).
* naive: per request, re-read every observed file, fully re-parse it with tree-sitter
  (``fresh_ls.core.languages.get_parser``), split it into lines and compare each view's
  observed lines. It extracts no definitions and builds no projection, so it is a lower
  bound of what a naive sidecar would spend.

The three are timed interleaved, repetition by repetition, in one run.

    .venv/bin/python benchmarks/bench_project.py [--json] [--reps N]
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common as C

from fresh_ls.client import SyncClient
from fresh_ls.core.languages import get_parser, language_for_path
from fresh_ls.core.text import split_lines
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import ObserveParams, StaleParams

N_FILES = 100
LINES = (200, 450)
VIEWS_PER_FILE = 5
SESSION = "agent-1"
DEFAULT_REPS = 50
WARMUP = 5
TARGET_P50_MS = 5.0
TARGET_RATIO = 10.0


class Naive:
    """Re-read and fully re-parse every observed file on each request."""

    def __init__(self, root: Path, views: list[tuple[str, str, int, int]]) -> None:
        self.root = root
        self.by_path: dict[str, list[tuple[str, int, int, str]]] = {}
        for vid, rel, first, last in views:
            lines = split_lines((root / rel).read_text("utf-8"))
            observed = "".join(lines[first - 1 : last])
            self.by_path.setdefault(rel, []).append((vid, first, last, observed))

    def stale(self) -> list[str]:
        stale = []
        for rel, views in self.by_path.items():
            data = (self.root / rel).read_bytes()
            language = language_for_path(rel)
            assert language is not None
            tree = get_parser(language).parse(data)
            assert not tree.root_node.has_error
            lines = split_lines(data.decode("utf-8"))
            for vid, first, last, observed in views:
                if "".join(lines[first - 1 : last]) != observed:
                    stale.append(vid)
        return stale


async def _scenario(reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fresh-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        corpus = C.write_corpus(root, N_FILES, LINES)
        views = C.plan_views(corpus, VIEWS_PER_FILE)
        total_lines = sum(C.line_count(root, f) for f in corpus.files)
        total_bytes = sum((root / f).stat().st_size for f in corpus.files)

        engine = await Engine.open(root, Path(tmp) / "state")
        client = SyncClient.spawn(root, python=sys.executable)
        try:
            for vid, rel, first, last in views:
                await engine.observe(
                    ObserveParams(
                        session=SESSION, path=rel, view_id=vid, first_line=first, last_line=last
                    )
                )
                client.observe(SESSION, rel, view_id=vid, first_line=first, last_line=last)
            C.settle(root, corpus.files)  # nothing above wrote them; keep them settled anyway
            naive = Naive(root, views)

            def ours() -> Any:
                return C.project(engine, SESSION)

            def wire() -> Any:
                return client.project(SESSION)

            def stale_ours() -> Any:
                return engine.stale(StaleParams(session=SESSION))

            def noop_wire() -> Any:  # the transport alone: nothing to look up
                return client.forget("bench-nobody", ["no-such-view"])

            for _ in range(WARMUP):
                ours(), wire(), naive.stale(), stale_ours(), noop_wire()
            # correctness of the comparison: nothing changed, everybody agrees
            assert json.loads(ours())["usedBytes"] == 0 and wire()["usedBytes"] == 0
            assert naive.stale() == []
            assert all(v.status == "fresh" for v in stale_ours().views)

            samples: dict[str, list[float]] = {
                k: [] for k in ("ours", "wire", "naive", "stale", "noop")
            }
            with C.no_gc():
                for _ in range(reps):
                    samples["ours"].append(C.timed(ours)[0])
                    samples["wire"].append(C.timed(wire)[0])
                    samples["naive"].append(C.timed(naive.stale)[0])
                    samples["stale"].append(C.timed(stale_ours)[0])
                    samples["noop"].append(C.timed(noop_wire)[0])
        finally:
            client.close()
            await engine.close()

    s = {k: C.summary_ms(v) for k, v in samples.items()}
    naive_p50 = s["naive"]["p50_ms"]
    return {
        "scenario": {
            "files": N_FILES,
            "lines": total_lines,
            "bytes": total_bytes,
            "views": len(views),
            "reps": reps,
            "warmup": WARMUP,
        },
        "ours_engine": s["ours"],
        "ours_wire": s["wire"],
        "naive": s["naive"],
        "stale_engine": s["stale"],
        "noop_wire": s["noop"],
        "ratio_naive_over_engine_p50": C.ratio(naive_p50, s["ours"]["p50_ms"]),
        "ratio_naive_over_wire_p50": C.ratio(naive_p50, s["wire"]["p50_ms"]),
        "targets": {
            "engine_p50_le_5ms": s["ours"]["p50_ms"] <= TARGET_P50_MS,
            "wire_p50_le_5ms": s["wire"]["p50_ms"] <= TARGET_P50_MS,
            "engine_ge_10x_naive": C.ratio(naive_p50, s["ours"]["p50_ms"]) >= TARGET_RATIO,
            "wire_ge_10x_naive": C.ratio(naive_p50, s["wire"]["p50_ms"]) >= TARGET_RATIO,
        },
    }


def run(reps: int = DEFAULT_REPS) -> dict[str, Any]:
    out = asyncio.run(_scenario(reps))
    out["machine"] = C.machine()
    return out


def report(r: dict[str, Any]) -> str:
    sc = r["scenario"]
    naive_p50 = r["naive"]["p50_ms"]
    rows = []
    for label, key in (
        ("ours: Engine.project (in process)", "ours_engine"),
        ("ours: fresh/project over stdio", "ours_wire"),
        ("naive: re-read + full re-parse", "naive"),
        ("extra: Engine.stale (in process)", "stale_engine"),
        ("extra: no-op request over stdio (transport)", "noop_wire"),
    ):
        s = r[key]
        rows.append(
            [
                label,
                C.fmt_ms(s["p50_ms"]),
                C.fmt_ms(s["p95_ms"]),
                "-" if key in ("naive", "noop_wire") else C.fmt_x(C.ratio(naive_p50, s["p50_ms"])),
            ]
        )
    t = r["targets"]
    return "\n".join(
        [
            f"[1] fresh/project, nothing changed: {sc['views']} views over {sc['files']} files "
            f"({sc['lines']:,} lines, {C.fmt_bytes(sc['bytes'])}), {sc['reps']} reps "
            f"after {sc['warmup']} warm-up",
            C.table(["", "p50", "p95", "naive/ours (p50)"], rows),
            f"target p50 <= {TARGET_P50_MS:g} ms: engine {C.verdict(t['engine_p50_le_5ms'])}, "
            f"wire {C.verdict(t['wire_p50_le_5ms'])}; target >= {TARGET_RATIO:g}x naive: "
            f"engine {C.verdict(t['engine_ge_10x_naive'])}, "
            f"wire {C.verdict(t['wire_ge_10x_naive'])}",
        ]
    )


def main() -> None:
    C.main(__doc__, run, report, DEFAULT_REPS)


if __name__ == "__main__":
    main()
