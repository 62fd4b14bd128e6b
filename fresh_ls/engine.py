"""The engine: one per root, shared by every connection.

It owns the current sources (checked against the disk on every request), the views of
every session (in memory, written through to the store before an ``observe`` is
acknowledged), the plans that ``fresh/commit`` checks, the editor buffers that only set
``editorDirty``, and who changed what. The rules themselves live in ``fresh_ls.core``; the
engine only gathers their inputs and shapes their outputs for the wire (``fresh_ls.wire``).
"""

from __future__ import annotations

import contextlib
import functools
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from fresh_ls import __version__, wire
from fresh_ls import protocol as proto
from fresh_ls.core import projection as proj
from fresh_ls.core.anchors import anchor_view
from fresh_ls.core.model import LineRange, UnitAssessment, View, ViewAssessment
from fresh_ls.core.paths import PathOutsideRoot, resolve_in_root
from fresh_ls.core.ranges import changed_lines, observed_lines, observed_range
from fresh_ls.core.sources import Source, SourceError, SourceTable
from fresh_ls.core.staleness import assess_view, diff_of
from fresh_ls.core.text import sha256_text, split_lines
from fresh_ls.errors import FileUnreadable, OutsideRoot, UnknownId
from fresh_ls.store import ViewStore

#: Plans kept per session at least, and how long each is kept at least (the contract's floor).
PLANS_KEPT = 16
PLAN_TTL_S = 30 * 60
#: How long a ``fresh/didWrite`` or an editor save claims the next change of its file.
CLAIM_WINDOW_S = 10.0
#: How many recent changes are remembered per file for ``changedBy``.
CHANGES_KEPT = 32

Notify = Callable[[proto.DidInvalidateParams], None]
P = ParamSpec("P")
R = TypeVar("R")


def _in_one_moment(
    method: Callable[Concatenate[Engine, P], R],
) -> Callable[Concatenate[Engine, P], R]:
    """Run a request against one snapshot of the disk (see ``Engine._moment``)."""

    @functools.wraps(method)
    def wrapper(self: Engine, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._moment():
            return method(self, *args, **kwargs)

    return wrapper


@dataclass(slots=True)
class Change:
    """A change the engine saw: who made it and which lines (in the new text) it touched."""

    who: str  # "session:<id>" | "editor" | "outside"
    at: float
    first: int
    last: int
    sha_after: str | None


@dataclass(slots=True)
class Plan:
    plan_id: str
    session: str
    created: float
    entries: list[tuple[str, int, int, str]]  # path, first, last, sha256
    #: Views the plan left in place (no marker): the request carries them as the tools
    #: returned them, so commit fails if they are no longer fresh (contract v1.1).
    kept: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Claim:
    who: str
    at: float


@dataclass
class Engine:
    root: Path
    state_dir: Path
    store: ViewStore
    sources: SourceTable = field(init=False)
    views: dict[str, dict[str, View]] = field(default_factory=dict)
    plans: OrderedDict[str, Plan] = field(default_factory=OrderedDict)
    watching: bool = False
    listeners: list[Notify] = field(default_factory=list)
    #: Whole projections and per-file pieces by content hash (see ``proj.ProjectionCache``).
    projections: proj.ProjectionCache = field(default_factory=proj.ProjectionCache)

    def __post_init__(self) -> None:
        self.sources = SourceTable(self.root)
        self._seq = 0
        self._assessed: dict[tuple[str, str], tuple[str, int, ViewAssessment]] = {}
        self._last_status: dict[tuple[str, str], str] = {}
        self._changes: dict[str, list[Change]] = {}
        self._claims: dict[str, _Claim] = {}
        self._buffers: dict[tuple[str, str], str] = {}
        self._known_sha: dict[str, str | None] = {}
        self._snapshot: dict[str, tuple[Source | None, str | None]] | None = None
        self._plans_by_session: dict[str, deque[str]] = {}

    # -- lifecycle ------------------------------------------------------------------------

    @classmethod
    async def open(cls, root: Path, state_dir: Path) -> Engine:
        store = await ViewStore.open(state_dir / "views.sqlite3")
        engine = cls(root=root, state_dir=state_dir, store=store)
        for view in await store.load_views():
            engine.views.setdefault(view.session, {})[view.view_id] = view
            engine._seq = max(engine._seq, view.seq)
        for session, views in engine.views.items():
            for view in views.values():
                engine._last_status[(session, view.view_id)] = engine._assess(view).status
        return engine

    async def close(self) -> None:
        await self.store.close()

    # -- sources --------------------------------------------------------------------------

    def resolve(self, path: str, field_name: str = "path") -> str:
        try:
            rel, _ = resolve_in_root(self.root, path)
        except PathOutsideRoot as exc:
            raise OutsideRoot(f"{field_name}: {exc}") from None
        return rel

    def current(self, rel: str) -> Source:
        """The file as the disk holds it now; records who changed it when it changed."""
        before = self.sources.peek(rel)
        try:
            source = self.sources.get(rel)
        except SourceError:
            if self._known_sha.get(rel) is not None:
                self._record_change(rel, None, None)
            self._known_sha[rel] = None
            raise
        known = self._known_sha.get(rel, source.sha256)
        if known != source.sha256:
            self._record_change(rel, before, source)
        self._known_sha[rel] = source.sha256
        return source

    def _current_or_none(self, rel: str) -> tuple[Source | None, str | None]:
        snapshot = self._snapshot
        if snapshot is not None and rel in snapshot:
            return snapshot[rel]
        try:
            found: tuple[Source | None, str | None] = (self.current(rel), None)
        except SourceError as exc:
            found = (None, exc.reason)
        if snapshot is not None:
            snapshot[rel] = found
        return found

    @contextlib.contextmanager
    def _moment(self) -> Iterator[None]:
        """Within one request every file is checked against the disk once, not once per
        view of it: 500 views of 100 files cost 100 stats, and one answer sees one disk."""
        if self._snapshot is not None:
            yield
            return
        self._snapshot = {}
        try:
            yield
        finally:
            self._snapshot = None

    def _record_change(self, rel: str, before: Source | None, after: Source | None) -> None:
        now = time.time()
        claim = self._claims.pop(rel, None)
        who = claim.who if claim is not None and now - claim.at <= CLAIM_WINDOW_S else "outside"
        first, last = changed_lines(before, after)
        changes = self._changes.setdefault(rel, [])
        changes.append(Change(who, now, first, last, after.sha256 if after else None))
        del changes[:-CHANGES_KEPT]

    def claim(self, rel: str, who: str) -> None:
        """``who`` wrote ``rel``: attribute the change to them, whether the watcher saw it
        first (then it is the last change, recorded as ``outside``) or not (then it is
        the next change, recorded when the disk is read right here)."""
        now = time.time()
        self._claims[rel] = _Claim(who, now)
        self._current_or_none(rel)  # an unseen change is recorded now, with the claim
        if rel not in self._claims:
            return
        changes = self._changes.get(rel)
        last = changes[-1] if changes else None
        if (
            last is not None
            and last.who == "outside"
            and now - last.at <= CLAIM_WINDOW_S
            and last.sha_after == self._known_sha.get(rel)
        ):
            last.who = who
            del self._claims[rel]

    # -- assessment -----------------------------------------------------------------------

    def _assess(self, view: View) -> ViewAssessment:
        source, reason = self._current_or_none(view.path)
        sha = source.sha256 if source is not None else f"!{reason}"
        key = (view.session, view.view_id)
        cached = self._assessed.get(key)
        if cached is not None and cached[0] == sha and cached[1] == view.seq:
            return cached[2]
        assessment = assess_view(view, source, reason)
        self._assessed[key] = (sha, view.seq, assessment)
        return assessment

    def _session_views(self, session: str, view_ids: list[str] | None) -> list[View]:
        views = self.views.get(session, {})
        if view_ids is None:
            return sorted(views.values(), key=lambda v: v.seq)
        unknown = [v for v in view_ids if v not in views]
        if unknown:
            raise UnknownId(
                f"viewIds: unknown view id(s) {', '.join(map(repr, unknown))} in session "
                f"{session!r}; observe them first or drop them from viewIds"
            )
        return [views[v] for v in view_ids]

    def editor_dirty(self, rel: str) -> bool:
        texts = [t for (_, p), t in self._buffers.items() if p == rel]
        if not texts:
            return False
        source, _ = self._current_or_none(rel)
        disk = source.text if source is not None else None
        return any(t != disk for t in texts)

    def changed_by(self, session: str, view: View, ua: UnitAssessment) -> str | None:
        changes = [c for c in self._changes.get(view.path, []) if c.at >= view.observed_at]
        if not changes:
            return None
        at = ua.current or LineRange(ua.unit.obs_first, ua.unit.obs_last)
        overlapping = [c for c in changes if c.first <= at.last + 1 and at.first <= c.last + 1]
        change = (overlapping or changes)[-1]
        if change.who == f"session:{session}":
            return "self"
        return change.who

    # -- requests -------------------------------------------------------------------------

    async def observe(self, p: proto.ObserveParams) -> proto.ObserveResult:
        session, text = p.session, p.text
        rel = self.resolve(p.path)
        try:
            source = self.current(rel)
        except SourceError as exc:
            raise FileUnreadable(f"path: {exc.message}") from None
        n = source.line_count
        given = split_lines(text) if text is not None else None
        first, last, whole = observed_range(p.first_line, p.last_line, n, given)
        observed = observed_lines(source, first, last, given)
        units = anchor_view(rel, source, first, last, observed, whole)
        self._seq += 1
        view = View(
            session=session,
            view_id=p.view_id or f"v-{uuid.uuid4().hex[:12]}",
            path=rel,
            first_line=first,
            last_line=last,
            kind="editResult" if p.kind == proto.ViewKind.EDIT_RESULT else "read",
            seq=self._seq,
            observed_text="".join(observed),
            observed_sha256=sha256_text("".join(observed)),
            units=units,
            observed_at=time.time(),
        )
        await self.store.put_view(view)
        self.views.setdefault(session, {})[view.view_id] = view
        assessment = self._assess(view)
        self._last_status[(session, view.view_id)] = assessment.status
        # Editors list views: a new (or replaced) one is news for their panels too.
        self._emit(session, [view.view_id], rel)
        return wire.observe_result(view, assessment)

    @_in_one_moment
    def stale(self, session: str, view_ids: list[str] | None = None) -> proto.StaleResult:
        out = []
        for view in self._session_views(session, view_ids):
            a = self._assess(view)
            source, _ = self._current_or_none(view.path)
            for ua in a.units:
                diff_of(view.path, ua, source)
            dirty = self.editor_dirty(view.path)
            who = [self.changed_by(session, view, ua) for ua in a.units]
            out.append(wire.stale_view(a, dirty, who))
        return proto.StaleResult(views=tuple(out))

    def _project(
        self,
        session: str,
        budget_bytes: int = proj.DEFAULT_BUDGET_BYTES,
        policy: str = "stale",
        view_ids: list[str] | None = None,
    ) -> tuple[str, proj.Projection]:
        views = self._session_views(session, view_ids)
        assessments = [self._assess(v) for v in views]
        sources: dict[str, Source] = {}
        for v in views:
            if v.path not in sources:
                src, _ = self._current_or_none(v.path)
                if src is not None:
                    sources[v.path] = src
        dirty = frozenset(p for p in sources if self.editor_dirty(p))
        projection = self.projections.plan(
            session, assessments, sources, budget_bytes, policy, dirty, view_ids
        )
        plan = Plan(
            plan_id=f"p-{uuid.uuid4().hex[:12]}",
            session=session,
            created=time.time(),
            entries=[(e.path, e.first_line, e.last_line, e.sha256) for e in projection.entries],
            kept=_left_in_place(views, projection),
        )
        self._keep_plan(plan)
        return plan.plan_id, projection

    @_in_one_moment
    def project(
        self,
        session: str,
        budget_bytes: int = proj.DEFAULT_BUDGET_BYTES,
        policy: str = "stale",
        view_ids: list[str] | None = None,
    ) -> proto.ProjectResult:
        return wire.project_result(*self._project(session, budget_bytes, policy, view_ids))

    @_in_one_moment
    def project_encoded(
        self,
        session: str,
        budget_bytes: int = proj.DEFAULT_BUDGET_BYTES,
        policy: str = "stale",
        view_ids: list[str] | None = None,
    ) -> wire.Encoded:
        """``project`` as the JSON text the server sends (see ``wire.Encoded``)."""
        return wire.project_json(*self._project(session, budget_bytes, policy, view_ids))

    def _keep_plan(self, plan: Plan) -> None:
        """Keep every plan for 30 minutes, and the newest 16 of a session however old;
        pruning looks only at the plan's own session, so it costs the same at any load."""
        self.plans[plan.plan_id] = plan
        mine = self._plans_by_session.setdefault(plan.session, deque())
        mine.append(plan.plan_id)
        now = time.time()
        while len(mine) > PLANS_KEPT:
            oldest = self.plans.get(mine[0])
            if oldest is not None and now - oldest.created <= PLAN_TTL_S:
                break
            self.plans.pop(mine.popleft(), None)

    @_in_one_moment
    def commit(self, plan_id: str) -> proto.CommitResult:
        plan = self.plans.get(plan_id)
        if plan is None:
            raise UnknownId(
                f"planId: unknown or expired plan {plan_id!r}; call fresh/project again"
            )
        changed: set[str] = set()
        for path, first, last, sha in plan.entries:
            source, _ = self._current_or_none(path)
            now = "".join(source.lines[first - 1 : last]) if source is not None else None
            if now is None or sha256_text(now) != sha:
                changed.add(path)
        # A view left in place must still be fresh: its observed lines unchanged and where
        # they were. Range overlap decides, so an edit elsewhere in the file passes. A view
        # forgotten since the plan is no longer carried, so it cannot go stale in the request.
        views = self.views.get(plan.session, {})
        for view_id in plan.kept:
            view = views.get(view_id)
            if view is not None and self._assess(view).status != "fresh":
                changed.add(view.path)
        return proto.CommitResult(ok=not changed, changed=tuple(sorted(changed)))

    async def forget(self, session: str, view_ids: list[str] | None = None) -> proto.ForgetResult:
        views = self.views.get(session, {})
        ids = list(views) if view_ids is None else [v for v in view_ids if v in views]
        if not ids:
            return proto.ForgetResult(forgotten=0)
        await self.store.delete_views(session, ids)
        by_path: dict[str, list[str]] = {}
        for v in ids:
            by_path.setdefault(views[v].path, []).append(v)
        for v in ids:
            views.pop(v, None)
            self._assessed.pop((session, v), None)
            self._last_status.pop((session, v), None)
        if not views:
            self.views.pop(session, None)
        for path, gone in sorted(by_path.items()):
            self._emit(session, sorted(gone), path)
        return proto.ForgetResult(forgotten=len(ids))

    def view_text(self, session: str, view_id: str) -> proto.ViewTextResult:
        """What a view showed (an addition to the contract: editors diff it against the disk)."""
        view = self._session_views(session, [view_id])[0]
        return proto.ViewTextResult(
            view_id=view.view_id,
            path=view.path,
            kind=proto.ViewKind(view.kind),
            first_line=view.first_line,
            last_line=view.last_line,
            text=view.observed_text,
            sha256=view.observed_sha256,
        )

    @_in_one_moment
    def status(self) -> proto.StatusResult:
        sessions = []
        for session in sorted(self.views):
            views = self.views[session].values()
            stale = sum(1 for v in views if self._assess(v).status != "fresh")
            sessions.append(
                proto.SessionSummary(session=session, views=len(self.views[session]), stale=stale)
            )
        return proto.StatusResult(
            version=__version__,
            root=str(self.root),
            sessions=tuple(sessions),
            sources=len(self.sources),
            watching=self.watching,
            state_dir=str(self.state_dir),
            plans=len(self.plans),
        )

    # -- notifications in -----------------------------------------------------------------

    def did_write(self, session: str | None, path: str) -> None:
        rel = self.resolve(path)
        if session:
            self.claim(rel, f"session:{session}")
        self.sync([rel])

    def editor_update(self, conn: str, path: str, text: str) -> None:
        """An editor buffer changed (open or edit): parse it incrementally so the tree for
        the text it will save is ready, and remember it for ``editorDirty``."""
        try:
            rel = self.resolve(path)
        except OutsideRoot:
            return
        self._buffers[(conn, rel)] = text
        data = text.encode("utf-8")
        self.sources.index.definitions(rel, data, sha256_text(text))
        self.sync([rel])

    def editor_saved(self, conn: str, path: str) -> None:
        try:
            rel = self.resolve(path)
        except OutsideRoot:
            return
        self.claim(rel, "editor")
        self.sync([rel])

    def editor_closed(self, conn: str, path: str) -> None:
        try:
            rel = self.resolve(path)
        except OutsideRoot:
            return
        self._buffers.pop((conn, rel), None)
        self.sync([rel])

    def connection_closed(self, conn: str) -> None:
        for key in [k for k in self._buffers if k[0] == conn]:
            del self._buffers[key]

    @_in_one_moment
    def sync(self, rels: list[str]) -> None:
        """Re-check these files now and tell listeners about views whose status moved."""
        for rel in rels:
            self._current_or_none(rel)
            by_session: dict[str, list[str]] = {}
            for session, views in self.views.items():
                for view in views.values():
                    if view.path != rel:
                        continue
                    status = self._assess(view).status
                    key = (session, view.view_id)
                    if self._last_status.get(key) != status:
                        self._last_status[key] = status
                        by_session.setdefault(session, []).append(view.view_id)
            for session, ids in by_session.items():
                self._emit(session, sorted(ids), rel)

    def _emit(self, session: str, view_ids: list[str], path: str) -> None:
        """Tell every listener (each connection) that these views changed status."""
        payload = proto.DidInvalidateParams(session=session, view_ids=tuple(view_ids), path=path)
        for listener in list(self.listeners):
            try:
                listener(payload)
            except Exception:  # a dead connection must not stop the others hearing it
                continue


def _left_in_place(views: list[View], projection: proj.Projection) -> list[str]:
    """The views of a plan that got no marker: the request still carries their tool results."""
    marked = {m.view_id for m in projection.markers}
    return [v.view_id for v in views if v.view_id not in marked]
