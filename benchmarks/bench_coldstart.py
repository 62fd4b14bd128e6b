"""Cold start: the wall time of a fresh process, where a CLI call, an editor restart or a
hook per tool call pays the imports every time.

Each figure is the median over several fresh processes, interleaved:

* ``python -c pass``: the interpreter's own start, the floor;
* the old eager imports: what ``fresh-ls status`` imported before the imports were deferred
  (asyncio, the audit and replay commands), and what ``serve`` imports when everything is
  loaded at once (``fresh_ls.server.app``);
* ``fresh-ls status`` against a running server (``python -m fresh_ls status``), to its exit;
* ``fresh-ls serve --stdio`` from the spawn to the answered ``initialize`` request, and the
  same with everything imported before stdin is read (the naive order, as ``serve`` did
  before ``fresh_ls.server.handshake`` answered ``initialize`` ahead of pygls): both in
  the same run, interleaved;
* ``serve --stdio`` to the answer of the first ``fresh/status`` sent right behind
  ``initialize`` (what the early answer does not shorten: the server still loads pygls).

The children run with a bytecode cache in a scratch directory (``PYTHONPYCACHEPREFIX``,
warmed by one untimed run), as an installed package runs; the last rows repeat the two
commands with ``PYTHONDONTWRITEBYTECODE=1``, where fresh-ls's own modules are compiled
from source each time (an editable install in an environment that sets it).

    .venv/bin/python benchmarks/bench_coldstart.py [--json] [--reps N]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common as C

DEFAULT_REPS = 9
STATUS_TARGET_MS = 300.0
HANDSHAKE_TARGET_MS = 500.0

#: What ``fresh-ls status`` imported before imports were deferred to the commands.
OLD_STATUS_IMPORTS = "import asyncio, fresh_ls.client, fresh_ls.audit.cli, fresh_ls.replay.cli"
#: Everything ``serve`` can need, imported at once.
EAGER_SERVE_IMPORTS = "import fresh_ls.server.app"

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"processId": None, "rootUri": None, "capabilities": {}},
}


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body


def _read_frame(stream: Any) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError("the server closed stdout before answering")
        if line in (b"\r\n", b"\n"):
            if length:
                break
            continue
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return dict(json.loads(stream.read(length)))


def _env(cache: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


#: ``serve`` with every import done before stdin is read: the order before the early answer.
EAGER_SERVE = "import fresh_ls.server.app, sys; from fresh_ls.cli import main; sys.exit(main())"


def _handshake(
    root: Path, env: dict[str, str], eager: bool = False, first_request: bool = False
) -> float:
    """Spawn ``serve --stdio``; the seconds until ``initialize`` is answered (with
    ``first_request``: until a ``fresh/status`` sent right behind it is answered)."""
    head = [sys.executable, "-c", EAGER_SERVE] if eager else [sys.executable, "-m", "fresh_ls"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*head, "serve", "--root", str(root), "--stdio", "--no-watch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_frame(_INITIALIZE))
    if first_request:
        proc.stdin.write(
            _frame({"jsonrpc": "2.0", "id": 9, "method": "fresh/status", "params": {}})
        )
    proc.stdin.flush()
    answer = _read_frame(proc.stdout)
    assert "result" in answer, answer
    while first_request and answer.get("id") != 9:
        answer = _read_frame(proc.stdout)
    elapsed = time.perf_counter() - t0
    assert "result" in answer, answer
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
    proc.stdin.close()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()
    return elapsed


def _start_listening(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fresh_ls", "serve", "--root", str(root), "--listen", "--no-watch"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    endpoint = root / ".fresh-ls" / "endpoint.json"
    deadline = time.monotonic() + 60
    while not endpoint.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("the listening server did not write its endpoint")
        time.sleep(0.05)
    return proc


def run(reps: int = DEFAULT_REPS) -> dict[str, Any]:
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="fresh-ls-coldstart-") as tmp:
        scratch = Path(tmp)
        cache = scratch / "pycache"
        served = scratch / "served"
        spawned = scratch / "spawned"
        for root in (served, spawned):
            root.mkdir()
            (root / "cart.py").write_text("def total(items):\n    return sum(items)\n")
        warm, cold = _env(cache), _env(None)
        server = _start_listening(served, warm)
        try:
            cases: dict[str, Callable[[], float]] = {
                "python_pass": lambda: _run([py, "-c", "pass"], warm, scratch),
                "old_status_imports": lambda: _run([py, "-c", OLD_STATUS_IMPORTS], warm, scratch),
                "eager_serve_imports": lambda: _run([py, "-c", EAGER_SERVE_IMPORTS], warm, scratch),
                "status": lambda: _run([py, "-m", "fresh_ls", "status"], warm, served),
                "handshake": lambda: _handshake(spawned, warm),
                "handshake_eager": lambda: _handshake(spawned, warm, eager=True),
                "first_request": lambda: _handshake(spawned, warm, first_request=True),
                "status_no_bytecode_cache": lambda: _run(
                    [py, "-m", "fresh_ls", "status"], cold, served
                ),
                "handshake_no_bytecode_cache": lambda: _handshake(spawned, cold),
            }
            for case in cases.values():  # warm the bytecode cache and the page cache
                case()
            samples: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(reps):
                for name, case in cases.items():
                    samples[name].append(case())
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    s = {name: C.summary_ms(v) for name, v in samples.items()}
    return {
        "machine": C.machine(),
        "scenario": {"reps": reps, "warmup": 1},
        **s,
        "targets": {
            "status_p50_le_300ms": s["status"]["p50_ms"] <= STATUS_TARGET_MS,
            "handshake_p50_le_500ms": s["handshake"]["p50_ms"] <= HANDSHAKE_TARGET_MS,
        },
    }


_LABELS = {
    "python_pass": "python -c pass (the floor)",
    "old_status_imports": "old eager imports of status",
    "eager_serve_imports": "import fresh_ls.server.app (everything)",
    "status": "fresh-ls status, running server",
    "handshake": "serve --stdio to answered initialize",
    "handshake_eager": "same, naive: all imports before stdin is read",
    "first_request": "serve --stdio to a fresh/status sent behind initialize",
    "status_no_bytecode_cache": "fresh-ls status, no bytecode cache",
    "handshake_no_bytecode_cache": "serve handshake, no bytecode cache",
}


def report(r: dict[str, Any]) -> str:
    rows = [
        [label, C.fmt_ms(r[key]["p50_ms"]), C.fmt_ms(r[key]["min_ms"]), C.fmt_ms(r[key]["max_ms"])]
        for key, label in _LABELS.items()
    ]
    return "\n".join(
        [
            f"[cold start] fresh processes, wall time, {r['scenario']['reps']} runs each "
            "after one warm-up (interleaved)",
            C.table(["", "p50", "min", "max"], rows),
        ]
    )


def main() -> None:
    C.main(__doc__, run, report, DEFAULT_REPS)


if __name__ == "__main__":
    main()
