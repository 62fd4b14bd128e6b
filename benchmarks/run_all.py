"""Run every benchmark in one process, print their tables and the targets, or JSON.

    .venv/bin/python benchmarks/run_all.py [--json] [--strict] [--only NAME ...]

``make bench`` runs this. ``--strict`` exits 1 when a target is missed (the figures
depend on the machine and its load, so a plain run reports and exits 0).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C

BENCHMARKS = (
    "bench_project",
    "bench_policy_all",
    "bench_edit",
    "bench_parse",
    "bench_bytes",
    "bench_coldstart",
    "bench_proxy",
    "bench_hooks",
)


def targets(results: dict[str, Any]) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    p = results.get("bench_project")
    if p:
        t = p["targets"]
        out += [
            (f"unchanged project p50 <= 5 ms, in process ({C.fmt_ms(p['ours_engine']['p50_ms'])})",
             t["engine_p50_le_5ms"]),
            (f"unchanged project p50 <= 5 ms, over stdio ({C.fmt_ms(p['ours_wire']['p50_ms'])})",
             t["wire_p50_le_5ms"]),
            (f"unchanged project >= 10x naive, in process "
             f"({C.fmt_x(p['ratio_naive_over_engine_p50'])})", t["engine_ge_10x_naive"]),
            (f"unchanged project >= 10x naive, over stdio "
             f"({C.fmt_x(p['ratio_naive_over_wire_p50'])})", t["wire_ge_10x_naive"]),
        ]  # fmt: skip
    a = results.get("bench_policy_all")
    if a:
        t, u, ed = a["targets"], a["unchanged"], a["after_edit"]
        out += [
            (f"policy all, {a['scenario']['views']} mixed views, unchanged p50 <= 5 ms, over stdio "
             f"({C.fmt_ms(u['wire']['p50_ms'])})", t["unchanged_wire_p50_le_5ms"]),
            (f"policy all, unchanged >= 20x naive, over stdio "
             f"({C.fmt_x(a['ratio_unchanged_wire'])})", t["unchanged_wire_ge_20x_naive"]),
            (f"policy all, first project after a one-line edit p50 <= 25 ms, over stdio "
             f"({C.fmt_ms(ed['wire']['p50_ms'])})", t["edit_wire_p50_le_25ms"]),
            (f"policy all, unchanged p50 <= 5 ms, over stdio, lean answer "
             f"({C.fmt_ms(u['wire_lean']['p50_ms'])})", t["unchanged_lean_p50_le_5ms"]),
            (f"policy all, first project after an edit p50 <= 25 ms, over stdio, lean answer "
             f"({C.fmt_ms(ed['wire_lean']['p50_ms'])})", t["edit_lean_p50_le_25ms"]),
        ]  # fmt: skip
    e = results.get("bench_edit")
    if e:
        for key, ok in e["targets"]["first_after_edit_p50_le_25ms"].items():
            op, session = key.split("/")
            n = e["scenario"]["session_views"][session]
            p50 = e["first_after_edit"][key]["p50_ms"]
            out.append((f"first {op} after an edit p50 <= 25 ms, {n} views ({C.fmt_ms(p50)})", ok))
    c = results.get("bench_coldstart")
    if c:
        out += [
            (f"fresh-ls status cold, running server, p50 <= 300 ms "
             f"({C.fmt_ms(c['status']['p50_ms'])})", c["targets"]["status_p50_le_300ms"]),
            (f"serve --stdio to answered initialize p50 <= 500 ms "
             f"({C.fmt_ms(c['handshake']['p50_ms'])}; naive order "
             f"{C.fmt_ms(c['handshake_eager']['p50_ms'])})",
             c["targets"]["handshake_p50_le_500ms"]),
        ]  # fmt: skip
    x = results.get("bench_proxy")
    if x:
        big = x["cases"][f"{max(int(k.split('/')[0]) for k in x['cases'])}/fresh"]
        out.append(
            (f"the proxy adds <= 5 ms p50 on a {big['request_bytes'] // 1024} KiB request, "
             f"views fresh ({C.fmt_ms(big['added_p50_ms'])}; direct "
             f"{C.fmt_ms(big['d_total']['p50_ms'])})",
             x["targets"]["fresh_200kb_added_p50_le_5ms"])
        )  # fmt: skip
    h = results.get("bench_hooks")
    if h:
        from bench_hooks import TARGET_CASES  # the cases the target holds for, named once

        worst = max(h[k]["p50_ms"] for k in TARGET_CASES)
        out.append(
            (f"Claude Code hook call p50 <= 150 ms, spawned as Claude Code spawns it "
             f"(slowest case {C.fmt_ms(worst)})", h["targets"]["hook_p50_le_150ms"])
        )  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--json", action="store_true", help="print all results as one JSON object")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--only", nargs="+", choices=BENCHMARKS, help="run only these")
    ap.add_argument("--reps", type=int, default=None, help="override every repetition count")
    args = ap.parse_args()

    results: dict[str, Any] = {}
    started = time.perf_counter()
    for name in args.only or BENCHMARKS:
        module = importlib.import_module(name)
        t0 = time.perf_counter()
        r = module.run(args.reps) if args.reps else module.run()
        r["seconds"] = round(time.perf_counter() - t0, 1)
        results[name] = r
        if not args.json:
            if len(results) == 1:
                print(C.machine_line(r["machine"]))
            print()
            print(module.report(r))
            print(f"    ({r['seconds']} s)")
            sys.stdout.flush()
    checks = targets(results)
    elapsed = time.perf_counter() - started
    if args.json:
        results["targets"] = [{"target": t, "met": ok} for t, ok in checks]
        results["seconds"] = round(elapsed, 1)
        print(json.dumps(results, indent=2, sort_keys=True))
    else:
        print()
        print("Targets")
        for text, ok in checks:
            print(f"  {C.verdict(ok):6}  {text}")
        print(f"\nall benchmarks: {elapsed:.0f} s; {C.machine_line(C.machine())}")
    return 1 if args.strict and not all(ok for _, ok in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
