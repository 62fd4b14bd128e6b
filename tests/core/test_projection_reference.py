"""The fast planner against the straightforward rule it replaced.

``reference_plan`` below is the planner as it was before it was made near-linear: it scans
every selected entry of a file for containment and every final entry for each label, and
re-renders an entry to learn its size. It is kept here, verbatim, as the statement of the
rule; ``fresh_ls.core.projection.plan`` must give the same projection, field for field and
byte for byte, on any input: random synthetic assessments (overlapping ranges, shared unit
ids, equal ranges, non-ASCII view ids and text, tight budgets) and real views of generated
modules after random edits.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fresh_ls.core.anchors import anchor_view, unit_id
from fresh_ls.core.model import LineRange, ObservedUnit, UnitAssessment, View, ViewAssessment
from fresh_ls.core.projection import (
    DEFAULT_BUDGET_BYTES,
    Entry,
    Marker,
    Omission,
    Projection,
    SourceSlices,
    marker_text,
    plan,
)
from fresh_ls.core.sources import Source
from fresh_ls.core.staleness import assess_view
from fresh_ls.core.text import utf8_len

# ------------------------------------------------------------------ the reference rule


def _old_header(e: Entry) -> str:
    lines = e.last_line - e.first_line + 1
    what = {
        "file": "whole file",
        "text": "text outside definitions",
    }.get(e.kind, f"{e.symbol_kind or 'symbol'} {e.name}")
    line_word = "line" if lines == 1 else "lines"
    return (
        f"[{e.label}] {e.path} lines {e.first_line}-{e.last_line} "
        f"({lines} {line_word}, {utf8_len(e.text)} bytes) · {what} · for {', '.join(e.view_ids)}"
    )


def _old_rendered(e: Entry) -> str:
    tail = "" if e.text.endswith("\n") else "\n"
    return f"{_old_header(e)}\n{e.text}{tail}"


def _old_cost(e: Entry) -> int:
    return utf8_len(_old_rendered(e))


def _old_render(entries: list[Entry]) -> str:
    ordered = sorted(entries, key=lambda e: (e.path, e.first_line, e.last_line))
    return "".join(_old_rendered(e) for e in ordered)


@dataclass(slots=True)
class _Candidate:
    entry: Entry
    name: str | None
    fallbacks: list[Entry] = field(default_factory=list)


def reference_pieces(source: Source, status: str) -> list[Entry]:
    """A file cut into its top-level definitions and the text between them: what a
    whole-file view falls back to when the whole file does not fit."""
    if source.definitions is None:
        return []
    pieces: list[Entry] = []
    line = 1
    n = source.line_count
    tops = [d for d in source.definitions if d.parent is None]
    for d in [*tops, None]:
        stop = (d.first_line - 1) if d is not None else n
        if stop >= line:
            text = "".join(source.lines[line - 1 : stop])
            if text.strip():
                uid = unit_id(
                    source.path, "text", line, hashlib.sha256(text.encode()).hexdigest()[:16]
                )
                pieces.append(Entry(uid, source.path, line, stop, "text", text, status))
        if d is None:
            break
        text = "".join(source.lines[d.first_line - 1 : d.last_line])
        uid = unit_id(source.path, "symbol", d.name, d.symbol_kind, d.ordinal)
        pieces.append(
            Entry(
                uid,
                source.path,
                d.first_line,
                d.last_line,
                "symbol",
                text,
                status,
                d.name,
                d.symbol_kind,
            )
        )
        line = d.last_line + 1
    return pieces


class _Selection:
    """Entries chosen so far, with their rendered size kept exact as they merge.

    Entries are kept per path: containment only ever involves entries of the same file, so
    a whole file falling back to its many top-level pieces stays linear, not quadratic.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.by_path: dict[str, list[Entry]] = {}
        self.costs: dict[int, int] = {}
        self.used = 0

    @property
    def entries(self) -> list[Entry]:
        return [e for entries in self.by_path.values() for e in entries]

    def _total_with(self, remove: list[Entry], add: list[Entry]) -> int:
        """The rendered size after swapping ``remove`` for ``add``, without re-rendering
        the unchanged entries (their sizes are cached in ``self.costs``)."""
        total = self.used - sum(self.costs[id(e)] for e in remove)
        return total + sum(_old_cost(e) for e in add)

    def _swap(self, path: str, remove: list[Entry], add: Entry, total: int) -> None:
        for e in remove:
            self.costs.pop(id(e), None)
        gone = {id(e) for e in remove}
        same_file = self.by_path.setdefault(path, [])
        same_file[:] = [e for e in same_file if id(e) not in gone]
        same_file.append(add)
        self.costs[id(add)] = _old_cost(add)
        self.used = total

    def serving(self, entry: Entry) -> Entry | None:
        for e in self.by_path.get(entry.path, ()):
            if e.contains(entry):
                return e
        return None

    def try_add(self, entry: Entry, view_id: str) -> Entry | None:
        """Select ``entry`` for ``view_id`` (or let a containing entry serve it); returns
        the entry that serves it, or None when that would exceed the budget."""
        host = self.serving(entry)
        if host is not None:
            if view_id in host.view_ids:
                return host
            grown = replace(host, view_ids=sorted({*host.view_ids, view_id}))
            total = self._total_with([host], [grown])
            if total > self.budget:
                return None
            self._swap(entry.path, [host], grown, total)
            return grown
        inner = [e for e in self.by_path.get(entry.path, ()) if entry.contains(e)]
        ids = {view_id, *(v for e in inner for v in e.view_ids)}
        new = replace(entry, view_ids=sorted(ids))
        total = self._total_with(inner, [new])
        if total > self.budget:
            return None
        self._swap(entry.path, inner, new, total)
        return new


def _candidate(view: View, ua: UnitAssessment, source: Source) -> _Candidate:
    u = ua.unit
    assert ua.serve is not None
    text = "".join(source.lines[ua.serve.first - 1 : ua.serve.last])
    if u.kind == "symbol":
        # Name and kind of the definition as it is now (a rename found with confidence).
        entry = Entry(
            u.unit_id,
            view.path,
            ua.serve.first,
            ua.serve.last,
            "symbol",
            text,
            ua.status,
            u.name,
            u.symbol_kind,
        )
    elif u.kind == "text":
        entry = Entry(u.unit_id, view.path, ua.serve.first, ua.serve.last, "text", text, ua.status)
    else:
        entry = Entry(u.unit_id, view.path, ua.serve.first, ua.serve.last, "file", text, ua.status)
    fallbacks = reference_pieces(source, ua.status) if u.kind == "file" else []
    return _Candidate(entry, u.name, fallbacks)


def reference_plan(
    assessments: list[ViewAssessment],
    sources: dict[str, Source],
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
    policy: str = "stale",
    dirty_paths: frozenset[str] = frozenset(),
) -> Projection:
    """Project ``assessments`` (any order; they are walked most recently observed first)."""
    replaced = [
        a
        for a in sorted(assessments, key=lambda a: -a.view.seq)
        if policy == "all" or a.status != "fresh"
    ]
    sel = _Selection(budget_bytes)
    omitted: dict[str, Omission] = {}
    # per view: the unit entries that serve it (to resolve final labels) and its omissions
    served: dict[str, list[Entry]] = {}
    missing: dict[str, list[Omission]] = {}

    def omit(
        view_id: str,
        uid: str,
        path: str,
        reason: str,
        name: str | None,
        size: int | None,
        kind: str,
    ) -> None:
        om = omitted.get(uid)
        if om is None:
            om = omitted[uid] = Omission(uid, path, reason, [], name, size, kind)
        if view_id not in om.view_ids:
            om.view_ids.append(view_id)
            om.view_ids.sort()
        missing.setdefault(view_id, []).append(om)

    for a in replaced:
        vid = a.view.view_id
        served[vid] = []
        for ua in a.units:
            source = sources.get(a.view.path)
            if ua.serve is None or source is None:
                omit(vid, ua.unit.unit_id, a.view.path, ua.status, ua.unit.name, None, ua.unit.kind)
                continue
            cand = _candidate(a.view, ua, source)
            cand.entry.editor_dirty = a.view.path in dirty_paths
            if sel.try_add(cand.entry, vid) is not None:
                served[vid].append(cand.entry)
                continue
            # The unit itself is left out whole; a whole file then falls back to its
            # top-level pieces, each of them whole too.
            omit(
                vid,
                ua.unit.unit_id,
                a.view.path,
                "over-budget",
                ua.unit.name,
                cand.entry.bytes,
                ua.unit.kind,
            )
            for piece in cand.fallbacks:
                if sel.try_add(piece, vid) is not None:
                    served[vid].append(piece)
                else:
                    omit(
                        vid,
                        piece.unit_id,
                        piece.path,
                        "over-budget",
                        piece.name,
                        piece.bytes,
                        piece.kind,
                    )

    entries = sorted(sel.entries, key=lambda e: (e.path, e.first_line, e.last_line))
    for e in entries:
        e.editor_dirty = e.path in dirty_paths
    markers = [
        Marker(
            a.view.view_id,
            marker_text(
                a.view, _labels(served[a.view.view_id], entries), missing.get(a.view.view_id, [])
            ),
        )
        for a in replaced
    ]
    rendered = _old_render(entries)
    return Projection(
        entries, list(omitted.values()), markers, rendered, utf8_len(rendered), budget_bytes
    )


def _labels(units: list[Entry], final: list[Entry]) -> list[str]:
    labels: list[str] = []
    for u in units:
        host = next((e for e in final if e.contains(u)), None)
        if host is not None and host.label not in labels:
            labels.append(host.label)
    return labels


# ------------------------------------------------------------------ comparison


def _facts(p: Projection) -> dict[str, object]:
    """Everything a projection says, as plain values (the wire sees nothing else)."""
    return {
        "entries": [
            (
                e.unit_id,
                e.label,
                e.path,
                e.first_line,
                e.last_line,
                e.kind,
                e.name,
                e.symbol_kind,
                e.view_ids,
                e.bytes,
                e.sha256,
                e.status,
                e.editor_dirty,
                _old_header(e),
                e.text,
            )
            for e in p.entries
        ],
        "headers": [e.header for e in p.entries],
        "omitted": [
            (o.unit_id, o.path, o.reason, o.view_ids, o.name, o.bytes, o.kind) for o in p.omitted
        ],
        "markers": [(m.view_id, m.text) for m in p.markers],
        "rendered": p.rendered,
        "used": p.used_bytes,
        "budget": p.budget_bytes,
    }


def assert_same(
    assessments: list[ViewAssessment],
    sources: dict[str, Source],
    budget: int,
    policy: str,
    dirty: frozenset[str] = frozenset(),
    slices: SourceSlices | None = None,
) -> Projection:
    want = reference_plan(assessments, sources, budget, policy, dirty)
    got = plan(assessments, sources, budget, policy, dirty, slices)
    assert _facts(got) == _facts(want)
    assert got.used_bytes == utf8_len(got.rendered) <= budget
    return got


# Lines of a synthetic file: ASCII, non-ASCII (sizes in bytes differ from lengths), a CR.
LINE_TEXTS = ["x = 1\n", "    return x\n", "é = 'ü'  # ✓\n", "\n", "pass\r\n", "# 𝄞 note\n"]
VIEW_IDS = ["a", "b", "call_7", "vüé", "x" * 12, "v-∂"]
STATUSES = ["fresh", "moved", "changed", "ambiguous", "deleted", "unreadable"]
PATHS = ["a.py", "b/ç.py", "c.txt"]


@st.composite
def synthetic(draw: st.DrawFn) -> tuple[list[ViewAssessment], dict[str, Source], int, str]:
    """Assessments built by hand: any serve ranges (nested, overlapping, equal ones under
    other unit ids), unit ids shared between views, omissions, any statuses."""
    sources: dict[str, Source] = {}
    for path in draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=3, unique=True)):
        lines = draw(st.lists(st.sampled_from(LINE_TEXTS), min_size=1, max_size=30))
        text = "".join(lines)
        if draw(st.booleans()):
            text = text.rstrip("\n")  # a last line without LF
        if not text:
            text = "z\n"
        sources[path] = Source.from_text(path, text)
    paths = sorted(sources)
    # a pool of units, so that views share them (one entry serving several views)
    pool: list[tuple[str, str, int, int, str | None]] = []
    for k in range(draw(st.integers(1, 14))):
        path = draw(st.sampled_from(paths))
        n = sources[path].line_count
        kind = draw(st.sampled_from(["symbol", "text", "file"]))
        if kind == "file":
            first, last = 1, n
        else:
            first = draw(st.integers(1, n))
            last = draw(st.integers(first, min(n, first + draw(st.integers(0, 12)))))
        pool.append((f"u-{k:02d}{path}", path, first, last, kind))
    n_views = draw(st.integers(1, 10))
    seqs = draw(st.permutations(list(range(1, n_views + 1))))
    out: list[ViewAssessment] = []
    for i in range(n_views):
        picked = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4, unique=True))
        path = picked[0][1]
        units = []
        for uid, _, first, last, kind in (u for u in picked if u[1] == path):
            status = draw(st.sampled_from(STATUSES))
            name = None if kind != "symbol" else draw(st.sampled_from(["f", "C.m", "ü"]))
            ou = ObservedUnit(uid, kind, first, last, "", first, last, name,  # type: ignore[arg-type]
                              "method" if name else None)  # fmt: skip
            serve = (
                None if status in ("ambiguous", "deleted", "unreadable") else LineRange(first, last)
            )
            units.append(UnitAssessment(ou, status, serve, serve))
        vid = draw(st.sampled_from(VIEW_IDS)) + f"{i}"
        first = min(u.unit.obs_first for u in units)
        last = max(u.unit.obs_last for u in units)
        view = View("s", vid, path, first, last, draw(st.sampled_from(["read", "editResult"])),
                    seqs[i], "", "", [u.unit for u in units])  # fmt: skip
        status = max((u.status for u in units), key=STATUSES.index)
        out.append(ViewAssessment(view, status, units))
    total = sum(s.size for s in sources.values()) * 3 + 400
    budget = draw(st.one_of(st.integers(0, total), st.just(DEFAULT_BUDGET_BYTES)))
    policy = draw(st.sampled_from(["all", "stale"]))
    return out, sources, budget, policy


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=synthetic(), dirty=st.sets(st.sampled_from(PATHS)))
def test_fast_plan_equals_reference_on_synthetic_assessments(
    case: tuple[list[ViewAssessment], dict[str, Source], int, str], dirty: set[str]
) -> None:
    assessments, sources, budget, policy = case
    assert_same(assessments, sources, budget, policy, frozenset(dirty))
    # a shared SourceSlices (as the engine keeps one) changes nothing, used twice over
    slices = SourceSlices()
    assert_same(assessments, sources, budget, policy, frozenset(dirty), slices)
    assert_same(assessments, sources, budget, policy, frozenset(dirty), slices)


# Real views of real code: a module with classes, methods, functions and loose lines.
NAMES = ["alpha", "beta", "gamma", "delta", "total"]
BODY = ["x = 1", "return x", "y = x + 1", "pass", "print('é')"]


@st.composite
def modules(draw: st.DrawFn) -> str:
    parts: list[str] = ['"""Doc."""', "import os", ""]
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["assign", "def", "class", "blank"]))
        name = draw(st.sampled_from(NAMES))
        if kind == "assign":
            parts.append(f"{name.upper()} = {draw(st.integers(0, 9))}")
        elif kind == "blank":
            parts.append("")
        elif kind == "def":
            parts.append(f"def {name}(x):")
            parts += [
                "    " + b for b in draw(st.lists(st.sampled_from(BODY), min_size=1, max_size=4))
            ]
        else:
            parts.append(f"class {name.title()}:")
            for _ in range(draw(st.integers(1, 3))):
                parts.append(f"    def {draw(st.sampled_from(NAMES))}(self, x):")
                body = draw(st.lists(st.sampled_from(BODY), min_size=1, max_size=3))
                parts += ["        " + b for b in body]
    return "\n".join(parts) + "\n"


def _edit(draw: st.DrawFn, text: str) -> str:
    lines = text.splitlines(keepends=True)
    i = draw(st.integers(0, len(lines) - 1))
    op = draw(st.sampled_from(["insert", "delete", "replace", "none"]))
    if op == "insert":
        lines.insert(i, "    z = 2\n" if draw(st.booleans()) else "Q = 1\n")
    elif op == "delete" and len(lines) > 1:
        del lines[i]
    elif op == "replace":
        lines[i] = lines[i].replace("x", "xx")
    return "".join(lines)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_plan_equals_reference_on_real_views_after_edits(data: st.DataObject) -> None:
    texts = {p: data.draw(modules()) for p in ("m.py", "pkg/n.py")}
    views: list[View] = []
    seq = 0
    for path, text in texts.items():
        source = Source.from_text(path, text)
        n = source.line_count
        funcs = [d for d in source.definitions or []]
        for _ in range(data.draw(st.integers(1, 6))):
            seq += 1
            what = data.draw(st.sampled_from(["line", "function", "file", "range"]))
            if what == "file":
                first, last = 1, n
            elif what == "function" and funcs:
                d = data.draw(st.sampled_from(funcs))
                first, last = d.first_line, d.last_line
            elif what == "line":
                first = last = data.draw(st.integers(1, n))
            else:
                first = data.draw(st.integers(1, n))
                last = data.draw(st.integers(first, n))
            observed = source.lines[first - 1 : last]
            units = anchor_view(path, source, first, last, observed, first == 1 and last == n)
            vid = data.draw(st.sampled_from(VIEW_IDS)) + str(seq)
            views.append(View("s", vid, path, first, last, "read", seq, "".join(observed), "",
                              units))  # fmt: skip
    now = {p: Source.from_text(p, _edit(data.draw, t)) for p, t in texts.items()}
    assessments = [assess_view(v, now[v.path]) for v in views]
    data.draw(st.permutations(assessments))
    budget = data.draw(st.one_of(st.integers(0, 3000), st.just(DEFAULT_BUDGET_BYTES)))
    for policy in ("all", "stale"):
        assert_same(assessments, dict(now), budget, policy)
    # One SourceSlices across the edit, as the engine keeps it: what it remembers per view
    # (candidates, markers) must follow each view's new assessment and its file's new source.
    before = {p: Source.from_text(p, t) for p, t in texts.items()}
    slices = SourceSlices()
    for policy in ("all", "stale"):
        assert_same([assess_view(v, before[v.path]) for v in views], before, budget, policy,
                    slices=slices)  # fmt: skip
        assert_same(assessments, dict(now), budget, policy, slices=slices)
        assert_same(assessments, dict(now), budget, policy, slices=slices)


def test_equal_and_partly_overlapping_hosts_follow_the_walk_order() -> None:
    """Two selected entries both contain a later one (they overlap each other without
    containment): the one selected, or last grown, first serves it, as a list walk does."""
    text = "".join(f"line {i}\n" for i in range(1, 21))
    source = Source.from_text("m.txt", text)

    def va(vid: str, seq: int, *ranges: tuple[str, int, int]) -> ViewAssessment:
        units = []
        for uid, first, last in ranges:
            ou = ObservedUnit(uid, "text", first, last, "", first, last)
            r = LineRange(first, last)
            units.append(UnitAssessment(ou, "changed", r, r))
        view = View("s", vid, "m.txt", ranges[0][1], ranges[-1][2], "read", seq, "", "",
                    [u.unit for u in units])  # fmt: skip
        return ViewAssessment(view, "changed", units)

    cases = [
        [va("v1", 9, ("u-a", 1, 10)), va("v2", 8, ("u-b", 5, 15)), va("v3", 7, ("u-c", 6, 8))],
        [va("v1", 9, ("u-b", 5, 15)), va("v2", 8, ("u-a", 1, 10)), va("v3", 7, ("u-a", 1, 10)),
         va("v4", 6, ("u-c", 6, 8)), va("v5", 5, ("u-d", 6, 8)), va("v6", 4, ("u-e", 1, 20))],
        [va("v1", 3, ("u-a", 3, 4)), va("v2", 2, ("u-b", 3, 4)), va("v3", 1, ("u-c", 2, 6))],
        # the first host grows (another view joins it): the other one now comes first
        [va("v1", 9, ("u-a", 1, 10)), va("v2", 8, ("u-b", 5, 15)), va("v3", 7, ("u-a", 1, 10)),
         va("v4", 6, ("u-c", 6, 8))],
    ]  # fmt: skip
    for assessments in cases:
        for budget in (0, 60, 120, 200, 400, 10_000):
            assert_same(assessments, {"m.txt": source}, budget, "all")
