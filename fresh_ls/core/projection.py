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
from dataclasses import dataclass, field, replace

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

    @property
    def label(self) -> str:
        return label_for(self.unit_id)

    @property
    def bytes(self) -> int:
        return utf8_len(self.text)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def header(self) -> str:
        lines = self.last_line - self.first_line + 1
        what = {
            "file": "whole file",
            "text": "text outside definitions",
        }.get(self.kind, f"{self.symbol_kind or 'symbol'} {self.name}")
        line_word = "line" if lines == 1 else "lines"
        return (
            f"[{self.label}] {self.path} lines {self.first_line}-{self.last_line} "
            f"({lines} {line_word}, {self.bytes} bytes) · {what} · for {', '.join(self.view_ids)}"
        )

    def rendered(self) -> str:
        tail = "" if self.text.endswith("\n") else "\n"
        return f"{self.header}\n{self.text}{tail}"

    def cost(self) -> int:
        return utf8_len(self.rendered())

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


@dataclass(slots=True)
class Marker:
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


@dataclass(slots=True)
class _Candidate:
    entry: Entry
    name: str | None
    fallbacks: list[Entry] = field(default_factory=list)


def render(entries: list[Entry]) -> str:
    """Entries by (path, first line): header, LF, the text; nothing else, so a reader can
    frame every entry from byte 0 by its header's byte count."""
    ordered = sorted(entries, key=lambda e: (e.path, e.first_line, e.last_line))
    return "".join(e.rendered() for e in ordered)


def top_level_pieces(source: Source, status: str) -> list[Entry]:
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
        return total + sum(e.cost() for e in add)

    def _swap(self, path: str, remove: list[Entry], add: Entry, total: int) -> None:
        for e in remove:
            self.costs.pop(id(e), None)
        gone = {id(e) for e in remove}
        same_file = self.by_path.setdefault(path, [])
        same_file[:] = [e for e in same_file if id(e) not in gone]
        same_file.append(add)
        self.costs[id(add)] = add.cost()
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
    fallbacks = top_level_pieces(source, ua.status) if u.kind == "file" else []
    return _Candidate(entry, u.name, fallbacks)


def plan(
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
    rendered = render(entries)
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


_REASONS = {
    "over-budget": "left out to fit the budget",
    "deleted": "deleted",
    "ambiguous": "no longer identifiable: several candidates",
    "unreadable": "not readable as text",
}


def marker_text(view: View, labels: list[str], omissions: list[Omission]) -> str:
    """What stands in the prompt where the view's old tool result stood."""
    who = f"{view.view_id}, an edit result," if view.kind == "editResult" else view.view_id
    head = f"[fresh-ls] {who} showed {view.path} lines {view.first_line}-{view.last_line}"
    where = ", ".join(f"[{label}]" for label in labels)
    items = "; ".join(
        f"{om.describe()} ({_REASONS.get(om.reason, om.reason)}"
        f"{f', {om.bytes} bytes' if om.bytes is not None else ''})"
        for om in omissions
    )
    again = f"Read {view.path} again if you need it."
    if labels and not omissions:
        return (
            f"{head}; it is replaced by the current code at the end of this prompt under {where}."
        )
    if labels:
        return (
            f"{head}; part of it is replaced by the current code at the end of this prompt "
            f"under {where}. Not included: {items}. {again}"
        )
    return f"{head}; its current code is not included: {items}. {again}"
