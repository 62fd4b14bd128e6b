"""Shape core results into the contract's JSON objects (camelCase, optional keys omitted).

Kept apart from the core so the core speaks Python and from the server so the CLI, the
engine and tests share one definition of every result.
"""

from __future__ import annotations

import json
from typing import Any

from fresh_ls.core.model import View, ViewAssessment
from fresh_ls.core.projection import Projection


def _named(out: dict[str, Any], name: str | None, symbol_kind: str | None) -> dict[str, Any]:
    if name is not None:
        out["name"] = name
    if symbol_kind is not None:
        out["symbolKind"] = symbol_kind
    return out


def observe_result(view: View, assessment: ViewAssessment) -> dict[str, Any]:
    units = []
    for u in view.units:
        unit: dict[str, Any] = {"unitId": u.unit_id, "kind": u.kind}
        _named(unit, u.name, u.symbol_kind)
        unit["firstLine"], unit["lastLine"] = u.def_first, u.def_last
        units.append(unit)
    return {
        "viewId": view.view_id,
        "path": view.path,
        "firstLine": view.first_line,
        "lastLine": view.last_line,
        "kind": view.kind,
        "status": assessment.status,
        "units": units,
    }


def stale_view(
    a: ViewAssessment, editor_dirty: bool, changed_by: list[str | None]
) -> dict[str, Any]:
    """``changed_by`` holds, per unit, who made the last change to it (or None)."""
    v = a.view
    units = []
    for ua, by in zip(a.units, changed_by, strict=True):
        u = ua.unit
        unit: dict[str, Any] = {"unitId": u.unit_id, "kind": u.kind}
        _named(unit, u.name, u.symbol_kind)
        unit["status"] = ua.status
        unit["observed"] = {"firstLine": u.obs_first, "lastLine": u.obs_last}
        unit["current"] = (
            {"firstLine": ua.current.first, "lastLine": ua.current.last} if ua.current else None
        )
        unit["diff"] = ua.diff if ua.status == "changed" else None
        unit["changedBy"] = by if ua.status != "fresh" else None
        units.append(unit)
    return {
        "viewId": v.view_id,
        "path": v.path,
        "kind": v.kind,
        "status": a.status,
        "editorDirty": editor_dirty,
        "observed": {
            "firstLine": v.first_line,
            "lastLine": v.last_line,
            "sha256": v.observed_sha256,
        },
        "units": units,
    }


class Encoded(str):
    """A result already in its wire encoding (JSON text), sent as it is.

    A ``policy: all`` projection is half a megabyte; turning that dict into JSON on every
    answer (pygls walks it with cattrs, then dumps it) cost about 10 ms, three times the
    planning. A cached projection is encoded once; each answer only puts its ``planId``
    in front."""


def project_json(plan_id: str, p: Projection) -> Encoded:
    """``project_result`` as JSON text: the same object, byte for byte what ``json.dumps``
    gives for it, with the projection's own part encoded once."""
    if p.wire_json is None:
        if p.wire is None:
            p.wire = _project_body(p)
        p.wire_json = json.dumps(p.wire)[1:]
    return Encoded('{"planId": ' + json.dumps(plan_id) + ", " + p.wire_json)


def project_result(plan_id: str, p: Projection) -> dict[str, Any]:
    """The wire shape of ``p`` under ``plan_id``. The shape is built once per projection
    (a cached projection is answered again and again) and copied for each answer, so a
    caller that changes its answer cannot change the next one."""
    if p.wire is None:
        p.wire = _project_body(p)
    body = p.wire
    return {
        "planId": plan_id,
        "entries": [{**e, "viewIds": list(e["viewIds"])} for e in body["entries"]],
        "omitted": [{**o, "viewIds": list(o["viewIds"])} for o in body["omitted"]],
        "markers": [dict(m) for m in body["markers"]],
        "usedBytes": body["usedBytes"],
        "budgetBytes": body["budgetBytes"],
        "rendered": body["rendered"],
    }


def _project_body(p: Projection) -> dict[str, Any]:
    entries = []
    for e in p.entries:
        entry: dict[str, Any] = {
            "unitId": e.unit_id,
            "label": e.label,
            "viewIds": list(e.view_ids),
            "path": e.path,
            "firstLine": e.first_line,
            "lastLine": e.last_line,
            "kind": e.kind,
        }
        _named(entry, e.name, e.symbol_kind)
        entry.update(
            bytes=e.bytes,
            sha256=e.sha256,
            status=e.status,
            editorDirty=e.editor_dirty,
            header=e.header,
            text=e.text,
        )
        entries.append(entry)
    omitted = []
    for o in p.omitted:
        om: dict[str, Any] = {"unitId": o.unit_id, "viewIds": list(o.view_ids), "path": o.path}
        if o.name is not None:
            om["name"] = o.name
        om["reason"] = o.reason
        if o.bytes is not None:
            om["bytes"] = o.bytes
        omitted.append(om)
    return {
        "entries": entries,
        "omitted": omitted,
        "markers": [{"viewId": m.view_id, "text": m.text} for m in p.markers],
        "usedBytes": p.used_bytes,
        "budgetBytes": p.budget_bytes,
        "rendered": p.rendered,
    }
