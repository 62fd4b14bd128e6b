"""fresh/project under ``policy: all`` with about 505 mixed views: ours vs a naive loop.

Scenario: the 100 generated modules of ``bench_project.py`` (200-450 lines each) plus one
module of exactly 5,000 lines, and one session of 505 views observed in a shuffled order:
single lines, whole functions (a definition's exact extent), and whole files (about one
module in ten, and the 5,000-line one, whose 229 KB do not fit the default 128 KiB budget,
so it falls back to its top-level pieces). Every view is replaced under ``policy: all``, so
the planner does real work: containment between single lines, functions and files,
absorption, the budget, the fallback, and a marker per view.

Two situations, each timed interleaved with the naive loop, in process and over stdio:

* unchanged: nothing changed since the last request (every file dated an hour into the
  past, so SourceTable trusts its stat);
* after a one-line edit of the 5,000-line file: the views of that file are observed again
  (untimed, the agent read them again), one statement line is replaced with a shorter one
  (untimed, a new content every time), then the first request is timed. The wire request
  goes first, right after the write, so the server's watcher has not run yet (its debounce
  is far longer than the gap).

* ours, in process: ``Engine.project`` (``policy: all``), the JSON text the server sends.
* ours, over stdio: ``fresh/project`` from a client that declares nothing at
  ``initialize``: the contract's whole answer on the wire (what every such client gets);
* ours, over stdio, lean: a second server, asked through ``SyncClient.spawn(root)``: the
  Python client declares the experimental capability ``freshLs.projectLeavesOut:
  ["rendered"]``, so the answer comes without ``rendered`` (each entry's header and text
  carried once, not twice), and it rebuilds ``rendered`` from the entries (timed: the
  figure is what its caller has in hand, the whole answer again);
* naive: per request, re-read every observed file, fully re-parse it with tree-sitter,
  split it into lines, compare each view's observed lines and join each view's current
  lines (no dedup, no budget, no markers): a lower bound of a naive ``policy: all``.

    .venv/bin/python benchmarks/bench_policy_all.py [--json] [--reps N]
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _common as C

import fresh_ls.client as client_module
from fresh_ls.client import SyncClient, initialize_params
from fresh_ls.core import jsonload
from fresh_ls.core.languages import get_parser, language_for_path
from fresh_ls.core.sources import Source
from fresh_ls.core.text import split_lines
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import ObserveParams

try:  # the server's JSON-RPC layer, for the row that prices serialising this answer
    from pygls.protocol import default_converter
    from pygls.protocol.json_rpc import JsonRPCResponseMessage
except ImportError:  # pragma: no cover
    default_converter = None

N_FILES = 100
LINES = (200, 450)
VIEWS_PER_FILE = 5
BIG = "src/orders.py"
BIG_LINES = 5000
SESSION = "agent-all"
DEFAULT_REPS = 40
WARMUP = 5
TARGET_UNCHANGED_MS = 5.0
TARGET_RATIO = 20.0
TARGET_EDIT_MS = 25.0
_SIMPLE = re.compile(r"^(\s+)\w+ = \w+ \* \d+ \+ len\(\w+\)\n$")

ViewSpec = tuple[str, str, int, int, str]  # view id, path, first, last, what


def mixed_views(root: Path, files: list[str], seed: int = 5) -> list[ViewSpec]:
    """Single lines, whole functions and whole files, in a shuffled observation order."""
    rng = random.Random(seed)
    views: list[ViewSpec] = []

    def of_file(rel: str, count: int, whole: bool) -> None:
        text = (root / rel).read_text("utf-8")
        n = len(split_lines(text))
        defs = Source.from_text(rel, text).definitions or []
        funcs = [d for d in defs if d.symbol_kind in ("function", "method")]
        for k in range(count):
            vid = f"all_{len(views) + 1:04d}"
            if k == 0 and whole:
                views.append((vid, rel, 1, n, "file"))
            elif funcs and rng.random() < 0.5:
                d = rng.choice(funcs)
                views.append((vid, rel, d.first_line, d.last_line, "function"))
            else:
                line = rng.randint(1, n)
                views.append((vid, rel, line, line, "line"))

    for rel in files:
        of_file(rel, VIEWS_PER_FILE, rng.random() < 0.1)
    of_file(BIG, 5, True)
    rng.shuffle(views)
    return views


class Naive:
    """Re-read and fully re-parse every observed file on each request, compare each view
    and gather each view's current lines."""

    def __init__(self, root: Path, views: list[ViewSpec]) -> None:
        self.root = root
        self.by_path: dict[str, list[tuple[str, int, int, str]]] = {}
        self.observe(views)

    def observe(self, views: list[ViewSpec]) -> None:
        for vid, rel, first, last, _ in views:
            lines = split_lines((self.root / rel).read_text("utf-8"))
            observed = "".join(lines[first - 1 : last])
            mine = self.by_path.setdefault(rel, [])
            mine[:] = [v for v in mine if v[0] != vid]
            mine.append((vid, first, last, observed))

    def project(self) -> tuple[list[str], str]:
        stale: list[str] = []
        out: list[str] = []
        for rel, views in self.by_path.items():
            data = (self.root / rel).read_bytes()
            language = language_for_path(rel)
            assert language is not None
            tree = get_parser(language).parse(data)
            assert not tree.root_node.has_error
            lines = split_lines(data.decode("utf-8"))
            for vid, first, last, observed in views:
                now = "".join(lines[first - 1 : last])
                if now != observed:
                    stale.append(vid)
                out.append(now)
        return stale, "".join(out)


def whole_client(root: Path) -> SyncClient:
    """A stdio server whose client declares no capability: the contract's whole answer on
    the wire (the Python client declares ``projectLeavesOut``, ``fresh_ls.client``)."""
    argv = [sys.executable, "-P", "-m", "fresh_ls", "serve", "--root", str(root), "--stdio"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    client = SyncClient(proc.stdout, proc.stdin, proc)
    params = {**initialize_params(None, None, None), "capabilities": {}}
    client._call("initialize", params)
    client.notify("initialized", {})
    return client


def with_rendered(result: dict[str, Any]) -> dict[str, Any]:
    """A lean answer made whole again: ``rendered`` from the entries, framed as the
    contract says (header, LF, text, an LF when the text lacks one), in their order."""
    if "rendered" not in result:
        result["rendered"] = "".join(
            e["header"] + "\n" + e["text"] + ("" if e["text"].endswith("\n") else "\n")
            for e in result["entries"]
        )
    return result


def _check(result: dict[str, Any], root: Path, n_views: int) -> None:
    """Every view replaced, every entry byte for byte the disk, the budget kept."""
    assert len(result["markers"]) == n_views
    assert result["usedBytes"] == len(result["rendered"].encode("utf-8"))
    assert result["usedBytes"] <= result["budgetBytes"]
    disk: dict[str, list[str]] = {}
    for e in result["entries"]:
        if e["path"] not in disk:
            disk[e["path"]] = split_lines((root / e["path"]).read_text("utf-8"))
        assert e["text"] == "".join(disk[e["path"]][e["firstLine"] - 1 : e["lastLine"]])


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return {k: v for k, v in a.items() if k != "planId"} == {
        k: v for k, v in b.items() if k != "planId"
    }


async def _scenario(reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fresh-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        corpus = C.write_corpus(root, N_FILES, LINES)
        big_text = C.generate_module_lines(777, BIG_LINES)
        (root / BIG).parent.mkdir(parents=True, exist_ok=True)
        (root / BIG).write_text(big_text, "utf-8")
        files = [*corpus.files, BIG]
        C.settle(root, files)
        views = mixed_views(root, corpus.files)
        kinds = {w: sum(1 for v in views if v[4] == w) for w in ("line", "function", "file")}
        big_views = [v for v in views if v[1] == BIG]
        original = big_text.splitlines(keepends=True)
        lines = list(original)
        positions = [i + 1 for i, line in enumerate(original) if _SIMPLE.match(line)]
        edits: list[int] = []

        def edit() -> None:
            line_no = positions[(len(edits) * 37) % len(positions)]
            edits.append(line_no)
            m = _SIMPLE.match(original[line_no - 1])
            assert m is not None
            lines[line_no - 1] = f"{m.group(1)}bench_value = {len(edits)}\n"
            (root / BIG).write_text("".join(lines), "utf-8")

        engine = await Engine.open(root, Path(tmp) / "state")
        client = whole_client(root)
        lean = SyncClient.spawn(
            root, python=sys.executable, extra_args=["--state-dir", str(Path(tmp) / "state-lean")]
        )
        try:

            async def observe(these: list[ViewSpec]) -> None:
                for vid, rel, first, last, _ in these:
                    await engine.observe(
                        ObserveParams(
                            session=SESSION, path=rel, view_id=vid, first_line=first, last_line=last
                        )
                    )
                    client.observe(SESSION, rel, view_id=vid, first_line=first, last_line=last)
                    lean.observe(SESSION, rel, view_id=vid, first_line=first, last_line=last)

            await observe(views)
            naive = Naive(root, views)

            def ours() -> Any:
                return C.project(engine, SESSION, policy="all")

            def wire() -> Any:
                return client.project(SESSION, policy="all")

            def wire_lean() -> Any:
                return with_rendered(lean.project(SESSION, policy="all"))

            for _ in range(WARMUP):
                ours(), wire(), wire_lean(), naive.project()
            a, b = json.loads(ours()), wire()
            _check(a, root, len(views))
            assert _same(a, b), "in process and over stdio disagree"
            keep = client_module.with_rendered  # the answer as it came, for its size
            client_module.with_rendered = lambda result: None
            try:
                raw_lean = lean.project(SESSION, policy="all")
            finally:
                client_module.with_rendered = keep
            assert "rendered" not in raw_lean, "the lean server sent rendered"
            assert "rendered" in client.project(SESSION, policy="all"), "whole answer cut"
            lean_bytes = len(json.dumps(raw_lean).encode("utf-8"))
            assert _same(a, with_rendered(raw_lean)), "the lean answer made whole differs"
            assert naive.project()[0] == []
            unchanged_used = a["usedBytes"]
            unchanged_entries = len(a["entries"])
            unchanged_omitted = len(a["omitted"])

            answer_bytes = len(json.dumps(a).encode("utf-8"))

            converter = default_converter() if default_converter is not None else None

            def serialise() -> Any:
                """What the transport does with this answer, without the pipes: pygls
                unstructures the response with cattrs and dumps it, the client loads it."""
                msg: Any = a
                if converter is not None:
                    msg = converter.unstructure(
                        JsonRPCResponseMessage(id=1, jsonrpc="2.0", result=a)
                    )
                return json.loads(json.dumps(msg))

            answer_text = json.dumps(a)

            def decode() -> Any:
                """What is left of it since the server sends the projection encoded once:
                the client's decode of the answer (``core.jsonload.loads_own``, orjson with
                ``json.loads``'s answer)."""
                return jsonload.loads_own(answer_text)

            def decode_stdlib() -> Any:
                """The same with the standard library's ``json.loads`` (before 2026-12-04)."""
                return json.loads(answer_text)

            unchanged: dict[str, list[float]] = {
                k: []
                for k in (
                    "ours",
                    "wire",
                    "wire_lean",
                    "naive",
                    "serialise",
                    "decode",
                    "decode_stdlib",
                )
            }
            with C.no_gc():
                for _ in range(reps):
                    unchanged["ours"].append(C.timed(ours)[0])
                    unchanged["wire"].append(C.timed(wire)[0])
                    unchanged["wire_lean"].append(C.timed(wire_lean)[0])
                    unchanged["naive"].append(C.timed(naive.project)[0])
                    unchanged["serialise"].append(C.timed(serialise)[0])
                    unchanged["decode"].append(C.timed(decode)[0])
                    unchanged["decode_stdlib"].append(C.timed(decode_stdlib)[0])

            after: dict[str, list[float]] = {k: [] for k in ("ours", "wire", "wire_lean", "naive")}
            second: list[float] = []
            for cycle in range(WARMUP + reps):
                await observe(big_views)  # the agent read them again (untimed)
                naive.observe(big_views)
                with C.no_gc():
                    edit()
                    # Both servers see the edit first at this request (their watchers'
                    # debounce is far longer than the gap); the order alternates per cycle.
                    if cycle % 2:
                        t_lean, got_lean = C.timed(wire_lean)
                        t_wire, got_wire = C.timed(wire)
                    else:
                        t_wire, got_wire = C.timed(wire)
                        t_lean, got_lean = C.timed(wire_lean)
                    t_ours, got_ours = C.timed(ours)
                    t_naive, _ = C.timed(naive.project)
                    t_second, _ = C.timed(ours)
                if cycle < 3:
                    got_ours = json.loads(got_ours)
                    _check(got_ours, root, len(views))
                    assert _same(got_ours, got_wire), "in process and over stdio disagree"
                    assert _same(got_ours, got_lean), "in process and the lean answer disagree"
                if cycle >= WARMUP:
                    after["ours"].append(t_ours)
                    after["wire"].append(t_wire)
                    after["wire_lean"].append(t_lean)
                    after["naive"].append(t_naive)
                    second.append(t_second)
        finally:
            client.close()
            lean.close()
            await engine.close()

    u = {k: C.summary_ms(v) for k, v in unchanged.items()}
    e = {k: C.summary_ms(v) for k, v in after.items()}
    u_ratio_engine = C.ratio(u["naive"]["p50_ms"], u["ours"]["p50_ms"])
    u_ratio_wire = C.ratio(u["naive"]["p50_ms"], u["wire"]["p50_ms"])
    return {
        "scenario": {
            "files": len(files),
            "views": len(views),
            "view_kinds": kinds,
            "big_file_lines": BIG_LINES,
            "used_bytes": unchanged_used,
            "entries": unchanged_entries,
            "omitted": unchanged_omitted,
            "answer_json_bytes": answer_bytes,
            "lean_answer_json_bytes": lean_bytes,
            "reps": reps,
            "warmup": WARMUP,
        },
        "unchanged": u,
        "after_edit": e,
        "second_after_edit_engine": C.summary_ms(second),
        "ratio_unchanged_engine": u_ratio_engine,
        "ratio_unchanged_wire": u_ratio_wire,
        "ratio_edit_engine": C.ratio(e["naive"]["p50_ms"], e["ours"]["p50_ms"]),
        "ratio_edit_wire": C.ratio(e["naive"]["p50_ms"], e["wire"]["p50_ms"]),
        "targets": {
            "unchanged_wire_p50_le_5ms": u["wire"]["p50_ms"] <= TARGET_UNCHANGED_MS,
            "unchanged_wire_ge_20x_naive": u_ratio_wire >= TARGET_RATIO,
            "edit_wire_p50_le_25ms": e["wire"]["p50_ms"] <= TARGET_EDIT_MS,
            "unchanged_lean_p50_le_5ms": u["wire_lean"]["p50_ms"] <= TARGET_UNCHANGED_MS,
            "edit_lean_p50_le_25ms": e["wire_lean"]["p50_ms"] <= TARGET_EDIT_MS,
        },
    }


def run(reps: int = DEFAULT_REPS) -> dict[str, Any]:
    out = asyncio.run(_scenario(reps))
    out["machine"] = C.machine()
    return out


def report(r: dict[str, Any]) -> str:
    sc = r["scenario"]
    rows = []
    for situation, key in (("unchanged", "unchanged"), ("after a one-line edit", "after_edit")):
        s = r[key]
        naive = s["naive"]["p50_ms"]
        for label, k in (
            ("in process", "ours"),
            ("over stdio", "wire"),
            ("over stdio, lean (rendered rebuilt by the client)", "wire_lean"),
        ):
            rows.append(
                [
                    f"{situation}, {label}",
                    C.fmt_ms(s[k]["p50_ms"]),
                    C.fmt_ms(s[k]["p95_ms"]),
                    C.fmt_ms(naive),
                    C.fmt_x(C.ratio(naive, s[k]["p50_ms"])),
                ]
            )
    ser = r["unchanged"]["serialise"]
    rows.append(["extra: serialising it the old way (cattrs + dumps + loads, no pipes)",
                 C.fmt_ms(ser["p50_ms"]), C.fmt_ms(ser["p95_ms"]), "-", "-"])  # fmt: skip
    dec = r["unchanged"]["decode"]
    rows.append(["extra: what is left of it now (the client's decode, core.jsonload)",
                 C.fmt_ms(dec["p50_ms"]), C.fmt_ms(dec["p95_ms"]), "-", "-"])  # fmt: skip
    std = r["unchanged"].get("decode_stdlib")
    if std is not None:
        rows.append(["extra: the same decode with the standard library's json.loads",
                     C.fmt_ms(std["p50_ms"]), C.fmt_ms(std["p95_ms"]), "-", "-"])  # fmt: skip
    sec = r["second_after_edit_engine"]
    rows.append(["2nd request after the edit, in process", C.fmt_ms(sec["p50_ms"]),
                 C.fmt_ms(sec["p95_ms"]), "-", "-"])  # fmt: skip
    t = r["targets"]
    k = sc["view_kinds"]
    return "\n".join(
        [
            f"[6] fresh/project policy all: {sc['views']} views ({k['line']} single lines, "
            f"{k['function']} whole functions, {k['file']} whole files) over {sc['files']} "
            f"files, {sc['entries']} entries, {sc['omitted']} omissions, "
            f"{C.fmt_bytes(sc['used_bytes'])} used, a {C.fmt_bytes(sc['answer_json_bytes'])} "
            f"JSON answer ({C.fmt_bytes(sc['lean_answer_json_bytes'])} lean); {sc['reps']} reps "
            f"after {sc['warmup']} warm-up",
            C.table(["", "ours p50", "ours p95", "naive p50", "naive/ours"], rows),
            f"targets over stdio: unchanged p50 <= {TARGET_UNCHANGED_MS:g} ms "
            f"{C.verdict(t['unchanged_wire_p50_le_5ms'])}, >= {TARGET_RATIO:g}x naive "
            f"{C.verdict(t['unchanged_wire_ge_20x_naive'])}; after an edit p50 <= "
            f"{TARGET_EDIT_MS:g} ms {C.verdict(t['edit_wire_p50_le_25ms'])}",
            f"targets over stdio, lean answer: unchanged p50 <= {TARGET_UNCHANGED_MS:g} ms "
            f"{C.verdict(t['unchanged_lean_p50_le_5ms'])}; after an edit p50 <= "
            f"{TARGET_EDIT_MS:g} ms {C.verdict(t['edit_lean_p50_le_25ms'])}",
        ]
    )


def main() -> None:
    C.main(__doc__, run, report, DEFAULT_REPS)


if __name__ == "__main__":
    main()
