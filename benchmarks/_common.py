"""Shared pieces of the benchmarks: the machine, timing statistics, tables, a corpus.

Every benchmark script imports this module by its bare name (``import _common``), which
works both when a script runs standalone (its directory is ``sys.path[0]``) and when
``run_all.py`` loads the scripts.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # standalone run from a checkout without an install
    sys.path.insert(0, str(REPO))

#: How far into the past "unchanged" files are dated, so that SourceTable trusts their
#: stat instead of re-hashing them (it re-hashes anything modified in the last
#: ``fresh_ls.core.sources.RACY_WINDOW_S`` seconds).
SETTLED_AGE_S = 3600.0


# -- the machine -------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "loadavg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "revision": revision(),
    }


def revision() -> str | None:
    """The commit of the checkout, with ``+dirty`` when fresh_ls/ has uncommitted changes
    (read-only: no optional locks, so a concurrent git command is never disturbed)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            env=env,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no", "fresh_ls"],
            capture_output=True,
            text=True,
            timeout=10,
            env=env,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def machine_line(m: dict[str, Any]) -> str:
    line = f"machine: {m['cpu']}, {m['cores']} cores, {m['implementation']} {m['python']}"
    if m.get("loadavg_1m") is not None:
        line += f", load average {m['loadavg_1m']:.2f}"
    if m.get("revision"):
        line += f"; fresh-ls {m['revision']}"
    return line


# -- timing ------------------------------------------------------------------------------


def summary_ms(samples_s: list[float]) -> dict[str, float]:
    """p50 / p95 / min / max of samples given in seconds, in milliseconds."""
    ms = sorted(s * 1000.0 for s in samples_s)
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94] if len(ms) >= 2 else ms[0]
    return {
        "p50_ms": statistics.median(ms),
        "p95_ms": p95,
        "min_ms": ms[0],
        "max_ms": ms[-1],
        "n": len(ms),
    }


def project(engine: Any, session: str, policy: str | None = None) -> Any:
    """``Engine.project`` in process, placement ``end``, as the JSON text the server sends.

    That placement never waits for the store, so its coroutine finishes at its first step:
    it is run in place (no event loop hop in the timing: the work alone)."""
    from fresh_ls.protocol import Policy, ProjectParams

    asked = ProjectParams(session=session, policy=Policy(policy) if policy else None)
    step = engine.project(asked)
    try:
        step.send(None)
    except StopIteration as done:
        return done.value
    step.close()
    raise RuntimeError("Engine.project waited: a placement that awaits cannot run in place")


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


@contextmanager
def no_gc() -> Iterator[None]:
    """Collect once, then keep the cyclic GC out of the timed region (it is re-enabled
    afterwards); the figures then show the code, not when a collection happened to run."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def ratio(a: float, b: float) -> float:
    return a / b if b else float("inf")


# -- output ------------------------------------------------------------------------------


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    out = [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    for r in rows:
        cells = enumerate(zip(r, widths, strict=True))
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in cells))
    return "\n".join(out)


def fmt_ms(x: float) -> str:
    return f"{x:.3f} ms" if x < 10 else f"{x:.1f} ms"


def fmt_x(x: float) -> str:
    return f"{x:.1f}x"


def fmt_bytes(n: int) -> str:
    return f"{n:,} bytes"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def cli(description: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--reps", type=int, default=None, help="timed repetitions (default: per benchmark)"
    )
    return p.parse_args()


def emit(results: dict[str, Any], report: Callable[[dict[str, Any]], str], as_json: bool) -> None:
    if as_json:
        print(json.dumps(results, indent=2, sort_keys=True))
    else:
        print(machine_line(results["machine"]))
        print(report(results))


def main(
    doc: str | None,
    run: Callable[[int], dict[str, Any]],
    report: Callable[[dict[str, Any]], str],
    default_reps: int,
) -> None:
    """What every benchmark script does when run alone: parse ``--json``/``--reps``, run,
    print (the first line of the script's docstring is its ``--help``)."""
    args = cli(doc.splitlines()[0] if doc else "")
    emit(run(args.reps or default_reps), report, args.json)


def run_async(coro: Any) -> Any:
    return asyncio.run(coro)


# -- a corpus of generated Python modules ------------------------------------------------

_WORDS = [
    *("order", "item", "price", "cart", "user", "account", "session", "token", "record"),
    *("batch", "queue", "event", "payload", "config", "cache", "index", "entry", "source"),
    *("target", "result", "value", "total", "count", "limit", "offset", "window", "buffer"),
    *("stream", "handler", "request", "response", "client", "server", "report"),
]


def _ident(rng: random.Random, parts: int = 2) -> str:
    return "_".join(rng.choice(_WORDS) for _ in range(parts))


def _camel(rng: random.Random) -> str:
    return "".join(w.title() for w in rng.sample(_WORDS, 2))


def _statement(rng: random.Random, indent: str, args: list[str]) -> list[str]:
    a = rng.choice(args) if args else "None"
    v = _ident(rng)
    kind = rng.random()
    if kind < 0.25:
        return [f"{indent}{v} = {a} * {rng.randint(2, 99)} + len({_ident(rng, 1)}s)\n"]
    if kind < 0.45:
        return [
            f"{indent}if {a} is None or {a} < {rng.randint(0, 9)}:\n",
            f'{indent}    raise ValueError(f"{v}: expected a value, got {{{a}!r}}")\n',
        ]
    if kind < 0.65:
        return [
            f"{indent}for {v} in sorted({a}_items, key=lambda e: e.{_ident(rng, 1)}):\n",
            f"{indent}    if not {v}.{_ident(rng, 1)}:\n",
            f"{indent}        continue\n",
            f"{indent}    results.append(({v}.{_ident(rng, 1)}, {v}.{_ident(rng, 1)}))\n",
        ]
    if kind < 0.8:
        return [f"{indent}# {' '.join(rng.choice(_WORDS) for _ in range(rng.randint(4, 10)))}\n"]
    if kind < 0.9:
        return [
            f"{indent}try:\n",
            f"{indent}    {v} = self_check({a}, strict={rng.choice(['True', 'False'])})\n",
            f"{indent}except (KeyError, LookupError) as exc:\n",
            f'{indent}    log.warning("{v} failed: %s", exc)\n',
        ]
    return [f'{indent}log.debug("{v} %s %d", {a}, {rng.randint(0, 1000)})\n']


def _function(rng: random.Random, indent: str, method: bool, body_lines: int) -> list[str]:
    name = _ident(rng)
    args = [_ident(rng, 1) for _ in range(rng.randint(1, 3))]
    args = list(dict.fromkeys(args))
    sig = ", ".join((["self"] if method else []) + [f"{x}: int | None = None" for x in args])
    out = []
    if rng.random() < 0.2:
        out.append(f"{indent}@{rng.choice(['functools.cache', 'staticmethod_like', 'traced'])}\n")
    out.append(f"{indent}def {name}({sig}) -> list[tuple[str, int]]:\n")
    out.append(f'{indent}    """{name.replace("_", " ").capitalize()} for the given input."""\n')
    out.append(f"{indent}    results: list[tuple[str, int]] = []\n")
    n = 3
    while n < body_lines:
        stmt = _statement(rng, indent + "    ", args)
        out.extend(stmt)
        n += len(stmt)
    out.append(f"{indent}    return results\n")
    return out


def generate_module(seed: int, target_lines: int) -> str:
    """A Python module of realistic shape (imports, constants, functions, classes with
    methods, docstrings, comments), about ``target_lines`` lines long."""
    rng = random.Random(seed)
    out = [
        f'"""Module {seed}: {" ".join(rng.sample(_WORDS, 6))}."""\n',
        "\n",
        "from __future__ import annotations\n",
        "\n",
        "import functools\n",
        "import logging\n",
        "from dataclasses import dataclass, field\n",
        "\n",
        "log = logging.getLogger(__name__)\n",
        "\n",
    ]
    for _ in range(rng.randint(2, 5)):
        out.append(f"{_ident(rng).upper()} = {rng.randint(1, 10_000)}\n")
    while len(out) < target_lines:
        out.extend(["\n", "\n"])
        if rng.random() < 0.4:
            out.extend(_function(rng, "", False, rng.randint(6, 30)))
        else:
            out.append("@dataclass\n")
            out.append(f"class {_camel(rng)}:\n")
            out.append(f'    """A {rng.choice(_WORDS)} of {rng.choice(_WORDS)}s."""\n')
            out.append("\n")
            for _ in range(rng.randint(1, 3)):
                out.append(f"    {_ident(rng)}: int = {rng.randint(0, 100)}\n")
            out.append("    tags: list[str] = field(default_factory=list)\n")
            for _ in range(rng.randint(2, 6)):
                out.append("\n")
                out.extend(_function(rng, "    ", True, rng.randint(5, 25)))
    return "".join(out)


def generate_module_lines(seed: int, lines: int) -> str:
    """A generated module of exactly ``lines`` lines: cut before the last top-level
    definition that would cross the count, then padded with top-level constants."""
    out = generate_module(seed, lines).splitlines(keepends=True)
    if len(out) > lines:
        cut = max(i for i, line in enumerate(out[: lines + 1]) if line[:1] in ("@", "c", "d"))
        while cut > 0 and out[cut - 1][:1] == "@":
            cut -= 1
        out = out[:cut]
    out.extend(f"PAD_{i} = {i}\n" for i in range(lines - len(out)))
    return "".join(out)


@dataclass
class Corpus:
    root: Path
    files: list[str]  # root-relative paths


def write_corpus(root: Path, n_files: int, lines: tuple[int, int], seed: int = 1) -> Corpus:
    rng = random.Random(seed)
    files = []
    for i in range(n_files):
        rel = f"pkg{i % 10}/mod_{i:03d}.py"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generate_module(seed * 100_000 + i, rng.randint(*lines)), "utf-8")
        files.append(rel)
    settle(root, files)
    return Corpus(root, files)


def settle(root: Path, files: list[str]) -> None:
    """Date files ``SETTLED_AGE_S`` into the past (see the constant)."""
    past = time.time() - SETTLED_AGE_S
    for rel in files:
        os.utime(root / rel, (past, past))


def line_count(root: Path, rel: str) -> int:
    return (root / rel).read_bytes().count(b"\n")


def plan_views(corpus: Corpus, per_file: int, seed: int = 2) -> list[tuple[str, str, int, int]]:
    """(view_id, path, first_line, last_line) views of various ranges: single lines,
    small and large slices, and about one whole-file read in ten files."""
    rng = random.Random(seed)
    views = []
    n = 0
    for rel in corpus.files:
        total = line_count(corpus.root, rel)
        for k in range(per_file):
            n += 1
            vid = f"call_{n:04d}"
            if k == 0 and rng.random() < 0.1:
                views.append((vid, rel, 1, total))
                continue
            span = rng.choice([1, 5, 12, 25, 40, 80, 150])
            first = rng.randint(1, max(1, total - span))
            views.append((vid, rel, first, min(total, first + span - 1)))
    return views
