"""Shape core results into the contract's typed results (``fresh_ls.protocol``).

The one place that turns core objects (views, assessments, projections) into protocol
objects, kept apart from the core so the core speaks plain Python and from the server so
the CLI, the engine and tests share one definition of every result. ``protocol.CONVERTER``
turns those objects into JSON values (camelCase, optional keys omitted).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import TypeVar

import attrs

from fresh_ls import protocol as proto
from fresh_ls.core.ledger import Placement
from fresh_ls.core.model import View, ViewAssessment
from fresh_ls.core.projection import Entry as CoreEntry
from fresh_ls.core.projection import Marker as CoreMarker
from fresh_ls.core.projection import Omission as CoreOmission
from fresh_ls.core.projection import Projection
from fresh_ls.core.text import utf8_len

# The core's statuses, kinds and reasons are plain strings; these look their members up
# by value (a dict lookup: ``Enum(value)`` costs a call through the metaclass per field).
_STATUS: dict[str, proto.Status] = {m.value: m for m in proto.Status}
_UNIT_KIND: dict[str, proto.UnitKind] = {m.value: m for m in proto.UnitKind}
_VIEW_KIND: dict[str, proto.ViewKind] = {m.value: m for m in proto.ViewKind}
_REASON: dict[str, proto.OmissionReason] = {m.value: m for m in proto.OmissionReason}


def status(value: str) -> proto.Status:
    """The contract's status of a core status string."""
    return _STATUS[value]


def statuses_json(statuses: list[tuple[str, str]]) -> Encoded:
    """A ``StatusesResult`` of (view id, core status) pairs, as its JSON text: asked before
    every proxied model request, so no ``ViewStatus`` object is built and walked per view
    (for 100 views that was most of the server's time). Each status is the contract's
    member's value (an unknown one fails here, not at a client).

    The text is ``json.dumps`` of ``{"views": [{"viewId": ..., "status": ...}, ...]}``,
    written piece by piece: each view id through the encoder's own string escape, each
    status spelled once (``_STATUS_JSON``). ``json.dumps`` built and walked a dict per
    view, half of the server's time on ``fresh/statuses`` for 100 views (96 µs of 200)."""
    quote, spelled = _quote, _STATUS_JSON
    return Encoded(
        '{"views": ['
        + ", ".join([f'{{"viewId": {quote(v)}, "status": {spelled[s]}}}' for v, s in statuses])
        + "]}"
    )


#: Each core status as ``json.dumps`` spells its member's value.
_STATUS_JSON: dict[str, str] = {value: json.dumps(m.value) for value, m in _STATUS.items()}
#: How ``json.dumps`` (``ensure_ascii``) spells a string.
_quote: Callable[[str], str] = encode_basestring_ascii


def observe_result(view: View, assessment: ViewAssessment) -> proto.ObserveResult:
    return proto.ObserveResult(
        view_id=view.view_id,
        path=view.path,
        first_line=view.first_line,
        last_line=view.last_line,
        kind=_VIEW_KIND[view.kind],
        status=_STATUS[assessment.status],
        units=tuple(
            proto.ObservedUnit(
                unit_id=u.unit_id,
                kind=_UNIT_KIND[u.kind],
                name=u.name,
                symbol_kind=u.symbol_kind,
                first_line=u.def_first,
                last_line=u.def_last,
            )
            for u in view.units
        ),
        ranges=ranges_of(view),
    )


def stale_view(
    a: ViewAssessment,
    editor_dirty: bool,
    changed_by: list[str | None],
    diffs: list[str | None],
) -> proto.StaleView:
    """Per unit, ``changed_by`` holds who made the last change to it (or None) and
    ``diffs`` its unified diff (``staleness.diff_of``; None unless ``changed``)."""
    v = a.view
    units = []
    for ua, by, diff in zip(a.units, changed_by, diffs, strict=True):
        u = ua.unit
        status = _STATUS[ua.status]
        units.append(
            proto.StaleUnit(
                unit_id=u.unit_id,
                kind=_UNIT_KIND[u.kind],
                name=u.name,
                symbol_kind=u.symbol_kind,
                status=status,
                observed=proto.LineRange(first_line=u.obs_first, last_line=u.obs_last),
                current=(
                    proto.LineRange(first_line=ua.current.first, last_line=ua.current.last)
                    if ua.current
                    else None
                ),
                diff=diff if status is proto.Status.CHANGED else None,
                changed_by=by if status is not proto.Status.FRESH else None,
            )
        )
    return proto.StaleView(
        view_id=v.view_id,
        path=v.path,
        kind=_VIEW_KIND[v.kind],
        status=_STATUS[a.status],
        editor_dirty=editor_dirty,
        observed=proto.ObservedRange(
            first_line=v.first_line, last_line=v.last_line, sha256=v.observed_sha256
        ),
        units=tuple(units),
        observed_at=v.observed_at,
        ranges=ranges_of(v),
    )


def stale_view_json(view: proto.StaleView) -> str:
    """One view's entry of ``fresh/stale``'s answer as JSON text (``stale_json`` joins
    them)."""
    return json.dumps(proto.unstructure(view))


def stale_json(views: list[str]) -> Encoded:
    """A ``StaleResult`` of views already encoded (``stale_view_json``): the very text
    ``json.dumps`` gives of the unstructured result, since ``views`` is its one key."""
    return Encoded('{"views": [' + ", ".join(views) + "]}")


def ranges_of(view: View) -> tuple[proto.LineRange, ...] | None:
    """A sparse view's ranges on the wire (None for a range view: the key is left out)."""
    if view.ranges is None:
        return None
    return tuple(proto.LineRange(first_line=a, last_line=b) for a, b in view.ranges)


class Encoded(str):
    """A result already in its wire encoding (JSON text), sent as it is.

    A ``policy: all`` projection is half a megabyte; turning it into JSON on every answer
    (pygls walks it with cattrs, then dumps it) cost about 10 ms, three times the planning.
    A cached projection is encoded once; each answer only puts its ``planId`` in front."""


#: What ``json.dumps`` of a body without a plan id starts with; cut off and replaced by
#: each answer's own ``planId``.
_NO_PLAN = '{"planId": "", '


def project_result(plan_id: str, p: Projection) -> proto.ProjectResult:
    """The typed result of ``p`` under ``plan_id``. The body is built once per projection
    (a cached projection is answered again and again) and shared by every answer: it is
    frozen, its arrays tuples, so a caller cannot change the next answer."""
    return attrs.evolve(_body(p), plan_id=plan_id)


#: The keys of a projection's answer a client may ask to go without (``leave_out``), in
#: their order in the answer: each one's content is also in the others (``rendered`` is the
#: entries' headers and texts; ``entries`` are framed in it, the contract says how) or is
#: not read by every client (``omitted``).
LEAVABLE = ("entries", "omitted", "rendered")


def project_json(plan_id: str, p: Projection, leave_out: frozenset[str] = frozenset()) -> Encoded:
    """``project_result`` as JSON text: byte for byte ``json.dumps`` of its unstructured
    form, with the projection's own part unstructured and encoded once. ``leave_out``:
    keys of ``LEAVABLE`` a client said it does not read (``server.connection``: the
    experimental capability ``freshLs.projectLeavesOut``); the rest is the same bytes.

    The parts are kept on the projection (a cached projection is answered again and
    again) and each answer is one join of them behind its own ``planId``; ``rendered``,
    the largest string to encode, is encoded only for an answer that carries it."""
    if p.wire_parts is None:
        p.wire_parts = _ITEMS.body_parts(p)
    pieces = ['{"planId": ', json.dumps(plan_id)]
    for key, part in p.wire_parts:
        if key not in leave_out:
            pieces += (", ", part)
    if "rendered" not in leave_out:
        if p.wire_rendered is None:
            p.wire_rendered = _rendered_part(p)
        pieces += (", ", p.wire_rendered)
    pieces.append("}")
    return Encoded("".join(pieces))


def read_project(text: str) -> proto.ProjectResult:
    """The typed result of an encoded ``fresh/project`` answer (``Engine.project`` answers
    the JSON the server sends): for in-process callers that read its fields."""
    return proto.parse(proto.ProjectResult, json.loads(text), "result")


def _body(p: Projection) -> proto.ProjectResult:
    if p.wire is None:
        p.wire = _project_body(p)
    body: proto.ProjectResult = p.wire
    return body


def anchored_result(
    plan_id: str, p: Projection, placed: Placement, dirty: Callable[[str], bool]
) -> proto.ProjectResult:
    """The typed result of ``placement: anchored``: ``entries`` are the live entries the
    request carries (their headers as sent), ``rendered`` is empty (nothing goes at the
    end, so ``usedBytes`` is 0), ``refreshes`` say what goes after which tool result and
    ``refreshBytes`` counts the entries sent for the first time."""
    body = _body(p)
    entries = tuple(
        proto.Entry(
            unit_id=c.sent.unit_id,
            label=c.sent.label,
            view_ids=tuple(c.view_ids),
            path=c.sent.path,
            first_line=c.sent.first_line,
            last_line=c.sent.last_line,
            kind=_UNIT_KIND[c.sent.kind],
            name=c.sent.name,
            symbol_kind=c.sent.symbol_kind,
            bytes=utf8_len(c.text),
            sha256=c.sent.sha256,
            status=_STATUS[c.status],
            editor_dirty=dirty(c.sent.path),
            header=c.sent.head,
            text=c.text,
        )
        for c in placed.carried
    )
    return proto.ProjectResult(
        plan_id=plan_id,
        entries=entries,
        omitted=body.omitted,
        markers=tuple(proto.Marker(view_id=v, text=t) for v, t in sorted(placed.markers.items())),
        used_bytes=0,  # the contract's: the size of ``rendered``, which is empty here
        budget_bytes=p.budget_bytes,
        rendered="",
        refresh_bytes=placed.new_bytes,
        placement=proto.Placement.ANCHORED,
        refreshes=tuple(
            proto.Refresh(refresh_id=r.refresh_id, after=r.after, text=r.text)
            for r in placed.refreshes
        ),
    )


def _entry(e: CoreEntry) -> proto.Entry:
    return proto.Entry(
        unit_id=e.unit_id,
        label=e.label,
        view_ids=tuple(e.view_ids),
        path=e.path,
        first_line=e.first_line,
        last_line=e.last_line,
        kind=_UNIT_KIND[e.kind],
        name=e.name,
        symbol_kind=e.symbol_kind,
        bytes=e.bytes,
        sha256=e.sha256,
        status=_STATUS[e.status],
        editor_dirty=e.editor_dirty,
        header=e.header,
        text=e.text,
    )


def _omission(o: CoreOmission) -> proto.Omission:
    return proto.Omission(
        unit_id=o.unit_id,
        view_ids=tuple(o.view_ids),
        path=o.path,
        name=o.name,
        reason=_REASON[o.reason],
        bytes=o.bytes,
    )


def _marker(m: CoreMarker) -> proto.Marker:
    return proto.Marker(view_id=m.view_id, text=m.text)


def _project_body(p: Projection) -> proto.ProjectResult:
    return proto.ProjectResult(
        plan_id="",
        entries=tuple(_entry(e) for e in p.entries),
        omitted=tuple(_omission(o) for o in p.omitted),
        markers=tuple(_marker(m) for m in p.markers),
        used_bytes=p.used_bytes,
        budget_bytes=p.budget_bytes,
        rendered=p.rendered,
    )


T = TypeVar("T")

#: What the answer's arrays look like when empty, in the order the answer has its keys.
_EMPTY_ARRAYS = '"entries": [], "omitted": [], "markers": [], '
#: How the typed result with an empty ``rendered`` ends at the end placement.
_NO_RENDERED = ', "rendered": ""}'


class ItemJson:
    """The JSON text of a projection's answer, built from the JSON of each entry, omission
    and marker, kept by their value.

    After an edit of one file a ``policy: all`` answer is planned anew, but most of its
    500 entries, omissions and markers are those of the answer before, value for value
    (their texts the very strings ``SourceSlices`` keeps); encoding the whole half megabyte
    again cost 3 ms. ``json.dumps`` of a list is ``[`` and its items' ``json.dumps`` joined
    by ``", "``, then ``]``, so an answer assembled from kept items is byte for byte the
    ``json.dumps`` of its unstructured form (``tests/server/test_encoded_results.py``)."""

    MAX_ITEMS = 1 << 14

    def __init__(self) -> None:
        self._json: dict[tuple[object, ...], str] = {}

    def _item(self, key: tuple[object, ...], typed: Callable[[T], object], item: T) -> str:
        found = self._json.get(key)
        if found is None:
            if len(self._json) >= self.MAX_ITEMS:
                self._json.clear()
            found = self._json[key] = json.dumps(proto.unstructure(typed(item)))
        return found

    def body_parts(self, p: Projection) -> list[tuple[str, str]]:
        """The answer's keys after ``planId`` but ``rendered`` (``_rendered_part``), each
        as ``"key": value`` with its key (``""`` for ``markers``, ``usedBytes`` and
        ``budgetBytes`` together: never left out), in the answer's order; from kept
        items."""
        entries = ", ".join(
            self._item(
                ("e", e.unit_id, e.path, e.first_line, e.last_line, e.kind, e.status, e.name,
                 e.symbol_kind, tuple(e.view_ids), e.editor_dirty, e.part, e.text),
                _entry, e,
            )
            for e in p.entries
        )  # fmt: skip
        omitted = ", ".join(
            self._item(
                ("o", o.unit_id, tuple(o.view_ids), o.path, o.name, o.reason, o.bytes),
                _omission,
                o,
            )
            for o in p.omitted
        )
        markers = ", ".join(self._item(("m", m.view_id, m.text), _marker, m) for m in p.markers)
        rest = proto.ProjectResult(
            plan_id="",
            entries=(),
            omitted=(),
            markers=(),
            used_bytes=p.used_bytes,
            budget_bytes=p.budget_bytes,
            rendered="",
        )
        text = json.dumps(proto.unstructure(rest))
        # The keys stand in the typed result's order: the arrays after ``planId``,
        # ``rendered`` last (the fields after it are absent at the end placement).
        assert text.startswith(_NO_PLAN + _EMPTY_ARRAYS) and text.endswith(_NO_RENDERED)
        sizes = text[len(_NO_PLAN) + len(_EMPTY_ARRAYS) : -len(_NO_RENDERED)]
        return [
            ("entries", f'"entries": [{entries}]'),
            ("omitted", f'"omitted": [{omitted}]'),
            ("", f'"markers": [{markers}], {sizes}'),
        ]

    def body_json(self, p: Projection) -> str:
        """``json.dumps(proto.unstructure(_project_body(p)))``, from kept items."""
        parts = [part for _, part in self.body_parts(p)]
        return _NO_PLAN + ", ".join([*parts, _rendered_part(p)]) + "}"


def _rendered_part(p: Projection) -> str:
    return '"rendered": ' + json.dumps(p.rendered)


_ITEMS = ItemJson()
