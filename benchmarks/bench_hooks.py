"""Claude Code hooks: the wall time of one ``fresh-ls hook claude-code`` call, spawned as
Claude Code spawns it (``/bin/sh -c COMMAND``, the event as JSON on stdin,
``CLAUDE_PROJECT_DIR`` set), to its exit.

A hook runs once per tool call and once per prompt, in the agent's loop: its cost is a
Python start, the hook's imports, one connection to the running server and one or two
requests. Cases, interleaved, each a fresh process:

* ``sh -c 'python -c pass'``: the floor (shell and interpreter start);
* ``PostToolUse`` of ``Read``: ``fresh/observe`` of a 40-line range of a 300-line file
  (a new tool call id each time, so the session's views grow as in a real conversation);
* ``PostToolUse`` of ``Edit``: ``fresh/didWrite``;
* ``PostToolUse`` of ``Bash`` that wrote a file (``sed -i``): the command read by the
  proxy's recognizer (imported for Bash events only), then ``fresh/didWrite``;
* ``UserPromptSubmit`` with nothing new: ``fresh/stale`` of the session, no note;
* ``UserPromptSubmit`` after an outside change to a read function (the change made
  untimed before each call): ``fresh/stale`` and a note with its diff;
* no server running: the one-line message on stderr, exit 0;
* for comparison, the ``Read`` case's ``fresh/observe`` from a fresh process that loads
  the CLI and the hook's modules, then observes through ``fresh_ls.client.SyncClient``
  (what the hook used before ``fresh_ls.hooks.link``).

The children run with a bytecode cache in a scratch directory (``PYTHONPYCACHEPREFIX``,
warmed by one untimed run), as an installed package runs.

    .venv/bin/python benchmarks/bench_hooks.py [--json] [--reps N]
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common as C

DEFAULT_REPS = 30
#: A hook call should cost about a process start: p50 within this, per call, Bash
#: included (its command parser, ``fresh_ls.toolcalls``, loads for Bash events only).
P50_TARGET_MS = 150.0
#: The hook calls the target holds for (`run_all.py` names the slowest of these).
TARGET_CASES = ("read", "edit", "bash_write", "prompt_nothing_new", "prompt_with_note")
SESSION_ID = "bench-hooks-0000"

COMMAND = f"{shlex.quote(sys.executable)} -m fresh_ls hook claude-code"
#: The same observe as the hook's, through the full client, reading the event on stdin,
#: after the same modules the hook loads (the CLI and the hook's own), so the two differ in
#: the client only.
SYNC_CLIENT = """
import json, os, sys
import fresh_ls.cli, fresh_ls.hooks.run
from fresh_ls.client import SyncClient
e = json.load(sys.stdin)
f = e["tool_response"]["file"]
with SyncClient.attach(os.environ["CLAUDE_PROJECT_DIR"]) as c:
    c.observe("claude-code-session-id:" + e["session_id"], e["tool_input"]["file_path"],
              view_id=e["tool_use_id"], first_line=f["startLine"],
              last_line=f["startLine"] + f["numLines"] - 1, text=f["content"] + "\\n")
"""


def _module(n_functions: int = 30) -> str:
    return "".join(
        f"def f{i}(x):\n"
        + "".join(f"    x = x + {i} * {j}\n" for j in range(7))
        + "    return x\n\n"
        for i in range(n_functions)
    )


def _env(cache: Path, project: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    env["CLAUDE_PROJECT_DIR"] = str(project)
    return env


def _spawn(command: str, event: dict[str, Any] | None, env: dict[str, str], cwd: Path) -> float:
    data = json.dumps(event).encode() if event is not None else b""
    t0 = time.perf_counter()
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=data,
        env=env,
        cwd=cwd,
        capture_output=True,
    )
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr.decode()}")
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


class _Events:
    """The events of one project: each Read a new tool call id."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls = 0

    def base(self, name: str) -> dict[str, Any]:
        return {"session_id": SESSION_ID, "cwd": str(self.root), "hook_event_name": name}

    def read(self) -> dict[str, Any]:
        return self.read_lines(1 + (self.calls * 9) % 200, 40)

    def read_lines(self, start: int, count: int) -> dict[str, Any]:
        self.calls += 1
        path = self.root / "mod.py"
        lines = path.read_text().split("\n")
        return {
            **self.base("PostToolUse"),
            "tool_name": "Read",
            "tool_input": {"file_path": str(path), "offset": start, "limit": count},
            "tool_response": {
                "type": "text",
                "file": {
                    "filePath": str(path),
                    "content": "\n".join(lines[start - 1 : start - 1 + count]),
                    "numLines": count,
                    "startLine": start,
                    "totalLines": len(lines),
                },
            },
            "tool_use_id": f"toolu_{self.calls:05d}",
        }

    def edit(self) -> dict[str, Any]:
        return {
            **self.base("PostToolUse"),
            "tool_name": "Edit",
            "tool_input": {"file_path": str(self.root / "other.py"), "old_string": "a"},
            "tool_response": {"filePath": str(self.root / "other.py")},
            "tool_use_id": "toolu_edit",
        }

    def bash(self) -> dict[str, Any]:
        return {
            **self.base("PostToolUse"),
            "tool_name": "Bash",
            "tool_input": {"command": "sed -i 's/a = 1/a = 1/' other.py"},
            "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
            "tool_use_id": "toolu_bash",
        }

    def prompt(self) -> dict[str, Any]:
        return {**self.base("UserPromptSubmit"), "prompt": "go on"}


def run(reps: int = DEFAULT_REPS) -> dict[str, Any]:
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="fresh-ls-hooks-") as tmp:
        scratch = Path(tmp)
        cache = scratch / "pycache"
        served, alone = scratch / "served", scratch / "alone"
        for root in (served, alone):
            root.mkdir()
            (root / "mod.py").write_text(_module())
            (root / "other.py").write_text("a = 1\n")
        env, env_alone = _env(cache, served), _env(cache, alone)
        events = _Events(served)
        changes = iter(range(10**6))

        def stale_prompt() -> float:
            # untimed: read f3 (lines 28-36), then change it outside the agent
            _spawn(COMMAND, events.read_lines(28, 9), env, served)
            mod = served / "mod.py"
            text = mod.read_text().replace("    return x\n", f"    return x + {next(changes)}\n", 4)
            mod.write_text(text)
            return _spawn(COMMAND, events.prompt(), env, served)

        server = _start_listening(served, env)
        try:
            cases: dict[str, Callable[[], float]] = {
                "python_pass": lambda: _spawn(f"{shlex.quote(py)} -c pass", None, env, served),
                "read": lambda: _spawn(COMMAND, events.read(), env, served),
                "edit": lambda: _spawn(COMMAND, events.edit(), env, served),
                "bash_write": lambda: _spawn(COMMAND, events.bash(), env, served),
                "prompt_nothing_new": lambda: _spawn(COMMAND, events.prompt(), env, served),
                "prompt_with_note": stale_prompt,
                "no_server": lambda: _spawn(COMMAND, events.prompt(), env_alone, alone),
                "read_via_syncclient": lambda: _spawn(
                    f"{shlex.quote(py)} -c {shlex.quote(SYNC_CLIENT)}", events.read(), env, served
                ),
            }
            for case in cases.values():  # warm the bytecode cache and the page cache
                case()
            samples: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(reps):
                for name, case in cases.items():
                    samples[name].append(case())
            views = events.calls
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
        "scenario": {"reps": reps, "warmup": 1, "views_at_end": views, "file_lines": 300},
        **s,
        "targets": {
            "hook_p50_le_150ms": all(s[k]["p50_ms"] <= P50_TARGET_MS for k in TARGET_CASES)
        },
    }


_LABELS = {
    "python_pass": "sh -c 'python -c pass' (the floor)",
    "read": "PostToolUse Read (fresh/observe)",
    "edit": "PostToolUse Edit (fresh/didWrite)",
    "bash_write": "PostToolUse Bash sed -i (didWrite)",
    "prompt_nothing_new": "UserPromptSubmit, nothing new",
    "prompt_with_note": "UserPromptSubmit, a stale note",
    "no_server": "no server running (message, exit 0)",
    "read_via_syncclient": "for comparison: that observe via SyncClient",
}


def report(r: dict[str, Any]) -> str:
    rows = [
        [
            label,
            C.fmt_ms(r[key]["p50_ms"]),
            C.fmt_ms(r[key]["p95_ms"]),
            C.fmt_ms(r[key]["min_ms"]),
            C.fmt_ms(r[key]["max_ms"]),
        ]
        for key, label in _LABELS.items()
    ]
    sc = r["scenario"]
    return "\n".join(
        [
            f"[hooks] one hook call spawned as Claude Code spawns it, wall time, {sc['reps']} "
            f"runs each after one warm-up (interleaved; {sc['views_at_end']} views at the end)",
            C.table(["", "p50", "p95", "min", "max"], rows),
        ]
    )


def main() -> None:
    C.main(__doc__, run, report, DEFAULT_REPS)


if __name__ == "__main__":
    main()
