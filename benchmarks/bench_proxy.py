"""What ``fresh-ls proxy`` adds to a model request, against a direct connection, in one run.

An Anthropic Messages conversation of Claude Code's shape (``Read`` tool calls, each answered
by a numbered listing of part of a generated module) is sent, streaming, to the scripted
model server (tests/proxy/scripted_model.py) directly and through the proxy (in process, on
its own event loop and thread, with its own fresh-ls server), interleaved. Per history size
(20 and 200 messages) and state:

* ``fresh``: every view unchanged (the files dated an hour into the past, as
  ``bench_policy_all`` dates them: the steady state): the proxy parses the body, finds
  nothing new to register, asks ``fresh/statuses`` once and forwards the original bytes;
* ``fresh, just written``: the same with every file written within the last 2 s, so the
  server re-reads and re-hashes each on every request (its "racy git" guard,
  ``SourceTable``): the first seconds after an agent's writes;
* ``stale``: one file the conversation read has changed (that one inside the 2 s window):
  its views become markers and the current code is appended, every request.

Figures: the whole request (to the last byte of the streamed answer) and the time to the first
streamed byte, p50 and p95 over ``reps`` requests each; the proxy's cost is the difference.

Then, in process, the proxy's own work on the 200-message request (no server calls): the
one parse (``app.Parsed``), reading its tool calls (``apis``), the rewriter's count of the
bytes behind each result (``bytes_after``, for anchored placement), and writing a rewrite (a
marker for the first read, a refresh after the newest) back: spliced into the agent's bytes
(``splice``) against the earlier way, a deep copy of the body and ``json.dumps`` of all of it.

    .venv/bin/python benchmarks/bench_proxy.py [--json] [--reps N]
"""

from __future__ import annotations

import asyncio
import http.client
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import _common as C

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.proxy.scripted_model import Reply, ScriptedModel  # noqa: E402

DEFAULT_REPS = 40
HISTORIES = (20, 200)
FILES = 10
FILE_LINES = 300


def _listing(text: str, first: int, last: int) -> str:
    lines = text.split("\n")
    return "\n".join(f"{n}\t{lines[n - 1]}" for n in range(first, last + 1))


def conversation(root: Path, messages: int) -> dict[str, Any]:
    """A request whose history holds ``messages`` messages (half Read calls, half results)."""
    files = sorted(root.glob("m*.py"))
    history: list[dict[str, Any]] = [{"role": "user", "content": "Refactor the totals."}]
    for i in range((messages - 1) // 2):
        path = files[i % len(files)]
        first = 1 + (i * 37) % (FILE_LINES - 60)
        call_id = f"toolu_{i:05d}"
        history.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": "Read",
                        "input": {"file_path": str(path), "offset": first, "limit": 40},
                    }
                ],
            }
        )
        text = _listing(path.read_text(), first, first + 39)
        history.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}],
            }
        )
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": True,
        "system": [{"type": "text", "text": "You are a coding agent."}],
        "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
        "messages": history,
    }


class _ProxyThread:
    """The proxy on its own event loop, as a separate process would run it."""

    def __init__(self, root: Path, upstream: str) -> None:
        self.root, self.upstream = root, upstream
        self.url = ""
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        from fresh_ls.proxy.serve import running_proxy

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with running_proxy(self.root, self.upstream) as (_proxy, url):
            self.url = url
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> _ProxyThread:
        self._thread.start()
        self._ready.wait(60)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


def _post(base: str, body: bytes) -> tuple[float, float]:
    """(time to the first byte of the answer's body, time to its last byte), seconds."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    t0 = time.perf_counter()
    conn.request(
        "POST",
        parts.path.rstrip("/") + "/v1/messages?beta=true",  # the proxy's path is its secret
        body=body,
        headers={"content-type": "application/json", "x-api-key": "sk-bench"},
    )
    resp = conn.getresponse()
    resp.read(1)
    first = time.perf_counter() - t0
    resp.read()
    total = time.perf_counter() - t0
    conn.close()
    if resp.status != 200:
        raise RuntimeError(f"status {resp.status}")
    return first, total


def _measure(direct: str, proxied: str, body: bytes, reps: int) -> dict[str, Any]:
    _post(proxied, body)  # registration happens on the first request: untimed
    _post(direct, body)
    samples: dict[str, list[float]] = {k: [] for k in ("d_first", "d_total", "p_first", "p_total")}
    with C.no_gc():
        for _ in range(reps):
            f, t = _post(direct, body)
            samples["d_first"].append(f)
            samples["d_total"].append(t)
            f, t = _post(proxied, body)
            samples["p_first"].append(f)
            samples["p_total"].append(t)
    out = {k: C.summary_ms(v) for k, v in samples.items()}
    out["added_p50_ms"] = out["p_total"]["p50_ms"] - out["d_total"]["p50_ms"]
    out["added_p95_ms"] = out["p_total"]["p95_ms"] - out["d_total"]["p95_ms"]
    out["added_first_byte_p50_ms"] = out["p_first"]["p50_ms"] - out["d_first"]["p50_ms"]
    out["request_bytes"] = len(body)
    return out


def in_process(body: bytes, reps: int) -> dict[str, Any]:
    """The proxy's own work on ``body``, each step timed alone (p50 and p95 in ms)."""
    import copy

    from fresh_ls.harness.rewrite import _bytes_after, find_tool_results
    from fresh_ls.proxy.apis import API
    from fresh_ls.proxy.app import Parsed
    from fresh_ls.proxy.shapes import edit_result

    parsed = Parsed.of(body)
    calls = API["anthropic"].tool_calls(parsed.body)
    first, newest = calls[0].call_id, calls[-1].call_id

    def rewritten() -> dict[str, Any]:
        out = edit_result("anthropic", parsed.body, first, lambda _old: "[fresh-ls] marker")
        assert out is not None
        out = edit_result("anthropic", out, newest, lambda old: old + "\n\n[fresh-ls] R1")
        assert out is not None
        return out

    new = rewritten()
    messages = parsed.body["messages"]
    results = find_tool_results(messages, "anthropic")
    order = [r.call_id for r in results]
    steps = {
        "parse": lambda: Parsed.of(body),
        "tool_calls": lambda: API["anthropic"].tool_calls(parsed.body),
        "bytes_after": lambda: _bytes_after(messages, results, order),
        "splice": lambda: parsed.with_body(rewritten()),
        "deepcopy_and_dumps": lambda: json.dumps(copy.deepcopy(new), ensure_ascii=False).encode(
            "utf-8"
        ),
    }
    out: dict[str, Any] = {}
    with C.no_gc():
        for name, step in steps.items():
            samples = []
            for _ in range(reps):
                t0 = time.perf_counter()
                step()
                samples.append(time.perf_counter() - t0)
            out[name] = C.summary_ms(samples)
    out["request_bytes"] = len(body)
    return out


def run(reps: int = DEFAULT_REPS) -> dict[str, Any]:
    results: dict[str, Any] = {"machine": C.machine(), "scenario": {"reps": reps}, "cases": {}}
    for messages in HISTORIES:
        with tempfile.TemporaryDirectory(prefix="fresh-ls-bench-proxy-") as tmp:
            root = Path(tmp).resolve()
            for i in range(FILES):
                (root / f"m{i}.py").write_text(C.generate_module_lines(10 + i, FILE_LINES))
            model = ScriptedModel([Reply(text="ok")] * 100000, None)
            model.start()
            try:
                with _ProxyThread(root, model.url) as proxy:
                    body = json.dumps(conversation(root, messages)).encode()
                    results["cases"][f"{messages}/fresh, just written"] = _measure(
                        model.url, proxy.url, body, reps
                    )
                    C.settle(root, [p.name for p in root.glob("m*.py")])
                    results["cases"][f"{messages}/fresh"] = _measure(
                        model.url, proxy.url, body, reps
                    )
                    target = root / "m0.py"
                    target.write_text("# changed\n" + target.read_text())
                    time.sleep(0.5)  # let the watcher see it
                    results["cases"][f"{messages}/stale"] = _measure(
                        model.url, proxy.url, body, reps
                    )
                    if messages == max(HISTORIES):
                        results["in_process"] = in_process(body, reps)
            finally:
                model.stop()
    big = results["cases"][f"{max(HISTORIES)}/fresh"]
    results["targets"] = {"fresh_200kb_added_p50_le_5ms": big["added_p50_ms"] <= 5.0}
    return results


def report(r: dict[str, Any]) -> str:
    rows = []
    for key, c in r["cases"].items():
        messages, state = key.split("/")
        rows.append(
            [
                f"{messages} messages, {state} ({c['request_bytes'] // 1024} KiB)",
                C.fmt_ms(c["d_total"]["p50_ms"]),
                C.fmt_ms(c["p_total"]["p50_ms"]),
                C.fmt_ms(c["added_p50_ms"]),
                C.fmt_ms(c["added_p95_ms"]),
                C.fmt_ms(c["d_first"]["p50_ms"]),
                C.fmt_ms(c["p_first"]["p50_ms"]),
            ]
        )
    lines = []
    if "in_process" in r:
        p = r["in_process"]
        steps = ("parse", "tool_calls", "bytes_after", "splice", "deepcopy_and_dumps")
        lines = [
            "",
            f"[proxy] its own work on the {p['request_bytes'] // 1024} KiB request, in process",
            C.table(
                ["", *steps],
                [[q, *(C.fmt_ms(p[s][f"{q}_ms"]) for s in steps)] for q in ("p50", "p95")],
            ),
        ]
    return "\n".join(
        [
            f"[proxy] streamed Anthropic request, direct vs through fresh-ls proxy, "
            f"{r['scenario']['reps']} requests each (interleaved)",
            C.table(
                [
                    "",
                    "direct p50",
                    "proxy p50",
                    "added p50",
                    "added p95",
                    "1st byte direct",
                    "1st byte proxy",
                ],
                rows,
            ),
            *lines,
        ]
    )


if __name__ == "__main__":
    C.main(__doc__, run, report, DEFAULT_REPS)
