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
from fresh_ls.toolcalls.searches import is_search_view, search_view_id

SESSION = "replay"
#: The same views, registered with their tool results, planned with ``placement: anchored``
#: (its patches in place observe views anew, which the first session must not see).
ANCHORED = "replay-anchored"


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
    #: units of a view the anchored plan replaced whose current code the request neither
    #: carries nor points to (nor leaves out with a reason): code the model loses
    lost: int = 0
    #: search results (sparse views) whose printed lines differ from the disk, and those of
    #: them the server called fresh (a stale search line the model would be sent)
    stale_searches: int = 0
    search_false_fresh: int = 0


@dataclass
class RunResult:
    run: str
    steps: int = 0
    requests: list[RequestCheck] = field(default_factory=list)
    views_registered: int = 0
    search_views: int = 0  # sparse views of search results (grep -n ...)
    edit_results: int = 0
    diverged_views: int = 0  # views whose shown text differs from the replayed file
    not_reproduced: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def false_fresh(self) -> int:
        return sum(r.false_fresh for r in self.requests)

    @property
    def search_false_fresh(self) -> int:
        return sum(r.search_false_fresh for r in self.requests)

    @property
    def stale_search_requests(self) -> int:
        return sum(1 for r in self.requests if r.stale_searches)

    @property
    def inexact(self) -> int:
        return sum(r.inexact for r in self.requests)

    @property
    def lost(self) -> int:
        return sum(r.lost for r in self.requests)

    @property
    def stale_requests_without(self) -> int:
        return sum(1 for r in self.requests if r.stale_truth)

    @property
    def stale_requests_with(self) -> int:
        return sum(
            1
            for r in self.requests
            if r.false_fresh or r.search_false_fresh or r.inexact or r.lost or not r.commit_ok
        )

    @property
    def projection_bytes(self) -> int:
        return sum(r.used_bytes for r in self.requests)

    @property
    def whole_file_bytes(self) -> int:
        return sum(r.whole_file_bytes for r in self.requests)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.update((name, getattr(self, name)) for name in _DERIVED)
        return out


#: The properties of a ``RunResult`` its JSON carries beside its fields.
_DERIVED = (
    "false_fresh",
    "search_false_fresh",
    "stale_search_requests",
    "inexact",
    "lost",
    "stale_requests_without",
    "stale_requests_with",
    "projection_bytes",
    "whole_file_bytes",
)


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
    #: a search result's ranges (a sparse view), else None
    ranges: tuple[tuple[int, int], ...] | None = None

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        return self.ranges if self.ranges is not None else ((self.first, self.last),)


def play_step(
    client: SyncClient,
    ws: Workspace,
    i: int,
    step: dict[str, Any],
    session: str = SESSION,
    searches: bool = False,
) -> tuple[StepOutcome, list[Registered]]:
    """Apply step ``i`` to the files, report its writes, register the views it showed
    (with ``searches``, a search's lines too: sparse views ``step<i>~s<k>``)."""
    outcome = ws.apply(step)
    for rel in outcome.wrote:
        client.did_write(rel, session=session)
    registered = []
    views = [v for v in outcome.views if v.ranges is None]
    found = [v for v in outcome.views if v.ranges is not None] if searches else []
    ids = [f"step{i}" + (f".{k}" if k else "") for k in range(len(views))]
    ids += [search_view_id(f"step{i}", k) for k in range(len(found))]
    for view_id, view in zip(ids, [*views, *found], strict=True):
        if view.ranges is not None:
            r = client.observe(
                session, view.path, view_id=view_id, ranges=view.ranges, text=view.text
            )
        else:
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
                view_id,
                r["path"],
                r["firstLine"],
                r["lastLine"],
                recorded,
                view.kind,
                r["status"],
                view.ranges,
            )
        )
    return outcome, registered


def observe_again(
    client: SyncClient, session: str, registered: list[Registered], observation: str
) -> None:
    """The views ``play_step`` registered, observed in ``session`` too, with the step's
    observation as their tool ``result`` when it is one view's (placement anchored can
    then patch it in place; a patch observes the view anew, so it needs a session of its
    own beside one planned with the projection at the end)."""
    for v in registered:
        if v.ranges is not None:
            client.observe(session, v.path, view_id=v.view_id, ranges=v.ranges, text=v.text)
            continue
        client.observe(
            session,
            v.path,
            view_id=v.view_id,
            first_line=v.first,
            last_line=v.last,
            text=v.text,
            kind=v.kind,
            result=observation if len(registered) == 1 else None,
        )


def _run(
    client: SyncClient, ws: Workspace, steps: list[dict[str, Any]], result: RunResult, budget: int
) -> None:
    shown: dict[str, Shown] = {}  # viewId -> path, line ranges, text, kind
    shown_anchored: dict[str, Shown] = {}
    sizes: list[int] = []  # per step: the bytes of its tool result
    for i, step in enumerate(steps):
        if shown:
            check = _check_request(client, ws, shown, i, budget)
            ff, inexact, ok, lost = _check_anchored(client, ws, shown_anchored, i, budget, sizes)
            check.false_fresh += ff
            check.inexact += inexact
            check.commit_ok = check.commit_ok and ok
            check.lost = lost
            result.requests.append(check)
        outcome, registered = play_step(client, ws, i, step, searches=True)
        observation = str(step.get("observation") or "")
        sizes.append(len(observation.encode("utf-8")))
        observe_again(client, ANCHORED, registered, observation)
        for v in registered:
            shown_anchored[v.view_id] = (v.path, v.spans, v.text, v.kind)
        if outcome.not_reproduced:
            result.not_reproduced.append(f"step {i}: {outcome.not_reproduced}")
        for v in registered:
            shown[v.view_id] = (v.path, v.spans, v.text, v.kind)
            result.search_views += v.ranges is not None
            result.views_registered += v.ranges is None
            result.edit_results += v.kind == "editResult"
            result.diverged_views += v.status != "fresh"


#: What a registered view showed: its path, line ranges (one, or a search's several), the
#: text and the kind.
Shown = tuple[str, tuple[tuple[int, int], ...], str, str]


def _now(lines: list[str] | None, spans: tuple[tuple[int, int], ...]) -> str | None:
    """The disk's lines at a view's ranges, joined (None: the file is gone)."""
    if lines is None:
        return None
    return "".join("".join(lines[a - 1 : b]) for a, b in spans)


def _disk_lines(ws: Workspace, path: str, cache: dict[str, list[str] | None]) -> list[str] | None:
    if path not in cache:
        text = ws.read(path)
        cache[path] = split_lines(text) if text is not None else None
    return cache[path]


def _check_anchored(
    client: SyncClient,
    ws: Workspace,
    shown: dict[str, Shown],
    index: int,
    budget: int,
    sizes: list[int],
) -> tuple[int, int, bool, int]:
    """The anchored session's request before step ``index``: (false fresh, inexact, commit
    ok, lost units). A view whose lines differ from what the model sees of it (its tool
    result, or the patch that replaced it) and that got no marker is false fresh; every
    entry a refresh carries must be the disk's lines. ``shown`` follows each patch."""
    results = [f"step{j}" for j in range(index)]
    behind = [sum(sizes[j + 1 : index]) for j in range(index)]
    plan = client.project(
        ANCHORED, budget_bytes=budget, placement="anchored", results=results, bytes_after=behind
    )
    ok = bool(client.commit(plan["planId"])["ok"])
    disk: dict[str, list[str] | None] = {}
    markers = {m["viewId"]: m["text"] for m in plan["markers"]}
    for view_id, text in markers.items():
        if "[fresh-ls]" not in text:  # patched in place: the model sees this now
            path, spans, _, kind = shown[view_id]
            shown[view_id] = (path, spans, client.view_text(ANCHORED, view_id)["text"], kind)
    false_fresh = 0
    for view_id, (path, spans, text, _) in shown.items():
        now = _now(_disk_lines(ws, path, disk), spans)
        patched = view_id in markers and "[fresh-ls]" not in markers[view_id]
        if now != text and (view_id not in markers or patched):
            false_fresh += 1
    inexact = 0
    for e in plan["entries"]:
        lines = _disk_lines(ws, e["path"], disk)
        now = "".join(lines[e["firstLine"] - 1 : e["lastLine"]]) if lines is not None else None
        inexact += now != e["text"]
    return false_fresh, inexact, ok, _lost(client.stale(ANCHORED)["views"], plan, markers)


def _lost(views: list[dict[str, Any]], plan: dict[str, Any], markers: dict[str, str]) -> int:
    """Units of replaced views with no current code in reach: not in an entry that serves
    the view (its own, or one holding its current lines), not left out with a reason, not
    in the result's kept head (a marker that keeps one starts with the result's own text),
    not pointed to in another result."""
    entries: dict[str, list[dict[str, Any]]] = {}
    for e in plan["entries"]:
        for v in e["viewIds"]:
            entries.setdefault(v, []).append(e)
    left_out = {(v, o["unitId"].split(".")[0]) for o in plan["omitted"] for v in o["viewIds"]}
    lost = 0
    for v in views:
        text = markers.get(v["viewId"])
        if text is None or "[fresh-ls]" not in text:
            continue  # left in place, or patched in place (the result shows current lines)
        headed = not text.startswith("[fresh-ls] ")
        elsewhere = "shown current elsewhere" in text
        for u in v["units"]:
            if (v["viewId"], u["unitId"]) in left_out:
                continue
            if (headed or elsewhere) and u["status"] in ("fresh", "moved"):
                continue
            cur = u["current"]
            if any(
                e["unitId"].split(".")[0] == u["unitId"]
                or (
                    cur is not None
                    and e["firstLine"] <= cur["firstLine"]
                    and cur["lastLine"] <= e["lastLine"]
                )
                for e in entries.get(v["viewId"], [])
            ):
                continue
            lost += 1
    return lost


def _check_request(
    client: SyncClient,
    ws: Workspace,
    shown: dict[str, Shown],
    index: int,
    budget: int,
) -> RequestCheck:
    disk: dict[str, list[str] | None] = {}
    stale = client.stale(SESSION)["views"]
    plan = client.project(SESSION, budget_bytes=budget)
    commit = client.commit(plan["planId"])
    truth = false_fresh = nonfresh = changed = whole = search_false_fresh = 0
    resync: set[str] = set()
    changed_reads: list[int] = []
    changed_snippets: list[int] = []
    stale_searches = 0
    for v in stale:
        path, spans, text, kind = shown[v["viewId"]]
        lines = _disk_lines(ws, path, disk)
        now = _now(lines, spans)
        differs = now != text
        if is_search_view(v["viewId"]):  # counted apart: the file-view figures stay comparable
            stale_searches += differs
            search_false_fresh += differs and v["status"] == "fresh"
            continue
        truth += differs
        nonfresh += v["status"] != "fresh"
        if v["status"] not in ("fresh", "moved"):
            changed += 1
            step = int(v["viewId"].removeprefix("step").split(".")[0])
            (changed_snippets if kind == "editResult" else changed_reads).append(step)
        if differs and v["status"] == "fresh":
            false_fresh += 1
        if v["status"] != "fresh" and lines is not None:
            resync.add(path)
    for path in resync:
        whole += len("".join(_disk_lines(ws, path, disk) or []).encode("utf-8"))
    inexact = 0
    for e in plan["entries"]:
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
        commit_ok=bool(commit["ok"]),
        used_bytes=int(plan["usedBytes"]),
        whole_file_bytes=whole,
        changed_reads=sorted(set(changed_reads)),
        changed_edit_results=sorted(set(changed_snippets)),
        stale_searches=stale_searches,
        search_false_fresh=search_false_fresh,
    )
