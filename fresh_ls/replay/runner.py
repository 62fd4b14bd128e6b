"""Replay a recorded agent run against a real ``fresh-ls serve`` and check what it answers.

For every step: before the model request that chose it, ``fresh/stale``, ``fresh/project``
and ``fresh/commit`` are called and checked against the disk; then the step is applied to
the scratch root (edits written to the files and reported with ``fresh/didWrite``, views and
edit-result snippets registered with ``fresh/observe``). The two numbers that must be zero:

- false fresh: a view called ``fresh`` while the disk lines at its observed range differ
  from what it showed;
- inexact entries: a projected entry whose text is not byte for byte the disk's lines.

Each request is planned twice, with ``placement: end`` and with ``placement: anchored``
(every earlier step's tool result in the request; refreshes after the newest); both count:
under anchored, a view whose lines differ from what it showed and that got no marker is
false fresh too (its old tool result would reach the model), and every entry a refresh
carries must be the disk's lines. Both commits must pass.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fresh_ls.client import FreshClientError, SyncClient
from fresh_ls.core.text import split_lines
from fresh_ls.replay.actions import StepOutcome, Workspace

SESSION = "replay"


@dataclass
class RequestCheck:
    """What was true just before one model request (``index`` = the step it preceded)."""

    index: int
    views: int
    stale_truth: int  # views whose lines at the observed range differ from what they showed
    nonfresh: int  # views the server called anything but fresh
    changed: int  # views the server called changed, deleted, ambiguous or unreadable
    false_fresh: int
    inexact: int
    commit_ok: bool
    used_bytes: int
    whole_file_bytes: int  # whole files of every not-fresh view (a whole-file re-sync)
    #: steps whose views the server called changed/deleted/ambiguous/unreadable (moves
    #: excluded, as in the public rule): reads, and edit-result snippets
    changed_reads: list[int] = field(default_factory=list)
    changed_edit_results: list[int] = field(default_factory=list)


@dataclass
class RunResult:
    run: str
    steps: int = 0
    requests: list[RequestCheck] = field(default_factory=list)
    views_registered: int = 0
    edit_results: int = 0
    diverged_views: int = 0  # views whose shown text differs from the replayed file
    not_reproduced: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def false_fresh(self) -> int:
        return sum(r.false_fresh for r in self.requests)

    @property
    def inexact(self) -> int:
        return sum(r.inexact for r in self.requests)

    @property
    def stale_requests_without(self) -> int:
        return sum(1 for r in self.requests if r.stale_truth)

    @property
    def stale_requests_with(self) -> int:
        return sum(1 for r in self.requests if r.false_fresh or r.inexact or not r.commit_ok)

    @property
    def projection_bytes(self) -> int:
        return sum(r.used_bytes for r in self.requests)

    @property
    def whole_file_bytes(self) -> int:
        return sum(r.whole_file_bytes for r in self.requests)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(
            false_fresh=self.false_fresh,
            inexact=self.inexact,
            stale_requests_without=self.stale_requests_without,
            stale_requests_with=self.stale_requests_with,
            projection_bytes=self.projection_bytes,
            whole_file_bytes=self.whole_file_bytes,
        )
        return out


def load_steps(fixture: Path) -> list[dict[str, Any]]:
    with (fixture / "steps.jsonl").open() as f:
        return [json.loads(line) for line in f if line.strip()]


@contextlib.contextmanager
def scratch_run(
    fixture: Path, prefix: str = "fresh-ls-replay-", keep: bool = False
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]], Workspace, SyncClient]]:
    """A recorded run ready to replay: its meta and steps, a scratch copy of its ``base/``
    with the editor semantics of its agent, and a real server on that copy."""
    meta = json.loads((fixture / "meta.json").read_text())
    steps = load_steps(fixture)
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        shutil.copytree(fixture / "base", root, dirs_exist_ok=True)
        ws = Workspace(
            root,
            list(meta.get("workspacePrefixes") or []),
            openhands=str(meta.get("format", "")).startswith("openhands"),
        )
        with SyncClient.spawn(root) as client:
            yield meta, steps, ws, client
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def replay(fixture: Path, budget_bytes: int = 131072, keep: bool = False) -> RunResult:
    result = RunResult(run=fixture.name)
    try:
        with scratch_run(fixture, keep=keep) as (meta, steps, ws, client):
            result.run = meta.get("id") or fixture.name
            result.steps = len(steps)
            _run(client, ws, steps, result, budget_bytes)
    except (FreshClientError, OSError, ValueError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    return result


@dataclass
class Registered:
    """A view the replay registered: what the server recorded for it (it restores a final
    newline that tools strip) and the status it answered at once."""

    view_id: str
    path: str
    first: int
    last: int
    text: str
    kind: str
    status: str


def play_step(
    client: SyncClient, ws: Workspace, i: int, step: dict[str, Any], session: str = SESSION
) -> tuple[StepOutcome, list[Registered]]:
    """Apply step ``i`` to the files, report its writes, register the views it showed."""
    outcome = ws.apply(step)
    for rel in outcome.wrote:
        client.did_write(rel, session=session)
    registered = []
    for k, view in enumerate(outcome.views):
        view_id = f"step{i}" + (f".{k}" if k else "")
        r = client.observe(
            session,
            view.path,
            view_id=view_id,
            first_line=view.first,
            last_line=view.last,
            text=view.text,
            kind=view.kind,
        )
        recorded = client.view_text(session, view_id)["text"]
        registered.append(
            Registered(
                view_id, r["path"], r["firstLine"], r["lastLine"], recorded, view.kind, r["status"]
            )
        )
    return outcome, registered


def _run(
    client: SyncClient, ws: Workspace, steps: list[dict[str, Any]], result: RunResult, budget: int
) -> None:
    shown: dict[str, tuple[str, int, int, str, str]] = {}  # viewId -> path, lines, text, kind
    for i, step in enumerate(steps):
        if shown:
            result.requests.append(_check_request(client, ws, shown, i, budget))
        outcome, registered = play_step(client, ws, i, step)
        if outcome.not_reproduced:
            result.not_reproduced.append(f"step {i}: {outcome.not_reproduced}")
        for v in registered:
            shown[v.view_id] = (v.path, v.first, v.last, v.text, v.kind)
            result.views_registered += 1
            result.edit_results += v.kind == "editResult"
            result.diverged_views += v.status != "fresh"


def _disk_lines(ws: Workspace, path: str, cache: dict[str, list[str] | None]) -> list[str] | None:
    if path not in cache:
        text = ws.read(path)
        cache[path] = split_lines(text) if text is not None else None
    return cache[path]


def _check_request(
    client: SyncClient,
    ws: Workspace,
    shown: dict[str, tuple[str, int, int, str, str]],
    index: int,
    budget: int,
) -> RequestCheck:
    disk: dict[str, list[str] | None] = {}
    stale = client.stale(SESSION)["views"]
    plan = client.project(SESSION, budget_bytes=budget)
    commit = client.commit(plan["planId"])
    anchored = client.project(
        SESSION,
        budget_bytes=budget,
        placement="anchored",
        results=[f"step{j}" for j in range(index)],
    )
    anchored_commit = client.commit(anchored["planId"])
    replaced = {m["viewId"] for m in anchored["markers"]}
    truth = false_fresh = nonfresh = changed = whole = 0
    resync: set[str] = set()
    changed_reads: list[int] = []
    changed_snippets: list[int] = []
    for v in stale:
        path, first, last, text, kind = shown[v["viewId"]]
        lines = _disk_lines(ws, path, disk)
        now = "".join(lines[first - 1 : last]) if lines is not None else None
        differs = now != text
        truth += differs
        nonfresh += v["status"] != "fresh"
        if v["status"] not in ("fresh", "moved"):
            changed += 1
            step = int(v["viewId"].removeprefix("step").split(".")[0])
            (changed_snippets if kind == "editResult" else changed_reads).append(step)
        if differs and v["status"] == "fresh":
            false_fresh += 1
        elif differs and v["viewId"] not in replaced:
            false_fresh += 1  # anchored left a stale tool result in place
        if v["status"] != "fresh" and lines is not None:
            resync.add(path)
    for path in resync:
        whole += len("".join(_disk_lines(ws, path, disk) or []).encode("utf-8"))
    inexact = 0
    for e in [*plan["entries"], *anchored["entries"]]:
        lines = _disk_lines(ws, e["path"], disk)
        now = "".join(lines[e["firstLine"] - 1 : e["lastLine"]]) if lines is not None else None
        inexact += now != e["text"]
    return RequestCheck(
        index=index,
        views=len(stale),
        stale_truth=truth,
        nonfresh=nonfresh,
        changed=changed,
        false_fresh=false_fresh,
        inexact=inexact,
        commit_ok=bool(commit["ok"]) and bool(anchored_commit["ok"]),
        used_bytes=int(plan["usedBytes"]),
        whole_file_bytes=whole,
        changed_reads=sorted(set(changed_reads)),
        changed_edit_results=sorted(set(changed_snippets)),
    )
