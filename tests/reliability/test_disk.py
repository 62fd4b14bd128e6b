"""The disk moving under the server: write bursts during project/commit, and files that are
big, binary, replaced by a FIFO or a symlink out of the root, or vanish and come back."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from ._support import FULL, WAIT_S, count, disk_lines, report, serving, write_atomic

pytestmark = pytest.mark.timeout(600 if FULL else 60)


def _version(k: int) -> bytes:
    """Version ``k`` of burst.py: its definitions move (blank lines on top) and change."""
    top = "\n" * (k % 4)
    return (
        f"{top}RATE = {k}\n\n\ndef price(q):\n    return q * RATE + {k}\n\n\n"
        f"def name():\n    return 'v{k % 7}'\n"
    ).encode()


def test_write_bursts_during_project_and_commit(ws: Path) -> None:
    rounds = count(60, 600)
    target = ws / "burst.py"
    versions: list[bytes] = [_version(0)]
    target.write_bytes(versions[0])
    stop = threading.Event()
    quiet = threading.Event()  # set: the writer pauses
    lock = threading.Lock()
    writes = [0]

    def writer() -> None:
        k = 0
        while not stop.is_set():
            if quiet.is_set():
                time.sleep(0.005)
                continue
            k += 1
            data = _version(k)
            with lock:
                versions.append(data)
            write_atomic(target, data)
            writes[0] += 1

    problems: list[str] = []
    entries = commits_ok = commits_failed = detected = 0
    started = time.monotonic()
    with serving(ws) as server:
        conn = server.client()
        conn.result("fresh/observe", {"session": "b", "path": "burst.py", "viewId": "whole"})
        conn.result("fresh/observe", {"session": "b", "path": "burst.py", "viewId": "price",
                                      "firstLine": 4, "lastLine": 5})
        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        try:
            for r in range(rounds):
                plan = conn.result("fresh/project", {"session": "b", "policy": "all"})
                with lock:
                    seen = list(versions)
                for e in plan["entries"]:
                    entries += 1
                    text = e["text"].encode()
                    if not any(disk_lines(v, e["firstLine"], e["lastLine"]) == text
                               for v in seen):
                        problems.append(f"round {r}: entry lines {e['firstLine']}-"
                                        f"{e['lastLine']} match no version on disk: {text!r}")
                    if e["bytes"] != len(text) or e["sha256"] != hashlib.sha256(text).hexdigest():
                        problems.append(f"round {r}: bytes/sha256 do not describe text")
                commit = conn.result("fresh/commit", {"planId": plan["planId"]})
                if not isinstance(commit.get("ok"), bool) or not set(commit["changed"]) <= {
                    "burst.py"
                }:
                    problems.append(f"round {r}: commit {commit}")
                commits_ok += commit["ok"] is True
                commits_failed += commit["ok"] is False
                if r % 5 == 0:
                    # Quiet disk: a plan made now commits; a write after the plan fails it.
                    quiet.set()
                    time.sleep(0.05)
                    plan = conn.result("fresh/project", {"session": "b", "policy": "all"})
                    ok = conn.result("fresh/commit", {"planId": plan["planId"]})
                    if ok != {"ok": True, "changed": []}:
                        problems.append(f"round {r}: quiet disk, commit {ok}")
                    plan = conn.result("fresh/project", {"session": "b", "policy": "all"})
                    with lock:
                        k = len(versions) + 1000
                        data = _version(k)
                        versions.append(data)
                    write_atomic(target, data)
                    late = conn.result("fresh/commit", {"planId": plan["planId"]})
                    if late != {"ok": False, "changed": ["burst.py"]}:
                        problems.append(f"round {r}: disk changed after the plan, commit {late}")
                    else:
                        detected += 1
                    quiet.clear()
            assert server.alive()
        finally:
            stop.set()
            thread.join(WAIT_S)
    report("write-bursts", rounds=rounds, writes=writes[0], entries=entries,
           commits_ok=commits_ok, commits_refused=commits_failed,
           late_writes_detected=detected, problems=len(problems),
           seconds=round(time.monotonic() - started, 1))
    assert not problems, "\n".join(problems[:15])


# -- big, binary, vanishing -------------------------------------------------------------------

BIG = b"x = 'a line that repeats to make a file of more than four MiB'\n"


def _big(n: int = 4 * 1024 * 1024) -> bytes:
    return BIG * (n // len(BIG) + 1)


def test_big_binary_and_vanishing_files(ws: Path, tmp_path: Path) -> None:
    rounds = count(20, 200)
    (ws / "huge.py").write_bytes(_big())
    (ws / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary\x00" * 100)
    (ws / "nul.py").write_bytes(b"x = 1\n\x00\n")
    outside = tmp_path / "secret.py"
    outside.write_text("SECRET = 'never served'\n")
    problems: list[str] = []
    started = time.monotonic()
    with serving(ws) as server:
        conn = server.client()
        for name in ("huge.py", "blob.bin", "nul.py"):
            reply = conn.call("fresh/observe", {"session": "f", "path": name})
            if reply.get("error", {}).get("code") != -32011 or name not in reply["error"][
                "message"
            ]:
                problems.append(f"observe {name}: not -32011 naming it: {str(reply)[:300]}")
        # Views of files that then vanish, turn binary, grow too large, become a FIFO, a
        # directory, or a symlink out of the root; each comes back between rounds.
        changes = {
            "gone.py": lambda p: p.unlink(),
            "tobin.py": lambda p: p.write_bytes(b"\x00\x01\x02binary"),
            "togrow.py": lambda p: p.write_bytes(_big()),
            "tolatin.py": lambda p: p.write_bytes("name = 'café'\n".encode("latin-1")),
            "tofifo.py": lambda p: (p.unlink(), os.mkfifo(p)),
            "todir.py": lambda p: (p.unlink(), p.mkdir()),
            "tolink.py": lambda p: (p.unlink(), p.symlink_to(outside)),
        }
        want = {"gone.py": {"deleted"}}
        original = b"def f():\n    return 1\n"
        statuses: dict[str, set[str]] = {name: set() for name in changes}
        for r in range(rounds):
            for name in changes:
                path = ws / name
                if path.is_symlink() or path.is_file() or path.exists():
                    if path.is_dir() and not path.is_symlink():
                        path.rmdir()
                    else:
                        path.unlink()
                path.write_bytes(original)
                got = conn.call("fresh/observe", {"session": "f", "path": name,
                                                  "viewId": f"{name}-{r}"})
                if "result" not in got:
                    problems.append(f"round {r}: observe {name}: {str(got)[:200]}")
            for name, change in changes.items():
                change(ws / name)
            conn.settimeout(WAIT_S)
            stale = conn.result("fresh/stale", {"session": "f",
                                                "viewIds": [f"{n}-{r}" for n in changes]})
            for v in stale["views"]:
                name = v["path"]
                statuses[name].add(v["status"])
                allowed = want.get(name, {"unreadable", "deleted"})
                if v["status"] not in allowed:
                    problems.append(f"round {r}: {name} is {v['status']}, want {allowed}")
            plan = conn.result("fresh/project", {"session": "f", "policy": "all"})
            if "never served" in plan["rendered"] or any(
                "SECRET" in e["text"] for e in plan["entries"]
            ):
                problems.append(f"round {r}: the file outside the root was served")
            assert server.alive(), server.log_tail()
        (ws / "tofifo.py").unlink()
        total = conn.result("fresh/status", {})
        views = {s["session"]: s["views"] for s in total["sessions"]}
    report("big-binary-vanishing", rounds=rounds, files=len(changes),
           views=views.get("f", 0), problems=len(problems),
           statuses="/".join(f"{n}:{'+'.join(sorted(s))}" for n, s in statuses.items()),
           seconds=round(time.monotonic() - started, 1))
    assert views.get("f") == rounds * len(changes)
    assert not problems, "\n".join(problems[:15])
