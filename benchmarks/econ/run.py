"""Cost model: what four ways of handling stale views cost, over real recorded agent runs.

    .venv/bin/python benchmarks/econ/run.py [--fixtures DIR] [--budget-bytes N] [--json]
                                            [--markdown]

For each run folder (``meta.json``, ``steps.jsonl``, ``base/``; default: the shared fixtures
``../shared/fixtures/trajectories``, skipped with a message when absent) the run is replayed
against a real ``fresh-ls serve`` with the replay machinery (``fresh_ls.replay``: the
``Workspace`` rebuilds the files step by step, edits are reported with ``fresh/didWrite``,
views registered with ``fresh/observe``). The conversation is rebuilt as an OpenAI
chat-completions request: a fixed system and task message, then per step the assistant's
tool call (the step's recorded arguments) and a ``tool`` message holding the step's recorded
observation. Before each step after the first, the request that chose it is serialized
(``json.dumps`` of ``{"messages": [...]}``, compact, UTF-8) under four arms:

- ``append-only``: the history as the tools returned it (no sidecar);
- ``whole-file``: the same history, plus, at the end, every file that has a stale view,
  re-sent whole (CORVUS-style re-sync);
- ``fresh-ls all``: ``harness.rewrite_request`` with ``policy: all``;
- ``fresh-ls stale``: ``harness.rewrite_request`` with ``policy: stale``;
- ``fresh-ls anchored``: ``policy: stale`` with ``placement: anchored``: current code is
  sent once, as a refresh after the newest tool result, and carried there while current.

A view is stale when the disk's lines at the range it showed differ from what it showed
(the replay's ground truth, which also counts code that only moved). Per arm:

- stale leakage: requests that still carry the tool result of a stale view unreplaced;
- input bytes; cached bytes: the longest prefix identical to the previous request's bytes
  under the same arm (an ideal prefix cache: no block granularity, no expiry); uncached the
  rest;
- cost: uncached bytes + cached bytes / 10 (cached input priced at one tenth), and the same
  relative to append-only.

Claim tested: ``policy: stale`` has zero leakage and costs at most half of ``policy: all``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # standalone run from a checkout without an install
    sys.path.insert(0, str(REPO))

from fresh_ls.client import SyncClient  # noqa: E402
from fresh_ls.core.text import split_lines  # noqa: E402
from fresh_ls.harness.rewrite import rewrite_request  # noqa: E402
from fresh_ls.replay.actions import Workspace  # noqa: E402
from fresh_ls.replay.runner import observe_again, play_step, scratch_run  # noqa: E402
from fresh_ls.report import table  # noqa: E402

DEFAULT_FIXTURES = REPO.parent / "shared" / "fixtures" / "trajectories"
SESSION = "econ"
#: The anchored arm's own session (the same views, with their tool results): patching a
#: result in place observes its view anew, which the other arms' requests do not show.
ANCHORED_SESSION = "econ-anchored"
ARMS = ("append-only", "whole-file", "fresh-ls all", "fresh-ls stale", "fresh-ls anchored")
CACHED_PRICE = 0.1  # a cached input byte costs one tenth of an uncached one
SYSTEM = (
    "You are a software engineer working in a repository. Use the tools to read and edit "
    "files and to run commands; when the task is solved, say so."
)
RESYNC_HEADER = "[re-sync] These files changed since you read them; their current text:\n"


@dataclass
class ArmTotals:
    requests: int = 0
    leaking_requests: int = 0  # requests carrying a stale view unreplaced
    stale_views_carried: int = 0  # summed over requests
    input_bytes: int = 0
    cached_bytes: int = 0
    omitted: int = 0  # projection entries left out (over budget, deleted, ...), summed
    #: what the uncached bytes are made of, besides the conversation's new messages:
    tail_bytes: int = 0  # the section appended at the end (projection or re-sync)
    resent_bytes: int = 0  # earlier history sent again because a marker changed it
    #: projection entries by status: units that are fresh (served because the view that
    #: holds them is replaced whole) and units whose code only moved
    fresh_unit_bytes: int = 0
    moved_bytes: int = 0
    #: placement anchored: bytes of entries sent for the first time (each is sent once)
    refresh_bytes: int = 0

    @property
    def uncached_bytes(self) -> int:
        return self.input_bytes - self.cached_bytes

    @property
    def cost(self) -> float:
        return self.uncached_bytes + CACHED_PRICE * self.cached_bytes

    def add(self, other: ArmTotals) -> None:
        for name in (
            "requests",
            "leaking_requests",
            "stale_views_carried",
            "input_bytes",
            "cached_bytes",
            "omitted",
            "tail_bytes",
            "resent_bytes",
            "fresh_unit_bytes",
            "moved_bytes",
            "refresh_bytes",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class RunEcon:
    run: str
    steps: int = 0
    requests: int = 0
    stale_requests: int = 0  # requests with at least one stale view (ground truth)
    views: int = 0
    final_views: int = 0  # views in the last request
    final_stale: int = 0  # of which stale
    arms: dict[str, ArmTotals] = field(default_factory=lambda: {a: ArmTotals() for a in ARMS})
    not_reproduced: list[str] = field(default_factory=list)
    error: str | None = None


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (binary search over memoryview slices)."""
    va, vb = memoryview(a), memoryview(b)
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if va[:mid] == vb[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def serialize(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _tool_call(index: int, step: dict[str, Any]) -> dict[str, Any]:
    args = {k: v for k, v in step.items() if k not in ("observation", "tool")}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"step{index}",
                "type": "function",
                "function": {
                    "name": str(step.get("tool") or "other"),
                    "arguments": json.dumps(args, ensure_ascii=False),
                },
            }
        ],
    }


class _Arm:
    """One arm's running state: the previous request's bytes, and its totals."""

    def __init__(self, totals: ArmTotals) -> None:
        self.totals = totals
        self.previous = b""
        self.previous_history = 0  # bytes of the previous request before its tail
        self.sent_labels: set[str] = set()  # placement anchored: entries already sent

    def send(
        self, body: dict[str, Any], carried: int, omitted: int = 0, tail_at: int | None = None
    ) -> None:
        """``tail_at``: index of the appended message (projection, re-sync), if any."""
        data = serialize(body)
        # '{"messages":[' history [',' tail] ']}': the history ends before the tail or the
        # closing brackets (which the next request replaces with its new messages).
        history = len(data) - 2
        if tail_at is not None:
            history = len(serialize({"messages": body["messages"][:tail_at]})) - 2
        cached = common_prefix(self.previous, data)
        t = self.totals
        t.requests += 1
        t.input_bytes += len(data)
        t.cached_bytes += cached
        t.tail_bytes += len(data) - 2 - history
        t.resent_bytes += max(0, self.previous_history - cached)
        t.stale_views_carried += carried
        t.leaking_requests += carried > 0
        t.omitted += omitted
        self.previous, self.previous_history = data, history


def econ_run(fixture: Path, budget_bytes: int) -> RunEcon:
    result = RunEcon(run=fixture.name)
    try:
        with scratch_run(fixture, prefix="fresh-ls-econ-") as (meta, steps, ws, client):
            result.run = str(meta.get("id") or fixture.name)
            result.steps = len(steps)
            _replay(client, ws, steps, result, budget_bytes, meta)
    except Exception as exc:  # one broken run is reported, the others still count
        result.error = f"{type(exc).__name__}: {exc}"
    return result


def _replay(
    client: SyncClient,
    ws: Workspace,
    steps: list[dict[str, Any]],
    result: RunEcon,
    budget: int,
    meta: dict[str, Any],
) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Solve the issue of {meta.get('id') or 'this run'}."},
    ]
    shown: dict[str, tuple[str, int, int, str]] = {}  # view id -> path, lines, text shown
    arms = {name: _Arm(result.arms[name]) for name in ARMS}
    for i, step in enumerate(steps):
        if i > 0:
            _request(client, ws, messages, shown, arms, result, budget)
        outcome, registered = play_step(client, ws, i, step, SESSION)
        if outcome.not_reproduced:
            result.not_reproduced.append(f"step {i}: {outcome.not_reproduced}")
        if len(registered) > 1:
            raise ValueError(f"step {i} made {len(registered)} views; one tool result each")
        for v in registered:
            shown[v.view_id] = (v.path, v.first, v.last, v.text)
            result.views += 1
        observe_again(client, ANCHORED_SESSION, registered, str(step.get("observation") or ""))
        messages.append(_tool_call(i, step))
        messages.append(
            {"role": "tool", "tool_call_id": f"step{i}", "content": step.get("observation") or ""}
        )


def _request(
    client: SyncClient,
    ws: Workspace,
    messages: list[dict[str, Any]],
    shown: dict[str, tuple[str, int, int, str]],
    arms: dict[str, _Arm],
    result: RunEcon,
    budget: int,
) -> None:
    disk: dict[str, list[str] | None] = {}

    def lines_of(path: str) -> list[str] | None:
        if path not in disk:
            text = ws.read(path)
            disk[path] = split_lines(text) if text is not None else None
        return disk[path]

    stale: list[str] = []
    for view_id, (path, first, last, text) in shown.items():
        lines = lines_of(path)
        if lines is None or "".join(lines[first - 1 : last]) != text:
            stale.append(view_id)
    result.requests += 1
    result.stale_requests += bool(stale)
    result.final_views, result.final_stale = len(shown), len(stale)
    body = {"messages": messages}

    arms["append-only"].send(body, len(stale))

    resync_paths = sorted({shown[v][0] for v in stale})
    if resync_paths:
        parts = [RESYNC_HEADER]
        for path in resync_paths:
            lines = lines_of(path)
            if lines is None:
                parts.append(f"[file] {path} (deleted)\n")
                continue
            text = "".join(lines)
            parts.append(f"[file] {path} ({len(text.encode('utf-8'))} bytes)\n{text}")
            if text and not text.endswith("\n"):
                parts.append("\n")
        resynced = {"messages": [*messages, {"role": "user", "content": "".join(parts)}]}
        arms["whole-file"].send(resynced, len(stale), tail_at=len(messages))
    else:
        arms["whole-file"].send(body, 0)

    for name, policy, placement in (
        ("fresh-ls all", "all", None),
        ("fresh-ls stale", "stale", None),
        ("fresh-ls anchored", "stale", "anchored"),
    ):
        session = ANCHORED_SESSION if placement == "anchored" else SESSION
        out = rewrite_request(
            client, session, body, policy=policy, budget_bytes=budget, placement=placement
        )
        carried = sum(1 for v in stale if v not in out.replaced.values())
        arms[name].send(out.request, carried, len(out.plan["omitted"]), out.projection_message)
        t = arms[name].totals
        for e in out.plan["entries"]:
            size = len(e["header"].encode("utf-8")) + 1 + e["bytes"]
            if placement == "anchored":
                if e["label"] in arms[name].sent_labels:
                    continue  # carried from an earlier request, cached there
                arms[name].sent_labels.add(e["label"])
                t.refresh_bytes += size
            t.fresh_unit_bytes += size if e["status"] == "fresh" else 0
            t.moved_bytes += size if e["status"] == "moved" else 0


# -- report ----------------------------------------------------------------------------------


def _totals(results: list[RunEcon]) -> dict[str, ArmTotals]:
    totals = {a: ArmTotals() for a in ARMS}
    for r in results:
        for a in ARMS:
            totals[a].add(r.arms[a])
    return totals


def _kb(n: float) -> str:
    return f"{n / 1024:,.0f} KiB"


def arm_rows(totals: dict[str, ArmTotals]) -> list[list[str]]:
    base = totals["append-only"].cost or 1.0
    rows = []
    for a in ARMS:
        t = totals[a]
        cached = t.cached_bytes / t.input_bytes if t.input_bytes else 0.0
        rows.append(
            [
                a,
                f"{t.leaking_requests} of {t.requests}",
                _kb(t.input_bytes),
                f"{_kb(t.cached_bytes)} ({cached:.0%})",
                _kb(t.uncached_bytes),
                _kb(t.tail_bytes),
                _kb(t.resent_bytes),
                _kb(t.cost),
                f"{t.cost / base:.2f}",
            ]
        )
    return rows


ARM_HEADERS = [
    "arm",
    "stale leakage (requests)",
    "input",
    "cached",
    "uncached",
    "of which: end section",
    "history re-sent",
    "cost (bytes-equivalent)",
    "relative cost",
]


def why_rows(totals: dict[str, ArmTotals]) -> list[list[str]]:
    rows = []
    for a in ("fresh-ls all", "fresh-ls stale", "fresh-ls anchored"):
        t = totals[a]
        sent = t.tail_bytes or t.refresh_bytes
        end = sent or 1
        rows.append(
            [
                a,
                _kb(sent),
                f"{_kb(t.fresh_unit_bytes)} ({t.fresh_unit_bytes / end:.0%})",
                f"{_kb(t.moved_bytes)} ({t.moved_bytes / end:.0%})",
                _kb(t.resent_bytes),
                _kb(t.cached_bytes),
            ]
        )
    return rows


WHY_HEADERS = [
    "arm",
    "end section, or refreshes first sent (uncached)",
    "of which fresh units",
    "of which moved units",
    "history re-sent",
    "cached history",
]


def run_rows(results: list[RunEcon]) -> list[list[str]]:
    rows = []
    for r in results:
        a, s = r.arms["fresh-ls all"], r.arms["fresh-ls stale"]
        base = r.arms["append-only"].cost or 1.0
        rows.append(
            [
                r.run,
                f"{r.requests}",
                f"{r.stale_requests}",
                f"{r.final_stale} of {r.final_views}",
                f"{r.arms['whole-file'].cost / base:.2f}",
                f"{a.cost / base:.2f}",
                f"{s.cost / base:.2f}",
                f"{s.cost / a.cost:.2f}" if a.cost else "-",
                f"{s.leaking_requests}",
                f"{r.arms['fresh-ls anchored'].cost / base:.2f}",
                f"{r.arms['fresh-ls anchored'].leaking_requests}",
            ]
        )
    return rows


RUN_HEADERS = [
    "run",
    "requests",
    "stale (truth)",
    "views stale at the end",
    "whole-file",
    "all",
    "stale",
    "stale / all",
    "leaks (stale)",
    "anchored",
    "leaks (anchored)",
]


def claim(totals: dict[str, ArmTotals], results: list[RunEcon]) -> dict[str, Any]:
    s, a = totals["fresh-ls stale"], totals["fresh-ls all"]
    per_run = [r for r in results if r.arms["fresh-ls all"].cost]
    half = [
        r.run for r in per_run if r.arms["fresh-ls stale"].cost <= 0.5 * r.arms["fresh-ls all"].cost
    ]
    return {
        "stale_leakage": s.leaking_requests,
        "stale_over_all": s.cost / a.cost if a.cost else None,
        "zero_leakage": s.leaking_requests == 0,
        "at_most_half": bool(a.cost) and s.cost <= 0.5 * a.cost,
        "runs_at_most_half": len(half),
        "runs": len(per_run),
    }


def _markdown(rows: list[list[str]], headers: list[str]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    p.add_argument("--budget-bytes", type=int, default=131072)
    p.add_argument("--json", action="store_true", help="print results as JSON")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = p.parse_args(argv)
    if not args.fixtures.is_dir():
        print(
            f"econ: skipped: {args.fixtures} is absent (the recorded runs are not on this "
            "machine; pass --fixtures DIR)",
            file=sys.stderr,
        )
        return 0
    folders = sorted(f for f in args.fixtures.iterdir() if (f / "steps.jsonl").is_file())
    if not folders:
        print(f"econ: skipped: no run folders (steps.jsonl) under {args.fixtures}", file=sys.stderr)
        return 0
    results = []
    for n, folder in enumerate(folders, start=1):
        if not args.json:
            print(f"[{n}/{len(folders)}] {folder.name}", file=sys.stderr)
        results.append(econ_run(folder, args.budget_bytes))
    totals = _totals(results)
    verdict = claim(totals, results)
    if args.json:
        out = {
            "runs": [
                {
                    **{k: v for k, v in asdict(r).items() if k != "arms"},
                    "arms": {a: {**asdict(t), "cost": t.cost} for a, t in r.arms.items()},
                }
                for r in results
            ],
            "totals": {a: {**asdict(t), "cost": t.cost} for a, t in totals.items()},
            "model": {
                "serialization": "json.dumps({'messages': [...]}), compact separators, UTF-8",
                "cache": "ideal prefix: the longest prefix identical to the previous request",
                "cached_price": CACHED_PRICE,
                "budget_bytes": args.budget_bytes,
            },
            "claim": verdict,
        }
        print(json.dumps(out, indent=2))
        return 1 if any(r.error for r in results) else 0
    show = _markdown if args.markdown else None
    requests = sum(r.requests for r in results)
    stale_requests = sum(r.stale_requests for r in results)
    print(
        f"{len(results)} runs · {requests} requests · {stale_requests} carry a stale view "
        f"without a sidecar · budget {args.budget_bytes} bytes\n"
    )
    tables = (
        (arm_rows(totals), ARM_HEADERS),
        (why_rows(totals), WHY_HEADERS),
        (run_rows(results), RUN_HEADERS),
    )
    for rows, headers in tables:
        if show:
            print(show(rows, headers))
        else:
            table(rows, headers)
        print()
    ratio = verdict["stale_over_all"]
    print(
        f"claim: policy stale leaks in {verdict['stale_leakage']} requests "
        f"({'met' if verdict['zero_leakage'] else 'NOT met'}); costs "
        f"{ratio:.2f} of policy all overall "
        f"({'met' if verdict['at_most_half'] else 'NOT met'}: at most 0.50), "
        f"and at most half in {verdict['runs_at_most_half']} of {verdict['runs']} runs"
    )
    for r in results:
        for note in r.not_reproduced:
            print(f"not reproduced · {r.run} · {note}")
        if r.error:
            print(f"error · {r.run} · {r.error}")
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
