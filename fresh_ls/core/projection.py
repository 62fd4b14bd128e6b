"""The budgeted projection: current code for what the agent read, and markers for old views.

Selection walks the replaced views most recently observed first and takes each unit's
current code whole or not at all; a later, smaller entry may still fit where a larger
one did not. A unit inside an already selected unit is served by it, not repeated; a
larger unit arriving later absorbs the smaller ones it contains when the budget allows.
A whole-file view that does not fit falls back to the file's top-level pieces.

Rendering is ordered by (path, first line) and every header is a pure function of the
entry, so an unchanged projection renders byte-identical request after request, which
keeps a prompt cache warm. Markers depend only on the view, the labels that serve it and
the reasons it was not served, never on statuses or current line numbers.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from fresh_ls.core.anchors import label_for, unit_id
from fresh_ls.core.model import UnitAssessment, View, ViewAssessment
from fresh_ls.core.sources import Source
from fresh_ls.core.text import utf8_len

DEFAULT_BUDGET_BYTES = 131072


@dataclass(slots=True)
class Entry:
    unit_id: str
    path: str
    first_line: int
    last_line: int
    kind: str
    text: str
    status: str
    name: str | None = None
    symbol_kind: str | None = None
    view_ids: list[str] = field(default_factory=list)
    editor_dirty: bool = False
    #: ``own lines``: the lines of a definition outside its nested definitions (one
    #: contiguous run of them), served instead of the whole definition (``own_lines``)
    part: str | None = None
    #: ``[text, UTF-8 size, SHA-256 or None]`` of a text, shared by every entry cut from the
    #: same lines of the same content (see ``SourceSlices``); trusted only while ``text`` is
    #: that very string, so an entry whose text is replaced computes its own again.
    _memo: list[object] | None = field(default=None, compare=False, repr=False)

    def _facts(self) -> list[object]:
        memo = self._memo
        if memo is None or memo[0] is not self.text:
            memo = self._memo = [self.text, utf8_len(self.text), None]
        return memo

    @property
    def label(self) -> str:
        return label_for(self.unit_id)

    @property
    def bytes(self) -> int:
        memo = self._memo
        size = memo[1] if memo is not None and memo[0] is self.text else self._facts()[1]
        assert isinstance(size, int)
        return size

    @property
    def sha256(self) -> str:
        memo = self._facts()
        if memo[2] is None:
            memo[2] = hashlib.sha256(self.text.encode("utf-8")).hexdigest()
        sha = memo[2]
        assert isinstance(sha, str)
        return sha

    def _header_head(self) -> str:
        """The header up to the view ids it serves (what does not change as views join)."""
        lines = self.last_line - self.first_line + 1
        what = {
            "file": "whole file",
            "text": "text outside definitions",
        }.get(self.kind, f"{self.symbol_kind or 'symbol'} {self.name}")
        line_word = "line" if lines == 1 else "lines"
        return (
            f"[{self.label}] {self.path} lines {self.first_line}-{self.last_line} "
            f"({lines} {line_word}, {self.bytes} bytes) · {what} · for "
        )

    @property
    def header(self) -> str:
        return self._header_head() + ", ".join(self.view_ids)

    def rendered(self) -> str:
        tail = "" if self.text.endswith("\n") else "\n"
        return f"{self.header}\n{self.text}{tail}"

    def cost(self) -> int:
        return utf8_len(self.rendered())

    def _base_cost(self) -> int:
        """The rendered size without the view ids: ``cost()`` is this plus the UTF-8 size
        of ``", ".join(view_ids)``."""
        tail = 0 if self.text.endswith("\n") else 1
        return utf8_len(self._header_head()) + 1 + self.bytes + tail

    def contains(self, other: Entry) -> bool:
        return (
            self.path == other.path
            and self.first_line <= other.first_line
            and other.last_line <= self.last_line
        )


@dataclass(slots=True)
class Omission:
    unit_id: str
    path: str
    reason: str
    view_ids: list[str] = field(default_factory=list)
    name: str | None = None
    bytes: int | None = None
    kind: str = "symbol"

    def describe(self) -> str:
        if self.name:
            return self.name
        return "the whole file" if self.kind == "file" else "lines outside definitions"


@dataclass(slots=True, frozen=True)
class Marker:
    """What stands where a view's old tool result stood. Frozen: a plan hands the very
    marker objects of the plan before to the next (``SourceSlices.marker``)."""

    view_id: str
    text: str


@dataclass(slots=True)
class Projection:
    entries: list[Entry]
    omitted: list[Omission]
    markers: list[Marker]
    rendered: str
    used_bytes: int
    budget_bytes: int
    #: the typed result (``fresh_ls.protocol.ProjectResult``) of this projection without
    #: its plan id, built once by ``fresh_ls.engine.wire`` (a cached projection is answered again
    #: and again)
    wire: Any = field(default=None, compare=False, repr=False)
    #: ``wire``'s keys after ``planId`` as JSON text, but ``rendered`` (``wire_rendered``),
    #: each with its key: every answer joins them behind its own ``planId``
    #: (``fresh_ls.engine.wire.project_json``).
    wire_parts: list[tuple[str, str]] | None = field(default=None, compare=False, repr=False)
    #: ``"rendered": ...`` as JSON text, made for the first answer that carries it.
    wire_rendered: str | None = field(default=None, compare=False, repr=False)
    #: What the engine keeps of each answer of this projection for ``fresh/commit``, made
    #: once: (the views it was asked for, the rows of its entries, the views it left in
    #: place) (``Engine._project_end``).
    kept_for_commit: Any = field(default=None, compare=False, repr=False)


def render(entries: list[Entry]) -> str:
    """Entries by (path, first line): header, LF, the text; nothing else, so a reader can
    frame every entry from byte 0 by its header's byte count."""
    ordered = sorted(entries, key=lambda e: (e.path, e.first_line, e.last_line))
    return "".join(e.rendered() for e in ordered)


def top_level_pieces(source: Source, status: str) -> list[Entry]:
    """A file cut into its top-level definitions and the text between them: what a
    whole-file view falls back to when the whole file does not fit."""
    return SourceSlices().pieces(source, status)


#: What a marker's text takes of one omission: its unit id, reason, size, name and kind.
_OmissionKey = tuple[str, str, int | None, str | None, str]


class SourceSlices:
    """Text, UTF-8 size and SHA-256 of line ranges of sources, and their top-level pieces,
    kept per path for one content (by its SHA-256): a file that did not change costs no
    join, no encoding and no hash on the next plan. A path whose content changed starts
    afresh, so what is kept stays bounded by the current files."""

    MAX_RANGES_PER_FILE = 4096
    #: Views whose candidates and marker are kept (``candidates``, ``marker``); past it the
    #: memo starts afresh.
    MAX_VIEWS = 65536
    #: Ids of top-level definitions kept (``_symbol_id``); past it they start afresh.
    MAX_SYMBOL_IDS = 65536

    def __init__(self) -> None:
        self._ranges: dict[str, tuple[str, dict[tuple[int, int], list[object]]]] = {}
        self._pieces: dict[str, tuple[str, dict[str, list[Entry]]]] = {}
        self._candidates: dict[
            tuple[str, str],
            tuple[ViewAssessment, Source, bool, list[_Step], _Refusal | None],
        ] = {}
        self._markers: dict[
            tuple[str, str], tuple[View, list[str], list[_OmissionKey], Marker]
        ] = {}
        self._symbol_ids: dict[tuple[str, str, str, int], str] = {}

    def candidates(
        self, a: ViewAssessment, source: Source, own_lines: bool
    ) -> tuple[list[_Step], _Refusal | None]:
        """What each unit of ``a`` offers a plan, and what it leaves out when the budget
        refuses all of them (``_refusal``), kept per view while its assessment (one per
        view and content: ``Engine._assess``) and its file's source are the very same
        objects: after an edit of one file, the views of the other 100 cost a plan no
        entry, slice or size again. Planning never changes what it is given."""
        key = (a.view.session, a.view.view_id)
        kept = self._candidates.get(key)
        if kept is not None and kept[0] is a and kept[1] is source and kept[2] == own_lines:
            return kept[3], kept[4]
        steps = [_step(a.view, ua, source, self, own_lines) for ua in a.units]
        refusal = _refusal(steps)
        if len(self._candidates) >= self.MAX_VIEWS:
            self._candidates.clear()
        self._candidates[key] = (a, source, own_lines, steps, refusal)
        return steps, refusal

    def drop(self, session: str) -> None:
        """Forget what is kept for ``session``'s views (the session is forgotten)."""
        for kept in (self._candidates, self._markers):
            for key in [k for k in kept if k[0] == session]:
                del kept[key]

    def marker(
        self,
        view: View,
        labels: list[str],
        said: list[_OmissionKey],
        omitted: dict[str, Omission],
    ) -> Marker:
        """The ``Marker`` of ``view`` (``marker_text`` of it, ``labels`` and the omissions
        ``said`` names, their objects in ``omitted`` by unit id), kept per view for the
        same view object, labels and ``said`` (what the text is a function of): most views
        of a large session end the same way plan after plan, and their markers are the
        very objects of the plan before (no one changes a marker). ``labels`` and ``said``
        are kept as given: the caller does not change them afterwards."""
        key = (view.session, view.view_id)
        kept = self._markers.get(key)
        if kept is not None and kept[0] is view and kept[1] == labels and kept[2] == said:
            return kept[3]
        marker = Marker(view.view_id, marker_text(view, labels, [omitted[k[0]] for k in said]))
        if len(self._markers) >= self.MAX_VIEWS:
            self._markers.clear()
        self._markers[key] = (view, labels, said, marker)
        return marker

    def memo(self, source: Source, first: int, last: int) -> list[object]:
        """``[text, UTF-8 size, SHA-256 or None]`` of lines ``first..last``."""
        sha = source.sha256
        kept = self._ranges.get(source.path)
        if kept is None or kept[0] != sha or not sha:
            kept = (sha, {})
            if sha:
                self._ranges[source.path] = kept
        ranges = kept[1]
        memo = ranges.get((first, last))
        if memo is None:
            text = "".join(source.lines[first - 1 : last])
            memo = [text, utf8_len(text), None]
            if len(ranges) >= self.MAX_RANGES_PER_FILE:
                ranges.clear()
            ranges[(first, last)] = memo
        return memo

    def entry(
        self,
        source: Source,
        path: str,
        unit_id_: str,
        first: int,
        last: int,
        kind: str,
        status: str,
        name: str | None = None,
        symbol_kind: str | None = None,
    ) -> Entry:
        memo = self.memo(source, first, last)
        text = memo[0]
        assert isinstance(text, str)
        return Entry(unit_id_, path, first, last, kind, text, status, name, symbol_kind, _memo=memo)

    def pieces(self, source: Source, status: str = "") -> list[Entry]:
        """The top-level pieces of ``source``, with ``status``. Planning never changes an
        entry it is given, so the same pieces serve every plan of this content."""
        sha = source.sha256
        kept = self._pieces.get(source.path)
        if kept is None or kept[0] != sha or not sha:
            kept = (sha, {"": self._cut(source)})
            if sha:
                self._pieces[source.path] = kept
        by_status = kept[1]
        pieces = by_status.get(status)
        if pieces is None:
            pieces = by_status[status] = [
                Entry(p.unit_id, p.path, p.first_line, p.last_line, p.kind, p.text, status,
                      p.name, p.symbol_kind, _memo=p._memo)
                for p in by_status[""]
            ]  # fmt: skip
        return pieces

    def _symbol_id(self, path: str, name: str, symbol_kind: str, ordinal: int) -> str:
        """``unit_id`` of a top-level definition, kept by what it is a function of: after a
        one-line edit of a 5,000-line file, the next cut of its 150 pieces hashes none of
        them again. (A text piece's id hashes its text: it is computed each time.)"""
        key = (path, name, symbol_kind, ordinal)
        uid = self._symbol_ids.get(key)
        if uid is None:
            uid = unit_id(path, "symbol", name, symbol_kind, ordinal)
            if len(self._symbol_ids) >= self.MAX_SYMBOL_IDS:
                self._symbol_ids.clear()
            self._symbol_ids[key] = uid
        return uid

    def _cut(self, source: Source) -> list[Entry]:
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
                    pieces.append(self.entry(source, source.path, uid, line, stop, "text", ""))
            if d is None:
                break
            uid = self._symbol_id(source.path, d.name, d.symbol_kind, d.ordinal)
            pieces.append(
                self.entry(
                    source,
                    source.path,
                    uid,
                    d.first_line,
                    d.last_line,
                    "symbol",
                    "",
                    d.name,
                    d.symbol_kind,
                )
            )
            line = d.last_line + 1
        return pieces


class _Held:
    """An entry selected so far: its view ids and its exact rendered size."""

    __slots__ = ("cost", "entry", "ids", "stamp")

    def __init__(self, entry: Entry, ids: set[str], cost: int, stamp: int) -> None:
        self.entry = entry
        self.ids = ids
        self.cost = cost
        self.stamp = stamp


class _FileSelection:
    """The entries selected in one file, sorted by first line.

    No selected entry contains another (a contained one is served by its host, a larger
    one absorbs what it contains), so sorted by first line they are sorted by last line
    too, strictly: the entries containing a range form one run of the list and the
    entries it contains another, each found by bisection instead of a scan.
    """

    __slots__ = ("firsts", "held", "lasts")

    def __init__(self) -> None:
        self.firsts: list[int] = []
        self.lasts: list[int] = []
        self.held: list[_Held] = []

    def host(self, first: int, last: int) -> _Held | None:
        """The entry that serves ``first..last``: of those containing it, the one selected
        (or last grown) earliest, as the rule of a list walked in selection order says."""
        i = bisect_left(self.lasts, last)
        j = bisect_right(self.firsts, first)
        if i >= j:
            return None
        if j - i == 1:
            return self.held[i]
        return min(self.held[i:j], key=lambda h: h.stamp)

    def inner(self, first: int, last: int) -> tuple[int, int]:
        """The run ``lo:hi`` of entries inside ``first..last`` (when none contains it)."""
        return bisect_left(self.firsts, first), bisect_right(self.lasts, last)

    def final_host(self, first: int, last: int) -> _Held | None:
        """The first entry in (first line, last line) order containing ``first..last``."""
        i = bisect_left(self.lasts, last)
        if i < len(self.held) and self.firsts[i] <= first:
            return self.held[i]
        return None


def _ids_size(ids: set[str]) -> int:
    """The UTF-8 size of ``", ".join(ids)``, whatever their order."""
    return sum(utf8_len(v) for v in ids) + 2 * (len(ids) - 1)


class _Selection:
    """Entries chosen so far, with their rendered size kept exact as they merge.

    Sizes are tracked per entry (the text's size and the header without its view ids are
    fixed; the ids' part grows as views join), so the budget check is exact without
    re-rendering or re-encoding a text.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.by_path: dict[str, _FileSelection] = {}
        self.used = 0
        self._stamp = 0

    def _next(self) -> int:
        self._stamp += 1
        return self._stamp

    def try_add(self, entry: Entry, view_id: str, size: int = -1) -> bool:
        """Select ``entry`` for ``view_id`` (or let a containing entry serve it); False when
        that would exceed the budget. ``size``: ``entry.bytes`` when the caller has it.

        Once the budget is spent, most calls end at the size check: the way there is
        kept short (no host or inner run to look for in a file with nothing selected,
        no sum over an empty run)."""
        fs = self.by_path.get(entry.path)
        first, last = entry.first_line, entry.last_line
        inner: list[_Held] = []
        freed = 0
        if fs is not None and fs.held:
            host = fs.host(first, last)
            if host is not None:
                if view_id in host.ids:
                    return True
                cost = host.cost + utf8_len(view_id) + 2
                total = self.used - host.cost + cost
                if total > self.budget:
                    return False
                host.ids.add(view_id)
                host.cost = cost
                host.stamp = self._next()  # a grown entry goes to the end of the walk order
                self.used = total
                return True
            lo, hi = fs.inner(first, last)
            if lo < hi:
                inner = fs.held[lo:hi]
                freed = sum(h.cost for h in inner)
        else:
            lo = hi = 0
        # The text and its line feed alone already exceed the budget: no need to build
        # the header to know (its size only adds to that).
        if self.used - freed + (size if size >= 0 else entry.bytes) + 1 > self.budget:
            return False
        ids = {view_id}
        for h in inner:
            ids |= h.ids
        cost = entry._base_cost() + _ids_size(ids)
        total = self.used - freed + cost
        if total > self.budget:
            return False
        if fs is None:  # made on the first entry a file keeps, not on every refusal
            fs = self.by_path[entry.path] = _FileSelection()
        fs.held[lo:hi] = [_Held(entry, ids, cost, self._next())]
        fs.firsts[lo:hi] = [first]
        fs.lasts[lo:hi] = [last]
        self.used = total
        return True


def own_line_runs(source: Source, first: int, last: int) -> list[tuple[int, int]] | None:
    """The runs of lines ``first..last`` of the definition spanning exactly them that lie
    outside its nested definitions, blank runs dropped; None when it has no nested one.

    A view that showed a class's own lines (its header, decorators, fields, docstring, the
    blank lines between methods) saw no method body: those are units of their own. Serving
    the whole class for it re-sends every method at every edit of any of them."""
    defs = source.definitions
    if not defs:
        return None
    owner = next(
        (i for i, d in enumerate(defs) if d.first_line == first and d.last_line == last), None
    )
    if owner is None:
        return None
    children = sorted(
        (d.first_line, d.last_line) for d in defs if d.parent == owner and d.first_line > first
    )
    if not children:
        return None
    runs: list[tuple[int, int]] = []
    line = first
    for c_first, c_last in [*children, (last + 1, last)]:
        if c_first - 1 >= line and "".join(source.lines[line - 1 : c_first - 1]).strip():
            runs.append((line, c_first - 1))
        line = max(line, c_last + 1)
    return runs


def _own_line_entries(
    view: View, ua: UnitAssessment, source: Source, slices: SourceSlices
) -> list[Entry] | None:
    u = ua.unit
    assert ua.serve is not None
    runs = own_line_runs(source, ua.serve.first, ua.serve.last)
    if runs is None:
        return None
    out = []
    for k, (first, last) in enumerate(runs):
        e = slices.entry(source, view.path, f"{u.unit_id}.{k}", first, last, "symbol",
                         ua.status, u.name, u.symbol_kind)  # fmt: skip
        e.part = "own lines"
        out.append(e)
    return out


def _candidate(
    view: View, ua: UnitAssessment, source: Source, slices: SourceSlices
) -> tuple[Entry, bool]:
    """The unit's current code as an entry, and whether it is a whole file (which falls
    back to the file's top-level pieces when it does not fit)."""
    u = ua.unit
    assert ua.serve is not None
    first, last = ua.serve.first, ua.serve.last
    if u.kind == "symbol":
        # Name and kind of the definition as it is now (a rename found with confidence).
        return slices.entry(source, view.path, u.unit_id, first, last, "symbol", ua.status,
                            u.name, u.symbol_kind), False  # fmt: skip
    kind = "text" if u.kind == "text" else "file"
    return slices.entry(source, view.path, u.unit_id, first, last, kind, ua.status), kind == "file"


class _Step(NamedTuple):
    """What one unit of a view offers a plan: nothing (``entry`` None: it is omitted with
    its status), its own lines (``own``, anchored placement), or its current code whole
    (``entry``; a whole file, ``whole_file``, falls back to its top-level pieces)."""

    ua: UnitAssessment
    entry: Entry | None
    whole_file: bool = False
    own: list[Entry] | None = None
    #: ``entry.bytes``, read once per view and content instead of on every plan
    size: int = -1


def _step(
    view: View, ua: UnitAssessment, source: Source, slices: SourceSlices, own_lines: bool
) -> _Step:
    if ua.serve is None:
        return _Step(ua, None)
    if own_lines and ua.unit.kind == "symbol":
        own = _own_line_entries(view, ua, source, slices)
        if own is not None:
            return _Step(ua, None, False, own)
    entry, whole_file = _candidate(view, ua, source, slices)
    return _Step(ua, entry, whole_file, None, entry.bytes)


class _Refusal(NamedTuple):
    """A view whose units each offer one entry (no whole file, no own lines, none left
    out for its status), as the budget refuses it whole: while its file has no entry
    selected, ``_Selection.try_add`` refuses each of its entries at its first check
    whenever the smallest does not fit (``used + least + 1 > budget``); then the view
    leaves out each unit, over budget, with its size (``keys``, in unit order). Most views
    of a large session end so once the budget is spent: one comparison each instead of a
    selection attempt and an omission per unit."""

    least: int
    keys: list[_OmissionKey]


def _refusal(steps: list[_Step]) -> _Refusal | None:
    if not steps or any(s.entry is None or s.whole_file or s.own is not None for s in steps):
        return None
    keys: list[_OmissionKey] = [
        (s.ua.unit.unit_id, "over-budget", s.size, s.ua.unit.name, s.ua.unit.kind) for s in steps
    ]
    return _Refusal(min(s.size for s in steps), keys)


def plan(
    assessments: list[ViewAssessment],
    sources: dict[str, Source],
    budget_bytes: int = DEFAULT_BUDGET_BYTES,
    policy: str = "stale",
    dirty_paths: frozenset[str] = frozenset(),
    slices: SourceSlices | None = None,
    own_lines: bool = False,
) -> Projection:
    """Project ``assessments`` (any order; they are walked most recently observed first).

    Near-linear in the number of units: containment is found by bisection among the
    entries of one file, the final label of every unit likewise, sizes are tracked
    without re-rendering, and a whole file's fallback pieces are cut only when it does
    not fit. ``slices`` keeps texts, sizes and hashes of unchanged files across plans.
    """
    slices = slices if slices is not None else SourceSlices()
    replaced = [
        a
        for a in sorted(assessments, key=lambda a: -a.view.seq)
        if policy == "all" or a.status != "fresh"
    ]
    sel = _Selection(budget_bytes)
    omitted: dict[str, Omission] = {}
    omitted_ids: dict[str, set[str]] = {}
    said: dict[str, _OmissionKey] = {}
    # per view: the ranges of the entries that served it (to resolve final labels), and
    # what its marker says of its omissions
    served: dict[str, list[tuple[str, int, int]]] = {}
    missing: dict[str, list[_OmissionKey]] = {}

    def leave_out(
        view_id: str, path: str, keys: list[_OmissionKey]
    ) -> list[_OmissionKey]:
        """Leave out the units ``keys`` name for ``view_id`` (one omission per unit) and
        say what its marker names of them: ``keys`` itself, but a unit left out before
        (for another reason or size) is named as it was first left out."""
        named = keys
        for i, key in enumerate(keys):
            uid = key[0]
            first = said.get(uid)
            if first is None:
                omitted[uid] = Omission(uid, path, key[1], [], key[3], key[2], key[4])
                omitted_ids[uid] = {view_id}
                said[uid] = key
                continue
            omitted_ids[uid].add(view_id)
            if first != key:
                named = list(keys) if named is keys else named
                named[i] = first
        return named

    def omit(
        view_id: str,
        uid: str,
        path: str,
        reason: str,
        name: str | None,
        size: int | None,
        kind: str,
    ) -> None:
        named = leave_out(view_id, path, [(uid, reason, size, name, kind)])
        missing.setdefault(view_id, []).extend(named)

    for a in replaced:
        vid = a.view.view_id
        path = a.view.path
        mine: list[tuple[str, int, int]] = []
        served[vid] = mine
        source = sources.get(path)
        if source is None:
            for ua in a.units:
                omit(vid, ua.unit.unit_id, path, ua.status, ua.unit.name, None, ua.unit.kind)
            continue
        steps, refusal = slices.candidates(a, source, own_lines)
        if (
            refusal is not None
            and path not in sel.by_path
            and sel.used + refusal.least + 1 > budget_bytes
        ):
            # what the walk below would find, unit by unit (``_Refusal``)
            missing[vid] = leave_out(vid, path, refusal.keys)
            continue
        for ua, entry, whole_file, own, size in steps:
            if own is not None:
                for piece in own:
                    if sel.try_add(piece, vid):
                        mine.append((path, piece.first_line, piece.last_line))
                    else:
                        omit(vid, piece.unit_id, path, "over-budget", piece.name,
                             piece.bytes, "symbol")  # fmt: skip
                continue
            if entry is None:
                omit(vid, ua.unit.unit_id, path, ua.status, ua.unit.name, None, ua.unit.kind)
                continue
            if sel.try_add(entry, vid, size):
                mine.append((path, entry.first_line, entry.last_line))
                continue
            # The unit itself is left out whole; a whole file then falls back to its
            # top-level pieces, each of them whole too.
            omit(vid, ua.unit.unit_id, path, "over-budget", ua.unit.name, size,
                 ua.unit.kind)  # fmt: skip
            if not whole_file:
                continue
            for piece in slices.pieces(source, ua.status):
                if sel.try_add(piece, vid):
                    mine.append((piece.path, piece.first_line, piece.last_line))
                else:
                    omit(vid, piece.unit_id, piece.path, "over-budget", piece.name,
                         piece.bytes, piece.kind)  # fmt: skip

    for uid, om in omitted.items():
        ids = omitted_ids[uid]  # most units are left out for one view: no sort to make
        om.view_ids = sorted(ids) if len(ids) > 1 else list(ids)
    entries: list[Entry] = []
    for path in sorted(sel.by_path):
        for h in sel.by_path[path].held:
            e = h.entry
            entries.append(
                Entry(e.unit_id, e.path, e.first_line, e.last_line, e.kind, e.text, e.status,
                      e.name, e.symbol_kind, sorted(h.ids), path in dirty_paths, e.part,
                      e._memo)
            )  # fmt: skip
    markers = []
    for a in replaced:
        vid = a.view.view_id
        found: list[str] = []
        for path, first, last in served.get(vid, ()):
            host = sel.by_path[path].final_host(first, last)
            if host is None:
                continue
            label = label_for(host.entry.unit_id)
            if label not in found:
                found.append(label)
        markers.append(slices.marker(a.view, found, missing.get(vid, []), omitted))
    rendered = "".join(e.rendered() for e in entries)
    return Projection(
        entries, list(omitted.values()), markers, rendered, utf8_len(rendered), budget_bytes
    )


_REASONS = {
    "over-budget": "left out to fit the budget",
    "deleted": "deleted",
    "ambiguous": "no longer identifiable: several candidates",
    "unreadable": "not readable as text",
}


#: How a marker says where the current code is: (all of it, part of it); ``{where}`` is the
#: labels. The end placement's; ``core.ledger`` has the anchored placement's.
AT_THE_END = (
    "it is replaced by the current code at the end of this prompt under {where}",
    "part of it is replaced by the current code at the end of this prompt under {where}",
)


def marker_text(
    view: View,
    labels: list[str],
    omissions: list[Omission],
    phrases: tuple[str, str] = AT_THE_END,
    note: str = "",
) -> str:
    """What stands in the prompt where the view's old tool result stood. ``note`` follows
    the view's own words (anchored: which lines another result shows current)."""
    who = f"{view.view_id}, an edit result," if view.kind == "editResult" else view.view_id
    head = f"[fresh-ls] {who} showed {view.path} {view.lines_label()}{note}"
    where = ", ".join(f"[{label}]" for label in labels)
    items = "; ".join(
        f"{om.describe()} ({_REASONS.get(om.reason, om.reason)}"
        f"{f', {om.bytes} bytes' if om.bytes is not None else ''})"
        for om in omissions
    )
    again = f"Read {view.path} again if you need it."
    if labels and not omissions:
        return f"{head}; {phrases[0].format(where=where)}."
    if labels:
        return f"{head}; {phrases[1].format(where=where)}. Not included: {items}. {again}"
    if note and not omissions:
        return f"{head}."
    return f"{head}; its current code is not included: {items}. {again}"


@dataclass(slots=True)
class _Kept:
    """One plan's inputs and the projection they gave."""

    key: tuple[object, ...]
    assessments: list[ViewAssessment]
    projection: Projection
    #: What each file of the views read as when it was planned (``recall``), if told.
    contents: tuple[str, ...] | None = None


def _where(
    session: str, budget_bytes: int, policy: str, view_ids: list[str] | None, own_lines: bool
) -> tuple[object, ...]:
    """What a kept projection is found by: one per session, budget, policy, ``viewIds``
    and placement (``own_lines``: anchored)."""
    return (session, budget_bytes, policy, None if view_ids is None else tuple(view_ids), own_lines)


class ProjectionCache:
    """Projections by everything they depend on, and the texts of unchanged files.

    A projection is a function of the assessed views (ids, sequence numbers, and the
    assessments themselves), the content of every file they name (by SHA-256, which the
    engine has just checked against the disk), the budget, the policy, the files with a
    dirty editor buffer and the ``viewIds`` asked for. When all of them are what they
    were, the projection is the one computed then, and its texts are still byte for byte
    the disk; any difference (an edit, an observe, a forget, another budget or policy)
    plans again, reusing the texts, sizes and hashes of the files that did not change.
    """

    MAX_KEPT = 64

    def __init__(self) -> None:
        self.slices = SourceSlices()
        self._kept: dict[tuple[object, ...], _Kept] = {}
        self.hits = 0
        self.misses = 0

    def recall(
        self,
        session: str,
        views: list[View],
        contents: tuple[str, ...],
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        policy: str = "stale",
        dirty_paths: frozenset[str] = frozenset(),
        view_ids: list[str] | None = None,
    ) -> Projection | None:
        """The kept projection when nothing it depends on can have changed, before any view
        is assessed: the very views (by identity, in order: an observe, a forget or a
        patched view each make new ones), each of their files read as the same content
        (``contents``, as ``plan`` was told it: a SHA-256, or ``!reason`` for a file that
        could not be read), the same dirty files. Assessing 500 views again to find them
        all unchanged cost more than the rest of the request; None: plan."""
        kept = self._kept.get(_where(session, budget_bytes, policy, view_ids, False))
        if (
            kept is None
            or kept.contents is None
            or kept.contents != contents
            or kept.key[3] != dirty_paths
            or len(kept.assessments) != len(views)
            or not all(a.view is v for a, v in zip(kept.assessments, views, strict=True))
        ):
            return None
        self.hits += 1
        return kept.projection

    def plan(
        self,
        session: str,
        assessments: list[ViewAssessment],
        sources: dict[str, Source],
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        policy: str = "stale",
        dirty_paths: frozenset[str] = frozenset(),
        view_ids: list[str] | None = None,
        own_lines: bool = False,
        contents: tuple[str, ...] | None = None,
    ) -> Projection:
        """The projection of ``assessments`` (kept, when its inputs are what they were).
        ``contents``: what each file of the views read as, kept for ``recall``."""
        where = _where(session, budget_bytes, policy, view_ids, own_lines)
        key = (
            where,
            tuple((a.view.view_id, a.view.seq) for a in assessments),
            tuple(sorted((path, s.sha256) for path, s in sources.items())),
            dirty_paths,
        )
        kept = self._kept.get(where)
        if (
            kept is not None
            and kept.key == key
            and len(kept.assessments) == len(assessments)
            # the very assessments (the engine keeps one per view and content): a view
            # assessed anew, say a file that went from missing to unreadable, plans anew
            and all(x is y for x, y in zip(kept.assessments, assessments, strict=True))
        ):
            self.hits += 1
            kept.contents = contents
            return kept.projection
        self.misses += 1
        projection = plan(
            assessments, sources, budget_bytes, policy, dirty_paths, self.slices, own_lines
        )
        self._kept.pop(where, None)
        self._kept[where] = _Kept(key, list(assessments), projection, contents)
        while len(self._kept) > self.MAX_KEPT:
            del self._kept[next(iter(self._kept))]
        return projection

    def drop(self, session: str) -> None:
        """Drop the kept projections of ``session`` and what its views keep in ``slices``
        (forgotten: none of them is asked again)."""
        for where in [w for w in self._kept if w[0] == session]:
            del self._kept[where]
        self.slices.drop(session)

    def forget(self) -> None:
        """Drop every kept projection (the texts of files stay, keyed by their content)."""
        self._kept.clear()
