"""The first fresh/project and fresh/stale after a one-line edit of a 5,000-line file.

Scenario: a generated Python module of exactly 5,000 lines, and three sessions:
``ranged`` holds 19 views of it (slices of 1-150 lines), ``whole`` the same plus one
whole-file read, ``mixed`` the same 20 plus the 500 views over 100 modules of
``bench_project.py``.

Each repetition re-observes the session's views of the big file (the agent read them
again; untimed), writes a one-line edit (untimed), then times the first
``Engine.project`` (or ``Engine.stale``) right after it: stat, re-read, SHA-256,
incremental reparse, definitions, change attribution, assessment of every view,
projection. Each edit replaces one more original statement line with a shorter one
(``bench_value = N``), at positions spread over the file, so every content is new and
every edit is exactly one line: the views holding that line turn ``changed`` (checked),
the others stay ``fresh``.

The second request after the same edit is timed too: the file was modified less than
``RACY_WINDOW_S`` = 2 s ago, so SourceTable re-reads and re-hashes it (without a reparse)
on every request until it settles.

Two more rows: an edit that follows an undo elsewhere (edit line P, revert it, then edit
line Q: the revert is a content seen before, answered from the definitions cache), and
toggling one line between two contents (after the first round every edit is a cache
hit, with no reparse at all).

    .venv/bin/python benchmarks/bench_edit.py [--json] [--reps N]
"""

from __future__ import annotations

import asyncio
import functools
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common as C

from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import ObserveParams, StaleParams

BIG = "src/orders.py"
BIG_LINES = 5000
DEFAULT_REPS = 40  # per (session, request) pair
WARMUP = 3
TARGET_MS = 25.0
_DESCRIBE = {
    "ranged": "ranges of the big file",
    "whole": "same + a whole-file read",
    "mixed": "same + 500 views of 100 files",
}
_SIMPLE = re.compile(r"^(\s+)\w+ = \w+ \* \d+ \+ len\(\w+\)\n$")


def _big_views() -> list[tuple[str, str, int, int]]:
    """One whole-file read, then 19 ranges spread over the file."""
    views = [("big_whole", BIG, 1, BIG_LINES)]
    spans = [1, 5, 12, 25, 40, 80, 150, 3, 30, 60]
    first = 40
    for k in range(19):
        span = spans[k % len(spans)]
        views.append((f"big_{k:02d}", BIG, first, first + span - 1))
        first += span + 220
    return views


async def _scenario(reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fresh-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        corpus = C.write_corpus(root, 100, (200, 450))
        big_text = C.generate_module_lines(777, BIG_LINES)
        (root / BIG).parent.mkdir(parents=True, exist_ok=True)
        (root / BIG).write_text(big_text, "utf-8")
        C.settle(root, [BIG])
        original = big_text.splitlines(keepends=True)
        lines = list(original)
        simple = [i + 1 for i, line in enumerate(original) if _SIMPLE.match(line)]
        big_views = _big_views()
        small_views = C.plan_views(corpus, 5)

        engine = await Engine.open(root, Path(tmp) / "state")
        sessions = {
            "ranged": big_views[1:],
            "whole": big_views,
            "mixed": big_views + small_views,
        }
        for session, views in sessions.items():
            for vid, rel, first, last in views:
                await engine.observe(
                    ObserveParams(
                        session=session, path=rel, view_id=vid, first_line=first, last_line=last
                    )
                )

        # Two lines outside every view, near the top (P) and the bottom (Q) of the file,
        # for the undo and toggle rows; the main rows edit the other statement lines.
        covered = {n for _, rel, f, last in big_views[1:] for n in range(f, last + 1)}
        free = [n for n in simple if n not in covered]
        p_line, q_line = free[0], free[-1]
        positions = [n for n in simple if n not in (p_line, q_line)]
        edited: list[int] = []

        def edit(text: str | None = None, line_no: int | None = None) -> int:
            """Replace the next original statement line (positions step through the file)
            or write ``text`` at ``line_no``; returns the line edited."""
            if line_no is None:  # a counter keeps every content new, even when
                line_no = positions[(len(edited) * 37) % len(positions)]  # positions wrap
                edited.append(line_no)
            m = _SIMPLE.match(original[line_no - 1])
            assert m is not None
            lines[line_no - 1] = text or f"{m.group(1)}bench_value = {len(edited)}\n"
            (root / BIG).write_text("".join(lines), "utf-8")
            return line_no

        async def reread(session: str) -> None:
            """The agent read its views of the big file again (untimed)."""
            for vid, rel, first, last in sessions[session]:
                if rel == BIG:
                    await engine.observe(
                        ObserveParams(
                            session=session, path=rel, view_id=vid, first_line=first, last_line=last
                        )
                    )

        ops: list[tuple[str, str, Callable[[], Any]]] = []
        for session in sessions:
            ops.append(("project", session, functools.partial(C.project, engine, session)))
            asked = StaleParams(session=session)
            ops.append(("stale", session, functools.partial(engine.stale, asked)))
        first_s: dict[str, list[float]] = {f"{o}/{s}": [] for o, s, _ in ops}
        second_s: dict[str, list[float]] = {f"{o}/{s}": [] for o, s, _ in ops}
        index = engine.sources.index
        full_before = index.full_parses
        incr_before = index.incremental_parses
        for cycle in range(WARMUP + reps):
            for op, session, fn in ops:
                await reread(session)
                with C.no_gc():
                    n = edit()
                    t1, out = C.timed(fn)
                    t2, _ = C.timed(fn)
                if cycle >= WARMUP:
                    first_s[f"{op}/{session}"].append(t1)
                    second_s[f"{op}/{session}"].append(t2)
                if op == "stale":  # exactly the views holding the edited line changed
                    got = {v.view_id for v in out.views if v.status != "fresh"}
                    want = {
                        vid
                        for vid, rel, f, last in sessions[session]
                        if rel == BIG and f <= n <= last
                    }
                    assert got == want, got ^ want
        edits = len(edited)
        full_parses = index.full_parses - full_before
        incremental_parses = index.incremental_parses - incr_before

        def text_at(line_no: int, value: str) -> str:
            m = _SIMPLE.match(original[line_no - 1])
            assert m is not None
            return f"{m.group(1)}{value}\n"

        # Undo, then edit elsewhere: edit P, revert it (a content seen before: answered
        # from the definitions cache), then edit Q and time the first request.
        undo_s: list[float] = []
        for i in range(WARMUP + reps):
            before = lines[p_line - 1]
            edit(text_at(p_line, f"bench_undo = {i}"), p_line)
            C.project(engine, "ranged")
            edit(before, p_line)
            C.project(engine, "ranged")
            await reread("ranged")
            with C.no_gc():
                edit(text_at(q_line, f"bench_after_undo = {i}"), q_line)
                t, _ = C.timed(lambda: C.project(engine, "ranged"))
            if i >= WARMUP:
                undo_s.append(t)

        # Toggle one line between two contents: after the first round, every edit is a
        # content seen before, answered from the definitions cache without a reparse.
        toggles = [text_at(q_line, "bench_toggle = 0"), text_at(q_line, "bench_toggle = 1")]
        toggle_s: list[float] = []
        with C.no_gc():
            for i in range(WARMUP + reps):
                edit(toggles[i % 2], q_line)
                t, _ = C.timed(lambda: C.project(engine, "ranged"))
                if i >= WARMUP:
                    toggle_s.append(t)
        await engine.close()

    return {
        "scenario": {
            "file_lines": BIG_LINES,
            "file_bytes": len(big_text.encode("utf-8")),
            "session_views": {k: len(v) for k, v in sessions.items()},
            "reps": reps,
            "warmup": WARMUP,
            "edits": edits,
            "full_parses_during_edits": full_parses,
            "incremental_parses_during_edits": incremental_parses,
        },
        "first_after_edit": {k: C.summary_ms(v) for k, v in first_s.items()},
        "second_after_edit": {k: C.summary_ms(v) for k, v in second_s.items()},
        "toggle_project_ranged": C.summary_ms(toggle_s),
        "after_undo_project_ranged": C.summary_ms(undo_s),
        "targets": {
            "first_after_edit_p50_le_25ms": {
                k: C.summary_ms(v)["p50_ms"] <= TARGET_MS for k, v in first_s.items()
            }
        },
    }


def run(reps: int = DEFAULT_REPS) -> dict[str, Any]:
    out = asyncio.run(_scenario(reps))
    out["machine"] = C.machine()
    return out


def report(r: dict[str, Any]) -> str:
    sc = r["scenario"]
    rows = []
    for key in r["first_after_edit"]:
        op, session = key.split("/")
        n = sc["session_views"][session]
        for which, label in (("first_after_edit", "1st"), ("second_after_edit", "2nd")):
            s = r[which][key]
            target = C.verdict(s["p50_ms"] <= TARGET_MS) if which == "first_after_edit" else "-"
            rows.append(
                [
                    f"{label} Engine.{op} after edit, {n} views ({_DESCRIBE[session]})",
                    C.fmt_ms(s["p50_ms"]),
                    C.fmt_ms(s["p95_ms"]),
                    target,
                ]
            )
    extra = (
        ("after_undo_project_ranged", "1st Engine.project after an edit that follows an undo"),
        ("toggle_project_ranged", "1st Engine.project after toggling back (cache hit)"),
    )
    for key, label in extra:
        s = r[key]
        rows.append(
            [
                f"{label}, {sc['session_views']['ranged']} views",
                C.fmt_ms(s["p50_ms"]),
                C.fmt_ms(s["p95_ms"]),
                "-",
            ]
        )
    return "\n".join(
        [
            f"[2] One-line edit of a {sc['file_lines']:,}-line file "
            f"({C.fmt_bytes(sc['file_bytes'])}), {sc['reps']} reps per row after "
            f"{sc['warmup']} warm-up; {sc['edits']} edits: {sc['incremental_parses_during_edits']} "
            f"incremental reparses, {sc['full_parses_during_edits']} full parses",
            C.table(["", "p50", "p95", f"<= {TARGET_MS:g} ms"], rows),
        ]
    )


def main() -> None:
    C.main(__doc__, run, report, DEFAULT_REPS)


if __name__ == "__main__":
    main()
