"""Where current code goes once it was sent: the refresh ledger of ``placement: anchored``.

Under ``placement: end`` (v1.1) the projection is appended after the newest message of every
request. A prompt cache serves the longest unchanged prefix, and the end of the request is
never part of it, so every entry is paid for in full on every request, while it stays the
same. Under ``placement: anchored`` current code is sent once and then becomes history:

- the new entries of a request form a *refresh*, placed right after the newest tool result
  of that request (``after``, a tool-call id the harness names);
- later requests carry every refresh at the same place, byte for byte, while its code is
  current, so the cache serves it;
- an entry whose code changes (or only moves: its header names lines) is *retired* in place:
  its lines become a one-line note naming its successor, which is sent in the refresh of the
  request that saw the change. The cache breaks there once, at a place that was near the end
  when it was sent, never again at the old tool result;
- a view's marker is fixed the first time the view is replaced and names the labels that
  served it then; the chain of retired entries leads to the current code. A view once
  replaced stays replaced, so its old tool result never comes back.

Everything the outgoing copy holds is a pure function of the conversation the harness sends
and of this ledger, which the server keeps durably: a restarted rewriter, or a second one on
the same session, builds the same bytes. No I/O here: ``place`` gets a function that reads an
entry's current text, and the caller persists ``Ledger.to_json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from fresh_ls.core.model import View, ViewAssessment
from fresh_ls.core.projection import Entry, Omission, Projection
from fresh_ls.core.projection import marker_text as projection_marker_text


def refresh_heading(seq: int) -> str:
    """The first line of a refresh. Constant per refresh, so it never breaks a cache."""
    return f"[fresh-ls] R{seq}, current code (each entry: a header line, then its bytes)\n"


@dataclass(slots=True)
class SentEntry:
    """One entry as it was sent: enough to re-render it while current, and to retire it."""

    label: str
    unit_id: str
    path: str
    first_line: int
    last_line: int
    sha256: str
    kind: str
    what: str  # "method Cart.total", "text outside definitions", "whole file"
    head: str  # its header line, without the line feed
    name: str | None = None
    symbol_kind: str | None = None
    retired: bool = False
    successor: str | None = None  # the label that serves its unit now (None: none was sent)

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "unitId": self.unit_id,
            "path": self.path,
            "firstLine": self.first_line,
            "lastLine": self.last_line,
            "sha256": self.sha256,
            "kind": self.kind,
            "what": self.what,
            "head": self.head,
            "name": self.name,
            "symbolKind": self.symbol_kind,
            "retired": self.retired,
            "successor": self.successor,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SentEntry:
        return cls(
            label=d["label"],
            unit_id=d["unitId"],
            path=d["path"],
            first_line=d["firstLine"],
            last_line=d["lastLine"],
            sha256=d["sha256"],
            kind=d["kind"],
            what=d["what"],
            head=d["head"],
            name=d.get("name"),
            symbol_kind=d.get("symbolKind"),
            retired=bool(d.get("retired")),
            successor=d.get("successor"),
        )

    def contains(self, e: Entry) -> bool:
        return (
            self.path == e.path
            and self.first_line <= e.first_line
            and e.last_line <= self.last_line
        )

    def retired_line(self) -> str:
        """What stands where a retired entry stood: one line, fixed once written."""
        head = f"[{self.label}] {self.path}: changed since"
        if self.successor is not None:
            return f"{head}, current code under [{self.successor}]\n"
        return f"{head}; read it again if you need it\n"


@dataclass(slots=True)
class Refresh:
    seq: int
    after: str  # the tool-call id of the tool result it follows
    entries: list[SentEntry] = field(default_factory=list)

    @property
    def refresh_id(self) -> str:
        return f"R{self.seq}"

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "after": self.after,
            "entries": [e.to_json() for e in self.entries],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Refresh:
        return cls(d["seq"], d["after"], [SentEntry.from_json(e) for e in d["entries"]])


@dataclass(slots=True)
class Ledger:
    """One session's refreshes, in the order they were made, and its views' markers."""

    refreshes: list[Refresh] = field(default_factory=list)
    #: view id -> (marker text as first sent, the labels it names, and the units it says
    #: another view shows current: unit id -> that view's id)
    markers: dict[str, tuple[str, list[str], dict[str, str]]] = field(default_factory=dict)
    next_seq: int = 1
    #: view id -> its tool result re-rendered from current code, while that still holds
    #: (``fresh_ls.core.rerender``); a view is patched at most once, then moved
    patched: dict[str, str] = field(default_factory=dict)
    patched_ever: set[str] = field(default_factory=set)
    #: view id -> the first line of the view its marker replaces: the tool result is kept
    #: verbatim up to that line (its unchanged head), while those lines hold
    cuts: dict[str, int] = field(default_factory=dict)
    cut_ever: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {
            "nextSeq": self.next_seq,
            "patched": self.patched,
            "patchedEver": sorted(self.patched_ever),
            "cuts": self.cuts,
            "cutEver": sorted(self.cut_ever),
            "refreshes": [r.to_json() for r in self.refreshes],
            "markers": {
                v: {"text": t, "labels": ls, "refs": refs}
                for v, (t, ls, refs) in self.markers.items()
            },
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Ledger:
        return cls(
            refreshes=[Refresh.from_json(r) for r in d.get("refreshes", [])],
            markers={
                v: (m["text"], list(m["labels"]), dict(m.get("refs") or {}))
                for v, m in d.get("markers", {}).items()
            },
            next_seq=int(d.get("nextSeq", 1)),
            patched=dict(d.get("patched") or {}),
            patched_ever=set(d.get("patchedEver") or []),
            cuts={k: int(v) for k, v in (d.get("cuts") or {}).items()},
            cut_ever=set(d.get("cutEver") or []),
        )

    def replaced_views(self) -> set[str]:
        """Views that were replaced once: they stay replaced (sticky)."""
        return set(self.markers)

    def forget(self, view_ids: Iterable[str] | None) -> None:
        if view_ids is None:
            self.refreshes.clear()
            self.markers.clear()
            self.patched.clear()
            self.patched_ever.clear()
            self.cuts.clear()
            self.cut_ever.clear()
            return
        for v in view_ids:
            self.markers.pop(v, None)
            self.patched.pop(v, None)
            self.patched_ever.discard(v)
            self.cuts.pop(v, None)
            self.cut_ever.discard(v)


@dataclass(slots=True)
class PlacedRefresh:
    refresh_id: str
    after: str
    text: str


@dataclass(slots=True)
class Carried:
    """A live entry the request carries, with its current text (for the result and commit)."""

    sent: SentEntry
    text: str
    view_ids: list[str]
    status: str


@dataclass(slots=True)
class Placement:
    refreshes: list[PlacedRefresh]
    markers: dict[str, str]  # view id -> marker text
    carried: list[Carried]
    new_bytes: int  # bytes of the entries sent for the first time in this request


def _what(e: Entry) -> str:
    kinds = {"file": "whole file", "text": "text"}
    what = kinds.get(e.kind, f"{e.symbol_kind or 'symbol'} {e.name}")
    if e.part == "own lines":
        return f"{what}, own lines only"
    return what


def _head(label: str, e: Entry) -> str:
    return f"[{label}] {e.path} lines {e.first_line}-{e.last_line}, {e.bytes} bytes · {_what(e)}"


def shown_elsewhere(
    replaced: list[ViewAssessment], kept: list[ViewAssessment], ledger: Ledger
) -> dict[str, dict[str, str]]:
    """Per replaced view, its units whose current lines another view shows, current, in the
    request (unit id -> that view's id): the marker points there instead of sending them
    again. A view kept in place is fresh, so its lines are the disk's at the numbers it
    shows; if it goes stale in turn, its own marker leads on to the current code. A view
    whose marker is fixed keeps the references it was made with while their views are
    carried (else it is made anew)."""
    fresh = [k for k in kept if k.status == "fresh"]
    present = {k.view.view_id for k in kept} | {a.view.view_id for a in replaced}
    out: dict[str, dict[str, str]] = {}
    for a in replaced:
        fixed = ledger.markers.get(a.view.view_id)
        if fixed is not None and all(v in present for v in fixed[2].values()):
            if fixed[2]:
                out[a.view.view_id] = dict(fixed[2])
            continue
        mine: dict[str, str] = {}
        for ua in a.units:
            if ua.status not in ("fresh", "moved") or ua.current is None:
                continue
            cover = max(
                (
                    k
                    for k in fresh
                    if k.view.path == a.view.path
                    and k.view.shows(ua.current.first, ua.current.last)
                ),
                key=lambda k: k.view.seq,
                default=None,
            )
            if cover is not None:
                mine[ua.unit.unit_id] = cover.view.view_id
        if mine:
            out[a.view.view_id] = mine
    return out


def without_units(a: ViewAssessment, units: dict[str, str]) -> ViewAssessment:
    """``a`` without the units another view shows (see ``shown_elsewhere``)."""
    if not units:
        return a
    return ViewAssessment(a.view, a.status, [u for u in a.units if u.unit.unit_id not in units])


#: Where the current code is, under anchored placement: in a refresh after a later result.
IN_A_REFRESH = ("current code: {where}", "current code: {where}")


def marker_text(
    view: View,
    labels: list[str],
    omissions: list[Omission],
    shown: dict[str, list[tuple[int, int]]] | None = None,
) -> str:
    """The marker of a view under anchored placement: where its current code was sent (the
    labels, each in a refresh after a later tool result), which of its lines another tool
    result shows current, or why it is absent (``projection.marker_text``'s wording)."""
    note = ""
    if shown:
        parts = "; ".join(
            f"lines {', '.join(f'{a}-{b}' for a, b in spans)} in the result of {other}"
            for other, spans in sorted(shown.items())
        )
        note = f"; its unchanged code is shown current elsewhere: {parts}"
    return projection_marker_text(view, labels, omissions, IN_A_REFRESH, note)


def place(
    ledger: Ledger,
    projection: Projection,
    views: dict[str, View],
    *,
    after: str | None,
    present: set[str],
    current_text: Callable[[SentEntry], str | None],
    refs: dict[str, dict[str, str]] | None = None,
    heads: dict[str, str] | None = None,
) -> Placement:
    """Place ``projection`` (planned with ``policy: all`` over the views to replace) into
    the ledger, changing it in place, and say what the request carries.

    ``present``: the tool-call ids of the tool results in the request (a refresh whose
    ``after`` is gone went with it). ``current_text``: an entry's text on disk when its
    lines still hold exactly what was sent, else None.
    """
    live = [r for r in ledger.refreshes if r.after in present]
    serving: list[tuple[SentEntry, str]] = []  # live, current entries and their text
    to_retire: dict[str, list[SentEntry]] = {}  # unit id -> its live entries that went stale
    for r in live:
        for s in r.entries:
            if s.retired:
                continue
            text = current_text(s)
            if text is None:
                to_retire.setdefault(s.unit_id, []).append(s)
            else:
                serving.append((s, text))
    target: Refresh | None = None
    if after is not None:
        target = next((r for r in ledger.refreshes if r.after == after), None)
    label_of: dict[str, str] = {}
    texts: dict[str, str] = {s.label: t for s, t in serving}
    views_of: dict[str, list[str]] = {}
    status_of: dict[str, str] = {}
    new_bytes = 0
    for e in sorted(projection.entries, key=lambda e: (e.path, e.first_line, e.last_line)):
        found = next(
            (
                s
                for s, _ in serving
                if s.unit_id == e.unit_id
                and (s.path, s.first_line, s.last_line, s.sha256)
                == (e.path, e.first_line, e.last_line, e.sha256)
            ),
            None,
        ) or next((s for s, _ in serving if s.contains(e)), None)
        if found is None:
            if after is None:
                continue  # nowhere to put it; the view's marker says it is not included
            if target is None:
                target = Refresh(ledger.next_seq, after)
                ledger.next_seq += 1
                ledger.refreshes.append(target)
            label = f"R{target.seq}.{len(target.entries) + 1}"
            found = SentEntry(
                label=label,
                unit_id=e.unit_id,
                path=e.path,
                first_line=e.first_line,
                last_line=e.last_line,
                sha256=e.sha256,
                kind=e.kind,
                what=_what(e),
                head=_head(label, e),
                name=e.name,
                symbol_kind=e.symbol_kind,
            )
            target.entries.append(found)
            serving.append((found, e.text))
            texts[label] = e.text
            new_bytes += len(found.head.encode("utf-8")) + 1 + e.bytes
            for old in to_retire.get(e.unit_id, []):
                old.successor = label
        label_of[e.unit_id] = found.label
        views_of.setdefault(found.label, []).extend(e.view_ids)
        status_of[found.label] = e.status
    for stale in to_retire.values():
        for s in stale:
            s.retired = True
    # markers: fixed when first made, while the labels they name are still carried
    carried_labels = {s.label for r in ledger.refreshes if r.after in present for s in r.entries}
    if target is not None:
        carried_labels |= {s.label for s in target.entries}
    chains: dict[str, str] = {}
    for r in ledger.refreshes:
        for s in r.entries:
            if s.successor is not None:
                chains[s.label] = s.successor
    omitted_of: dict[str, list[Omission]] = {}
    for om in projection.omitted:
        for v in om.view_ids:
            omitted_of.setdefault(v, []).append(om)
    served_of: dict[str, list[str]] = {}
    for e in projection.entries:
        for v in e.view_ids:
            served_of.setdefault(v, []).append(label_of.get(e.unit_id, ""))
    markers: dict[str, str] = {}
    refs = refs or {}
    for m in projection.markers:
        labels = sorted({x for x in served_of.get(m.view_id, []) if x})
        mine = refs.get(m.view_id, {})
        kept = ledger.markers.get(m.view_id)
        if (
            kept is not None
            and kept[2] == mine
            and _still_leads(kept[1], labels, chains, carried_labels)
        ):
            markers[m.view_id] = kept[0]
            continue
        view = views[m.view_id]
        head = (heads or {}).get(m.view_id)
        cut = ledger.cuts.get(m.view_id)
        if head is not None and cut is not None:
            # the unchanged head of the result stays; the marker names only the rest
            rest = dataclasses.replace(view, first_line=cut)
            omissions = omitted_of.get(m.view_id, [])
            text = head + marker_text(rest, labels, omissions, _spans(view, mine))
        else:
            text = marker_text(view, labels, omitted_of.get(m.view_id, []), _spans(view, mine))
        ledger.markers[m.view_id] = (text, labels, dict(mine))
        markers[m.view_id] = text
    placed: list[PlacedRefresh] = []
    carried: list[Carried] = []
    for r in ledger.refreshes:
        if r.after not in present and r is not target:
            continue
        if not r.entries:
            continue
        parts = [refresh_heading(r.seq)]
        for s in r.entries:
            if s.retired:
                parts.append(s.retired_line())
                continue
            text = texts[s.label] if s.label in texts else current_text(s)
            if text is None:  # cannot happen: non-retired live entries were just checked
                raise AssertionError(f"{s.label} is neither current nor retired")
            parts.append(f"{s.head}\n{text}{'' if text.endswith(chr(10)) else chr(10)}")
            carried.append(
                Carried(s, text, views_of.get(s.label, []), status_of.get(s.label, "fresh"))
            )
        placed.append(PlacedRefresh(r.refresh_id, r.after, "".join(parts)))
    return Placement(placed, markers, carried, new_bytes)


def _spans(view: View, refs: dict[str, str]) -> dict[str, list[tuple[int, int]]]:
    """The observed lines of each referenced unit, by the view that shows them."""
    out: dict[str, list[tuple[int, int]]] = {}
    for u in view.units:
        other = refs.get(u.unit_id)
        if other is not None:
            out.setdefault(other, []).append((u.obs_first, u.obs_last))
    return out


def _still_leads(
    named: list[str], serving: list[str], chains: dict[str, str], carried: set[str]
) -> bool:
    """A kept marker still holds when every label it names is carried, and each label that
    serves the view now is one of them or reached from one by the chain of successors."""
    if any(x not in carried for x in named):
        return False
    reach: set[str] = set()
    for x in named:
        seen = x
        while True:
            reach.add(seen)
            nxt = chains.get(seen)
            if nxt is None or nxt in reach:
                break
            seen = nxt
    return all(x in reach for x in serving)
