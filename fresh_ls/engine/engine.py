"""The engine: one per root, shared by every connection.

It owns the current sources (checked against the disk once per request: see
``Engine._moment``), the views of every session (in memory, written through to the store
before an ``observe`` is acknowledged) and the editor buffers that only set ``editorDirty``.
It tells ``fresh_ls.engine.attribution`` what each read showed changed and who claimed a
write, keeps the plans ``fresh/commit`` checks in ``fresh_ls.engine.plans``, and answers
``fresh/checkEdit`` by gathering what a session knows of a file (its views, and its own
writes carried across: ``_learn_write``) for ``fresh_ls.core.guard`` to decide. The rules
themselves live in ``fresh_ls.core``; the engine only gathers their inputs and shapes their
outputs for the wire (``fresh_ls.engine.wire``). Time comes from the injected ``clock`` only.
"""

from __future__ import annotations

import contextlib
import functools
import json
import operator
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from fresh_ls import __version__, ids
from fresh_ls import protocol as proto
from fresh_ls.core import guard
from fresh_ls.core import projection as proj
from fresh_ls.core.anchors import anchor_view
from fresh_ls.core.ledger import Ledger
from fresh_ls.core.model import UnitAssessment, View, ViewAssessment
from fresh_ls.core.paths import PathOutsideRoot, resolve_in_roots
from fresh_ls.core.ranges import observed_lines, observed_range, observed_spans, split_given
from fresh_ls.core.sources import Source, SourceError, SourceTable
from fresh_ls.core.staleness import assess_view, diff_of
from fresh_ls.core.text import sha256_text, split_lines
from fresh_ls.engine import anchored, wire
from fresh_ls.engine.attribution import Attribution
from fresh_ls.engine.plans import Plans
from fresh_ls.engine.session import Session, StaleAnswer
from fresh_ls.engine.store import ViewStore
from fresh_ls.errors import FileUnreadable, InvalidParams, OutsideRoot, UnknownId
from fresh_ls.statedir import DATABASE_FILE

Notify = Callable[[proto.DidInvalidateParams], None]
Clock = Callable[[], float]
#: What one read of a file gave: its source, or why it cannot serve as one.
Found = tuple[Source | None, SourceError | None]
#: A change one read showed: the version read before it (None: none, or the file could
#: not be read) and the version now (None: missing or unreadable).
Seen = tuple[Source | None, Source | None]
#: How many files' last change (two versions each) is kept for a ``fresh/didWrite`` to claim.
LAST_CHANGES_KEPT = 64
#: ``_known_sha`` of a path never read (no hash equals it): its first read is no change.
_NEVER_READ = "never read"
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
class _Moment:
    """One request's view of the disk: when it began, and what each file read gave."""

    at: float
    found: dict[str, Found] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ProjectDefaults:
    """What a ``fresh/project`` that names no budget or policy gets: the connection's
    ``initializationOptions`` (``budgetBytes``, ``policy``), else the engine's own
    (``DEFAULT_BUDGET_BYTES``, ``stale``). ``leave_out``: keys of ``wire.LEAVABLE`` the
    client said it does not read (``freshLs.projectLeavesOut``)."""

    budget_bytes: int | None = None
    policy: proto.Policy | None = None
    leave_out: frozenset[str] = frozenset()


@dataclass
class Engine:
    root: Path
    state_dir: Path
    store: ViewStore
    #: The only source of time: change and claim times, plan ages, ``observed_at``.
    clock: Clock = time.time
    sources: SourceTable = field(init=False)
    attribution: Attribution = field(init=False)
    plans: Plans = field(init=False)
    #: Every session's state, by name (``fresh_ls.engine.session``).
    sessions: dict[str, Session] = field(default_factory=dict)
    watching: bool = False
    #: How many reports of changed files the watcher has made (``sync``)
    disk_events: int = 0
    listeners: list[Notify] = field(default_factory=list)
    #: Whole projections and per-file pieces by content hash (see ``proj.ProjectionCache``).
    projections: proj.ProjectionCache = field(default_factory=proj.ProjectionCache)
    #: ``--also`` folders (resolved): files there are views too, named by absolute path
    also: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        self.sources = SourceTable(self.root, also=self.also)
        self.attribution = Attribution()
        self.plans = Plans(self.clock)
        self._seq = 0
        self._buffers: dict[tuple[str, str], str] = {}
        #: The hash of each file's last read (None: it could not be read); a path absent
        #: here was never read, and its first read is no change.
        self._known_sha: dict[str, str | None] = {}
        self._now: _Moment | None = None
        #: The last change seen of the most recently changed files (before, after): what a
        #: ``fresh/didWrite`` that claims it carries a session's knowledge across
        #: (``_learn_write``). Claims come within seconds, so only the newest are kept.
        self._last_change: dict[str, Seen] = {}

    @property
    def views(self) -> dict[str, dict[str, View]]:
        """Every session's views by id (a fresh map of the sessions' own: read it only)."""
        return {name: s.views for name, s in self.sessions.items() if s.views}

    def _session(self, name: str) -> Session:
        """The session ``name``, made when it has none yet (only a write makes one)."""
        found = self.sessions.get(name)
        if found is None:
            found = self.sessions[name] = Session(name)
        return found

    # -- lifecycle ------------------------------------------------------------------------

    @classmethod
    async def open(
        cls, root: Path, state_dir: Path, clock: Clock = time.time, also: tuple[Path, ...] = ()
    ) -> Engine:
        store = await ViewStore.open(state_dir / DATABASE_FILE)
        engine = cls(root=root, state_dir=state_dir, store=store, clock=clock, also=also)
        for view in await store.load_views():
            engine._session(view.session).put_view(view)
            engine._seq = max(engine._seq, view.seq)
        for session, body in (await store.load_ledgers()).items():
            engine._session(session).ledger = Ledger.from_json(body)
        for (session, path), written in (await store.load_written()).items():
            engine._session(session).written[path] = written
            engine._seq = max([engine._seq, *(v.seq for v in written)])
        for s in engine.sessions.values():
            for view in s.views.values():
                s.last_status[view.view_id] = engine._assess(view).status
        return engine

    async def close(self) -> None:
        await self.store.close()

    # -- sources --------------------------------------------------------------------------

    def resolve(self, path: str, field_name: str = "path") -> str:
        try:
            rel, _ = resolve_in_roots(self.root, self.also, path)
        except PathOutsideRoot as exc:
            raise OutsideRoot(f"{field_name}: {exc}") from None
        return rel

    def current(self, rel: str) -> Source:
        """The file as the disk holds it at this moment, or SourceError."""
        source, error = self._read(rel)
        if source is None:
            assert error is not None
            raise error
        return source

    def _current_or_none(self, rel: str) -> tuple[Source | None, str | None]:
        source, error = self._read(rel)
        return source, error.reason if error is not None else None

    @contextlib.contextmanager
    def _moment(self) -> Iterator[_Moment]:
        """Within one request every file is checked against the disk once, not once per
        view of it: 500 views of 100 files cost 100 stats, and one answer sees one disk.

        A file that changes after the request read it is seen (and its change told to
        attribution) by the next request, however often this one looks at it again. A
        request that awaits (``observe`` awaits the store) is two moments, one on each side.
        Moments nest: an inner one is the outer one."""
        if self._now is not None:
            yield self._now
            return
        self._now = _Moment(at=self.clock())
        try:
            with self.sources.batch():
                yield self._now
        finally:
            self._now = None

    def _read(self, rel: str) -> Found:
        """What the disk holds for ``rel`` at this moment; the first read of the moment
        tells attribution the change it showed, if any."""
        now = self._now
        if now is not None:  # read already this moment: no change to tell (``_read_once``)
            found = now.found.get(rel)
            if found is not None:
                return found
        with self._moment() as moment:
            found, seen = self._read_once(moment, rel)
            if seen is not None:
                self._keep_change(rel, seen)
                self.attribution.saw_change(rel, *seen, moment.at, self._seq)
            return found

    def _read_unchanged(self, rels: list[str]) -> None:
        """This moment's reads of those of ``rels`` whose stat shows them unchanged since
        their last read, in one loop (``SourceTable.unchanged``): what ``_read`` would
        find for each, without its layers per file; a request over 100 files spent most of
        its time there. The others are left for ``_read``. An unchanged file's read tells
        attribution nothing, as in ``_read_once``."""
        now = self._now
        assert now is not None
        todo = [rel for rel in rels if rel not in now.found]
        for rel, source in self.sources.unchanged(todo).items():
            if self._known_sha.get(rel, _NEVER_READ) == source.sha256:
                now.found[rel] = (source, None)

    def _read_once(self, moment: _Moment, rel: str) -> tuple[Found, Seen | None]:
        """The moment's read of ``rel`` (the disk is read on the first call only) and the
        change that first read showed against the read before it (None: no change, or not
        the first call). Nothing is told to anyone: the caller does that."""
        found = moment.found.get(rel)
        if found is not None:
            return found, None
        before = self.sources.peek(rel)
        known = self._known_sha.get(rel, _NEVER_READ)
        try:
            after = self.sources.get(rel)
        except SourceError as exc:
            self._known_sha[rel] = None
            moment.found[rel] = (None, exc)
            gone = known is not None and known is not _NEVER_READ
            return moment.found[rel], ((None, None) if gone else None)
        self._known_sha[rel] = after.sha256
        moment.found[rel] = (after, None)
        changed = known is not _NEVER_READ and known != after.sha256
        return moment.found[rel], ((before, after) if changed else None)

    def _keep_change(self, rel: str, seen: Seen) -> None:
        self._last_change.pop(rel, None)
        self._last_change[rel] = seen
        while len(self._last_change) > LAST_CHANGES_KEPT:
            del self._last_change[next(iter(self._last_change))]

    def claim(self, rel: str, who: str) -> None:
        """``who`` wrote ``rel``: the change this read shows is theirs; when it shows none,
        attribution decides between the last change (the watcher saw the write first) and
        the next one (see ``Attribution.claim``)."""
        with self._moment() as moment:
            _, seen = self._read_once(moment, rel)
            if seen is not None:
                self._keep_change(rel, seen)
                self.attribution.saw_change(rel, *seen, moment.at, self._seq, by=who)
            else:
                self.attribution.claim(rel, who, moment.at)

    # -- assessment -----------------------------------------------------------------------

    def _assess(self, view: View) -> ViewAssessment:
        source, error = self._read(view.path)
        reason = error.reason if error is not None else None
        sha = source.sha256 if source is not None else f"!{reason}"
        assessed = self._session(view.session).assessed
        cached = assessed.get(view.view_id)
        if cached is not None and cached[0] == sha and cached[1] == view.seq:
            return cached[2]
        assessment = assess_view(view, source, reason)
        assessed[view.view_id] = (sha, view.seq, assessment)
        return assessment

    def _assess_all(
        self, session: str, views: list[View], content_of: dict[str, str]
    ) -> list[ViewAssessment]:
        """``_assess`` of each of ``session``'s ``views`` whose files this moment read as
        ``content_of`` (``_content_key``): a kept assessment is taken in one loop, without
        ``_assess``'s layers per view (after an edit of one file, the views of the other
        100 are all kept ones); the rest go through ``_assess``."""
        found = self.sessions.get(session)  # none: no views either (never made on a read)
        kept = found.assessed if found is not None else {}
        out = []
        for v in views:
            cached = kept.get(v.view_id)
            if cached is not None and cached[1] == v.seq and cached[0] == content_of[v.path]:
                out.append(cached[2])
            else:
                out.append(self._assess(v))
        return out

    def _renew(self, view: View) -> None:
        """Put ``view`` in place of the view of the same id (a tool result patched in place
        shows other lines now: ``fresh_ls.engine.anchored``); the caller stores it."""
        s = self._session(view.session)
        s.put_view(view)
        s.last_status[view.view_id] = self._assess(view).status
        self._emit(view.session, [view.view_id], view.path)

    def view_paths(self, session: str | None = None) -> list[str]:
        """The files ``session``'s views name (None: every session's), each once."""
        if session is not None:
            found = self.sessions.get(session)
            return list(found.paths()) if found is not None else []
        return list(dict.fromkeys(p for s in self.sessions.values() for p in s.paths()))

    def _session_views(self, session: str, view_ids: list[str] | None) -> list[View]:
        found = self.sessions.get(session)
        views = found.views if found is not None else {}
        if view_ids is None:
            return list(found.in_order()) if found is not None else []
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
        return self.attribution.changed_by(session, view, ua)

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
        ranges: tuple[tuple[int, int], ...] | None = None
        if p.ranges is not None:
            spans = observed_spans([(r.first_line, r.last_line) for r in p.ranges], n)
            chunks = split_given(spans, given) if given is not None else [None] * len(spans)
            observed, units = [], []
            for (a, b), chunk in zip(spans, chunks, strict=True):
                lines = observed_lines(source, a, b, chunk)
                observed += lines
                units += anchor_view(rel, source, a, b, lines, False)
            first, last = spans[0][0], spans[-1][1]
            ranges = tuple(spans)
        else:
            first, last, whole = observed_range(p.first_line, p.last_line, n, given)
            observed = observed_lines(source, first, last, given)
            units = anchor_view(rel, source, first, last, observed, whole)
        self._seq += 1
        view = View(
            session=session,
            view_id=p.view_id or ids.view_id(),
            path=rel,
            first_line=first,
            last_line=last,
            kind="editResult" if p.kind == proto.ViewKind.EDIT_RESULT else "read",
            seq=self._seq,
            observed_text="".join(observed),
            observed_sha256=sha256_text("".join(observed)),
            units=units,
            observed_at=self.clock(),
            result=p.result,
            ranges=ranges,
        )
        return wire.observe_result(view, await self._register(view))

    async def _register(self, view: View) -> ViewAssessment:
        """Store a new view durably, then hold it; listeners hear of it."""
        await self.store.put_view(view)
        s = self._session(view.session)
        s.put_view(view)
        assessment = self._assess(view)
        s.last_status[view.view_id] = assessment.status
        # Editors list views: a new (or replaced) one is news for their panels too.
        self._emit(view.session, [view.view_id], view.path)
        return assessment

    @_in_one_moment
    def stale(self, p: proto.StaleParams) -> proto.StaleResult:
        return proto.StaleResult(views=tuple(k.view for k in self._stale_answers(p)))

    @_in_one_moment
    def stale_json(self, p: proto.StaleParams) -> wire.Encoded:
        """``stale``'s answer as the JSON text the server sends (``json.dumps`` of its
        unstructured form): each view's entry encoded once and kept with it."""
        return wire.stale_json([k.encoded() for k in self._stale_answers(p)])

    def _stale_answers(self, p: proto.StaleParams) -> list[StaleAnswer]:
        """Each view's ``fresh/stale`` entry, made again only when its assessment, its
        file's dirtiness or who changed one of its units moved (``StaleAnswer``): after an
        edit of one file the views of the other files keep theirs. Building every unit's
        typed entry (2,300 units for 520 views) was most of the answer's time."""
        views = self._session_views(p.session, p.view_ids)
        kept = self.sessions[p.session].stale if views else {}
        out = []
        for view in views:
            a = self._assess(view)
            dirty = self.editor_dirty(view.path)
            who = self.attribution.changed_by_each(p.session, view, a.units)
            answer = kept.get(view.view_id)
            if answer is None or not answer.holds(a, dirty, who):
                source, _ = self._current_or_none(view.path)
                diffs = [diff_of(view.path, ua, source) for ua in a.units]
                answer = StaleAnswer(a, dirty, who, wire.stale_view(a, dirty, list(who), diffs))
                kept[view.view_id] = answer
            out.append(answer)
        return out

    @_in_one_moment
    def statuses(self, p: proto.StaleParams) -> wire.Encoded:
        """``fresh/statuses``: what ``stale`` says of each view's status, without building
        its units' wire form or any diff (the assessments are the cached ones), as the
        JSON of its ``StatusesResult`` (``wire.statuses_json``). The proxy asks it before
        every model request: its files' unchanged stats are taken in one loop first
        (``_read_unchanged``), and no protocol object is built per view."""
        views = self._session_views(p.session, p.view_ids)
        paths = list(dict.fromkeys(v.path for v in views))
        self._read_unchanged(paths)
        content_of = {path: _content_key(self._read(path)) for path in paths}
        assessed = self._assess_all(p.session, views, content_of)
        return wire.statuses_json([(a.view.view_id, a.status) for a in assessed])

    async def project(
        self, p: proto.ProjectParams, defaults: ProjectDefaults = ProjectDefaults()
    ) -> wire.Encoded:
        """``fresh/project``, as the JSON text the server sends (``wire.Encoded``).

        The engine decides what the params leave open: the budget and policy (the params',
        else ``defaults``, the connection's, else the engine's own) and the placement
        (``end`` unless ``anchored`` is asked). ``placement: anchored``
        (``fresh_ls.engine.anchored``) answers only once the ledger it changed, and the
        views it patched in place, are on disk, so a restarted server builds the same
        bytes."""
        budget = p.budget_bytes if p.budget_bytes is not None else defaults.budget_bytes
        if budget is None:
            budget = proj.DEFAULT_BUDGET_BYTES
        policy = p.policy or defaults.policy or proto.Policy.STALE
        if p.placement != proto.Placement.ANCHORED:
            with self._moment():
                projection, views = self._project_end(p, budget, policy)
                plan_id = self._keep_plan(p.session, *_kept_for_commit(views, projection))
            return wire.project_json(plan_id, projection, defaults.leave_out)
        with self._moment():
            views = self._session_views(p.session, p.view_ids)
            s = self._session(p.session)
            if s.ledger is None:
                s.ledger = Ledger()
            result, patched = anchored.project(
                _Ground(self),
                p.session,
                s.ledger,
                views,
                p.results or [],
                budget,
                policy,
                p.bytes_after,
            )
        for view in patched:
            await self.store.put_view(view)
        await self.store.put_ledger(p.session, s.ledger.to_json())
        return wire.Encoded(json.dumps(proto.unstructure(result)))

    def _project_end(
        self, p: proto.ProjectParams, budget: int, policy: str
    ) -> tuple[proj.Projection, list[View]]:
        """The end placement's projection of this moment and the views it planned. Every
        file of the session's views is read (checked against the disk) first; when the
        views, what those files read as and the dirty buffers are what the kept projection
        was planned from, it is that one (``ProjectionCache.recall``) and no view is
        assessed again. Otherwise the views are assessed and planned."""
        views = self._session_views(p.session, p.view_ids)
        found = self.sessions.get(p.session)
        paths = (  # the session's own list is kept until a view comes or goes
            list(found.paths())
            if p.view_ids is None and found is not None
            else list(dict.fromkeys(v.path for v in views))
        )
        self._read_unchanged(paths)
        contents = tuple(_content_key(self._read(path)) for path in paths)
        dirty = (
            frozenset(  # as ``_plan`` finds them: among the files that could be read
                path
                for path, content in zip(paths, contents, strict=True)
                if not content.startswith("!") and self.editor_dirty(path)
            )
            if self._buffers
            else frozenset()
        )
        kept = self.projections.recall(
            p.session, views, contents, budget, policy, dirty, p.view_ids
        )
        if kept is not None:
            return kept, views
        assessed = self._assess_all(p.session, views, dict(zip(paths, contents, strict=True)))
        return self._plan(p.session, assessed, budget, policy, p.view_ids, contents=contents), views

    def _plan(
        self,
        session: str,
        assessed: list[ViewAssessment],
        budget_bytes: int,
        policy: str,
        view_ids: list[str] | None,
        own_lines: bool = False,
        contents: tuple[str, ...] | None = None,
    ) -> proj.Projection:
        """The one pipeline of both placements: the files of the assessed views as the disk
        holds them now, which of them an editor holds dirty, then the projection (cached:
        ``proj.ProjectionCache``)."""
        sources: dict[str, Source] = {}
        for a in assessed:
            if a.view.path not in sources:
                src, _ = self._current_or_none(a.view.path)
                if src is not None:
                    sources[a.view.path] = src
        dirty = (  # no editor holds a buffer: no walk of the files to find none
            frozenset(p for p in sources if self.editor_dirty(p)) if self._buffers else frozenset()
        )
        return self.projections.plan(
            session, assessed, sources, budget_bytes, policy, dirty, view_ids, own_lines, contents
        )

    def _keep_plan(
        self, session: str, entries: list[tuple[str, int, int, str]], kept: list[str]
    ) -> str:
        """Keep a plan for ``fresh/commit`` (``fresh_ls.engine.plans``); its id."""
        return self.plans.keep(session, entries=entries, kept=kept).plan_id

    @_in_one_moment
    def commit(self, p: proto.CommitParams) -> proto.CommitResult:
        plan = self.plans.get(p.plan_id)  # UnknownId when unknown or expired
        changed: set[str] = set()
        for path, first, last, sha in plan.entries:
            source, _ = self._current_or_none(path)
            now = "".join(source.lines[first - 1 : last]) if source is not None else None
            if now is None or sha256_text(now) != sha:
                changed.add(path)
        # A view left in place must still be fresh: its observed lines unchanged and where
        # they were. Range overlap decides, so an edit elsewhere in the file passes. A view
        # forgotten since the plan is no longer carried, so it cannot go stale in the request.
        s = self.sessions.get(plan.session)
        views = s.views if s is not None else {}
        for view_id in plan.kept:
            view = views.get(view_id)
            if view is not None and self._assess(view).status != "fresh":
                changed.add(view.path)
        return proto.CommitResult(ok=not changed, changed=tuple(sorted(changed)))

    async def forget(self, p: proto.ForgetParams) -> proto.ForgetResult:
        """Drop views; without ``viewIds`` the whole session, in memory by one ``pop`` of
        its ``Session`` and on disk by one transaction (``ViewStore.delete_session``). Its
        plans stay, for their time (``fresh_ls.engine.session`` says why)."""
        if p.view_ids is None:
            gone = self.sessions.pop(p.session, None)
            self.projections.drop(p.session)
            await self.store.delete_session(p.session, list(gone.views) if gone else [])
            if gone is None:
                return proto.ForgetResult(forgotten=0)
            self._emit_gone(p.session, list(gone.views.values()))
            return proto.ForgetResult(forgotten=len(gone.views))
        s = self.sessions.get(p.session)
        if s is None:
            return proto.ForgetResult(forgotten=0)
        ids = [v for v in p.view_ids if v in s.views]
        if not ids:
            return proto.ForgetResult(forgotten=0)
        await self.store.delete_views(p.session, ids)
        if s.ledger is not None:
            s.ledger.forget(ids)
            await self.store.put_ledger(p.session, s.ledger.to_json())
        views = [s.views[v] for v in ids]
        s.drop_views(ids)
        if s.holds_nothing():
            self.sessions.pop(p.session, None)
        self._emit_gone(p.session, views)
        return proto.ForgetResult(forgotten=len(ids))

    def _emit_gone(self, session: str, views: list[View]) -> None:
        by_path: dict[str, list[str]] = {}
        for v in views:
            by_path.setdefault(v.path, []).append(v.view_id)
        for path, gone in sorted(by_path.items()):
            self._emit(session, sorted(gone), path)

    def view_text(self, p: proto.ViewTextParams) -> proto.ViewTextResult:
        """What a view showed (an addition to the contract: editors diff it against the disk)."""
        view = self._session_views(p.session, [p.view_id])[0]
        return proto.ViewTextResult(
            view_id=view.view_id,
            path=view.path,
            kind=proto.ViewKind(view.kind),
            first_line=view.first_line,
            last_line=view.last_line,
            text=view.observed_text,
            sha256=view.observed_sha256,
            ranges=wire.ranges_of(view),
        )

    @_in_one_moment
    def status(self, p: proto.StatusParams | None = None) -> proto.StatusResult:
        """``fresh/status`` (its params are empty; taken so every request is called alike)."""
        sessions = []
        for name, views in sorted(self.views.items()):
            stale = sum(1 for v in views.values() if self._assess(v).status != "fresh")
            sessions.append(proto.SessionSummary(session=name, views=len(views), stale=stale))
        return proto.StatusResult(
            version=__version__,
            root=str(self.root),
            sessions=tuple(sessions),
            sources=len(self.sources),
            watching=self.watching,
            state_dir=str(self.state_dir),
            plans=len(self.plans),
        )

    # -- guards (v1.2) ---------------------------------------------------------------------

    async def check_edit(self, p: proto.CheckEditParams) -> proto.CheckEditResult:
        """Is the code this edit changes the code the session last saw? (``core.guard``)
        A deny for ``changed`` or ``unseen`` shows the current code and records it as a
        view of the session, so a retry after reading the answer is allowed."""
        forms = [p.old_text is not None, p.first_line is not None or p.last_line is not None]
        forms.append(bool(p.whole_file))
        if sum(forms) != 1:
            raise InvalidParams(
                "give exactly one of oldText, firstLine/lastLine or wholeFile: the region "
                "the edit changes"
            )
        if p.old_text == "":
            raise InvalidParams("oldText: must not be empty (use wholeFile for an overwrite)")
        rel = self.resolve(p.path)
        with self._moment():
            result, view = self._check_edit(p, rel)
        if view is not None:
            await self._register(view)
        return result

    def _check_edit(
        self, p: proto.CheckEditParams, rel: str
    ) -> tuple[proto.CheckEditResult, View | None]:
        source, error = self._read(rel)
        if source is None:
            assert error is not None
            if p.whole_file and error.reason == "missing":
                return _verdict(proto.CheckEditReason.KNOWN), None  # a creation
            raise FileUnreadable(f"path: {error.message}")
        n = source.line_count
        if p.old_text is not None:
            where = guard.locate_text(source.text, p.old_text)
            if isinstance(where, str):
                return _verdict(proto.CheckEditReason(where)), None
            first, last = where
            whole = first == 1 and last == n
        elif p.whole_file:
            first, last, whole = 1, n, True
        else:
            first, last, whole = observed_range(p.first_line, p.last_line, n, None)
        if n == 0:
            return _verdict(proto.CheckEditReason.KNOWN), None  # nothing there to lose
        lines = source.lines[first - 1 : last]
        units = anchor_view(rel, source, first, last, lines, whole)
        assessed = [self._assess_any(v, source) for v in self._guard_views(p.session, rel)]
        verdicts = guard.decide(units, guard.learn(assessed, source))
        reason = proto.CheckEditReason(guard.reason_of(verdicts))
        out = []
        for v in verdicts:
            status, by, diff = proto.Status.FRESH, None, None
            if v.evidence is not None:
                ev = v.evidence
                worse = ev.ua.status if ev.ua.status not in ("fresh", "moved") else "changed"
                status = proto.Status(worse)
                by = self.changed_by(p.session, ev.view, ev.ua)
                diff = guard.evidence_diff(rel, ev, source, v.first, v.last)
            out.append(
                proto.CheckEditUnit(
                    kind=proto.UnitKind(v.unit.kind),
                    name=v.unit.name,
                    symbol_kind=v.unit.symbol_kind,
                    first_line=v.first,
                    last_line=v.last,
                    status=status,
                    changed_by=by,
                    diff=diff,
                    known=v.state == "known",
                )
            )
        if reason == proto.CheckEditReason.KNOWN:
            return _verdict(reason, tuple(out)), None
        view_id = ids.mint("checkEdit")
        text, lo, hi = guard.framed_text(rel, verdicts, source, view_id)
        shown = source.lines[lo - 1 : hi]
        self._seq += 1
        view = View(
            session=p.session,
            view_id=view_id,
            path=rel,
            first_line=lo,
            last_line=hi,
            kind="read",
            seq=self._seq,
            observed_text="".join(shown),
            observed_sha256=sha256_text("".join(shown)),
            units=anchor_view(rel, source, lo, hi, list(shown), lo == 1 and hi == n),
            observed_at=self.clock(),
        )
        result = _verdict(reason, tuple(out), text, view_id)
        return result, view

    def _assess_any(self, view: View, source: Source) -> ViewAssessment:
        """A held view through the cache; a view of the session's own writes directly."""
        s = self.sessions.get(view.session)
        held = s.views.get(view.view_id) if s is not None else None
        return self._assess(view) if held is view else assess_view(view, source)

    @_in_one_moment
    def gate(self, p: proto.GateParams) -> proto.GateResult:
        """Do the views a decision rests on still hold? ``fresh`` and ``moved`` do."""
        session = p.session
        stale = []
        for view in self._session_views(session, p.view_ids):
            a = self._assess(view)
            if a.status in ("fresh", "moved"):
                continue
            worst_units = [ua for ua in a.units if ua.status not in ("fresh", "moved")]
            by = self.changed_by(session, view, worst_units[0]) if worst_units else None
            stale.append(
                proto.GateStaleView(
                    view_id=view.view_id,
                    path=view.path,
                    status=proto.Status(a.status),
                    changed_by=by,
                )
            )
        return proto.GateResult(proceed=not stale, stale=tuple(stale))

    # -- notifications in -----------------------------------------------------------------

    async def record_write(
        self, session: str | None, path: str, wrote: tuple[int, int] | None = None
    ) -> None:
        """``fresh/didWrite`` as the server takes it: ``did_write``, then what the session
        now knows from its own write is committed to disk, so ``fresh/checkEdit`` still
        counts it as seen after a restart (instead of refusing the agent's next edit of
        the lines it just wrote)."""
        rel = self.resolve(path)
        before = self._written(session, rel)
        self.did_write(session, path, wrote)
        after = self._written(session, rel)
        if session and after is not None and after is not before:
            await self.store.put_written(session, rel, after)

    def _written(self, session: str | None, rel: str) -> list[View] | None:
        s = self.sessions.get(session) if session else None
        return s.written.get(rel) if s is not None else None

    @_in_one_moment
    def did_write(
        self, session: str | None, path: str, wrote: tuple[int, int] | None = None
    ) -> None:
        """``wrote``: the lines the writer says it wrote (first, last), when it says so."""
        rel = self.resolve(path)
        if session:
            first_read = rel not in self._known_sha
            self.claim(rel, f"session:{session}")
            self._learn_write(session, rel, first_read, wrote)
        self.sync([rel])

    def _learn_write(
        self,
        session: str,
        rel: str,
        first_read: bool = False,
        wrote: tuple[int, int] | None = None,
    ) -> None:
        """The change just claimed by ``session`` is its own: what it knew of the file
        before stays known where the write left it, and every line it wrote is known
        (``guard.carry_over``), kept as views of its own for ``fresh/checkEdit``. A file
        this server had never read (a creation, mostly) is the writer's whole: nobody
        holds a view of it. But when the session knew the file before this server first
        read it (its views or writes, kept across a restart), the write is no creation: what
        it wrote cannot be told apart from what changed while no server watched, so it keeps
        only what still holds of what it knew (a deny it can retry after a read, never an
        edit of code it never saw). When the writer said which lines it wrote (``wrote``),
        changed lines outside them are not its own: a change nobody reported that the server
        had not read yet is not credited to the next writer."""
        before: Source | None
        if first_read:
            after, _ = self._current_or_none(rel)
            if after is None:
                return
            before = after if self._guard_views(session, rel) else None
        else:
            changes = self.attribution.changes(rel)
            seen = self._last_change.get(rel)
            if not changes or seen is None:
                return
            before, after = seen
            if after is None or changes[-1].who != f"session:{session}":
                return
            if changes[-1].sha_after != after.sha256:
                return
            del self._last_change[rel]
        known: set[int] = set()
        if before is not None:
            views = self._guard_views(session, rel)
            known = guard.learn([assess_view(v, before) for v in views], before).known
        written = []
        for first, last in guard.runs(guard.carry_over(known, before, after, wrote)):
            self._seq += 1
            lines = after.lines[first - 1 : last]
            whole = first == 1 and last == after.line_count
            text = "".join(lines)
            written.append(
                View(
                    session=session,
                    view_id=f"write-{self._seq}",
                    path=rel,
                    first_line=first,
                    last_line=last,
                    kind="read",
                    seq=self._seq,
                    observed_text=text,
                    observed_sha256=sha256_text(text),
                    units=anchor_view(rel, after, first, last, list(lines), whole),
                    observed_at=self.clock(),
                )
            )
        self._session(session).written[rel] = written

    def _guard_views(self, session: str, rel: str) -> list[View]:
        """The session's views of ``rel`` and what it wrote there, oldest first."""
        s = self.sessions.get(session)
        return s.guard_views(rel) if s is not None else []

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

    @_in_one_moment
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
        """Re-check these files now and tell listeners about views whose status moved (the
        watcher's report; ``disk_events`` counts them)."""
        self.disk_events += 1
        for rel in rels:
            self._current_or_none(rel)
            by_session: dict[str, list[str]] = {}
            for session, s in self.sessions.items():
                for view in s.views.values():
                    if view.path != rel:
                        continue
                    status = self._assess(view).status
                    if s.last_status.get(view.view_id) != status:
                        s.last_status[view.view_id] = status
                        by_session.setdefault(session, []).append(view.view_id)
            for session, view_ids in by_session.items():
                self._emit(session, sorted(view_ids), rel)

    def _emit(self, session: str, view_ids: list[str], path: str) -> None:
        """Tell every listener (each connection) that these views changed status."""
        payload = proto.DidInvalidateParams(session=session, view_ids=tuple(view_ids), path=path)
        for listener in list(self.listeners):
            try:
                listener(payload)
            except Exception:  # a dead connection must not stop the others hearing it
                continue


def _verdict(
    reason: proto.CheckEditReason,
    units: tuple[proto.CheckEditUnit, ...] = (),
    text: str = "",
    view_id: str | None = None,
) -> proto.CheckEditResult:
    allow = reason == proto.CheckEditReason.KNOWN
    return proto.CheckEditResult(
        verdict=proto.Verdict.ALLOW if allow else proto.Verdict.DENY,
        reason=reason,
        units=units,
        text=text,
        view_id=view_id,
        retryable=reason in (proto.CheckEditReason.CHANGED, proto.CheckEditReason.UNSEEN),
    )


def _content_key(found: Found) -> str:
    """What a read gave, as a key: the content's SHA-256, or ``!reason`` when unreadable."""
    source, error = found
    if source is not None:
        return source.sha256
    assert error is not None
    return f"!{error.reason}"


def _left_in_place(views: list[View], projection: proj.Projection) -> list[str]:
    """The views of a plan that got no marker: the request still carries their tool results."""
    marked = {m.view_id for m in projection.markers}
    return [v.view_id for v in views if v.view_id not in marked]


def _kept_for_commit(
    views: list[View], projection: proj.Projection
) -> tuple[list[tuple[str, int, int, str]], list[str]]:
    """What ``fresh/commit`` re-checks of this answer: each entry's path, lines and
    SHA-256, and the views left in place. A kept projection answered again for the very
    same views (by identity: ``ProjectionCache.recall``) gives the same, made once."""
    kept = projection.kept_for_commit
    if kept is not None and len(kept[0]) == len(views) and all(map(operator.is_, kept[0], views)):
        return kept[1], kept[2]
    rows = [(e.path, e.first_line, e.last_line, e.sha256) for e in projection.entries]
    left = _left_in_place(views, projection)
    projection.kept_for_commit = (list(views), rows, left)
    return rows, left


@dataclass(slots=True)
class _Ground:
    """The engine as anchored placement sees it (``anchored.Ground``): the disk of this
    moment, assessments, renewing a patched view, and the one projection pipeline."""

    engine: Engine

    def source(self, path: str) -> Source | None:
        return self.engine._current_or_none(path)[0]

    def assess(self, view: View) -> ViewAssessment:
        return self.engine._assess(view)

    def renew(self, view: View) -> None:
        self.engine._renew(view)

    def editor_dirty(self, path: str) -> bool:
        return self.engine.editor_dirty(path)

    def plan(
        self,
        session: str,
        assessed: list[ViewAssessment],
        budget_bytes: int,
        view_ids: list[str],
    ) -> proj.Projection:
        return self.engine._plan(session, assessed, budget_bytes, "all", view_ids, own_lines=True)

    def keep_plan(
        self, session: str, entries: list[tuple[str, int, int, str]], kept: list[str]
    ) -> str:
        return self.engine._keep_plan(session, entries, kept)
