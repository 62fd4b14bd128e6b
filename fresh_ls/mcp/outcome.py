"""What a ``fresh-ls mcp`` tool result says to a program: one attrs class per tool, the
structured content of every result built from it, and the JSON Schema each tool declares as
its ``outputSchema``, derived from the same class (one source of truth for the shape).

Every result carries ``text``, ``verdict``, ``reason``, ``retryable`` and ``path`` first,
then the tool's own fields; every key is always present (null where it does not apply), so
a client can read any result the same way. Units, stale views and gate entries are the
protocol's own classes (``fresh_ls.protocol``), as ``fresh/checkEdit``, ``fresh/stale`` and
``fresh/gate`` answered them.

``text`` is the result's text as its content block carries it. It is here because Claude
Code (measured with 2.1.332) hands the model the JSON of a successful result's structured
content *instead of* its text blocks; with ``text`` first, what the model reads begins with
the same readable text as before. On an error result (a deny) Claude Code shows the text
blocks, as before.
"""

from __future__ import annotations

import enum
import types
from functools import cache
from typing import Any, Union, get_args, get_origin, get_type_hints

import attrs
import cattrs
from cattrs.gen import make_dict_unstructure_fn, override

from fresh_ls import protocol as proto


class ToolVerdict(enum.StrEnum):
    """``allow``: the call did what it was asked (for ``read``, ``stale`` and ``gate``:
    answered). ``deny``: the guard or the tools refused a write, nothing was written.
    ``error``: the call could not be carried out (bad path, missing file, no server)."""

    ALLOW = "allow"
    DENY = "deny"
    ERROR = "error"


class ToolReason(enum.StrEnum):
    """``fresh/checkEdit``'s reasons, and two of the MCP tools' own: ``protected`` (a path
    the tools never write: version control or fresh-ls state) and ``busy`` (another writer
    held the file's lock for the whole wait)."""

    KNOWN = "known"
    CHANGED = "changed"
    UNSEEN = "unseen"
    AMBIGUOUS = "ambiguous"
    MISSING = "missing"
    PROTECTED = "protected"
    BUSY = "busy"


@attrs.frozen(kw_only=True)
class Outcome:
    """The fields every tool's result has."""

    #: the result's text, as its content block carries it (what the model reads)
    text: str
    verdict: ToolVerdict
    #: why a write was allowed or denied (``edit``, ``write``); null otherwise
    reason: ToolReason | None = None
    #: whether the same call can succeed now (``busy``: in a moment)
    retryable: bool = False
    #: the path as the tools resolved it (relative to its root), null when none was given
    path: str | None = None


@attrs.frozen(kw_only=True)
class ReadOutcome(Outcome):
    first_line: int | None = None
    last_line: int | None = None
    total_lines: int | None = None
    #: the view the read recorded; null: too large for fresh-ls to track (or an error)
    view_id: str | None = None


@attrs.frozen(kw_only=True)
class EditOutcome(Outcome):
    """On ``allow``: the lines the new text spans now and the ``editResult`` view recorded
    of them. On a ``changed`` or ``unseen`` deny: ``fresh/checkEdit``'s units (status,
    changedBy, diff, known) and the view its current code was recorded as."""

    units: tuple[proto.CheckEditUnit, ...] = ()
    view_id: str | None = None
    first_line: int | None = None
    last_line: int | None = None


@attrs.frozen(kw_only=True)
class WriteOutcome(Outcome):
    """As ``EditOutcome`` for a deny; on ``allow``: whether the file was created, its
    lines and bytes."""

    units: tuple[proto.CheckEditUnit, ...] = ()
    view_id: str | None = None
    created: bool | None = None
    lines: int | None = None
    bytes: int | None = None


@attrs.frozen(kw_only=True)
class StaleOutcome(Outcome):
    #: the session's views that are not ``fresh``, as ``fresh/stale`` answered them
    views: tuple[proto.StaleView, ...] = ()


@attrs.frozen(kw_only=True)
class GateOutcome(Outcome):
    proceed: bool | None = None
    stale: tuple[proto.GateStaleView, ...] = ()


#: tool name -> the class of its results
OUTCOMES: dict[str, type[Outcome]] = {
    "read": ReadOutcome,
    "edit": EditOutcome,
    "write": WriteOutcome,
    "stale": StaleOutcome,
    "gate": GateOutcome,
}


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter()
    for e in (ToolVerdict, ToolReason):
        conv.register_unstructure_hook(e, lambda m: m.value)
    conv.register_unstructure_hook_factory(
        lambda t: get_origin(t) is tuple, lambda t: lambda seq: [conv.unstructure(x) for x in seq]
    )
    conv.register_unstructure_hook_factory(
        lambda t: isinstance(t, type) and attrs.has(t) and t.__module__ == proto.__name__,
        lambda t: proto.unstructure,
    )

    def factory(cls: type) -> Any:
        renames = {a.name: override(rename=proto.camel(a.name)) for a in attrs.fields(cls)}
        return make_dict_unstructure_fn(cls, conv, **renames)  # type: ignore[arg-type]

    conv.register_unstructure_hook_factory(
        lambda t: isinstance(t, type) and issubclass(t, Outcome), factory
    )
    return conv


_CONVERTER = _make_converter()


def structured(outcome: Outcome) -> dict[str, Any]:
    """The result's ``structuredContent``: every field, camelCase, ``text`` first."""
    out: dict[str, Any] = _CONVERTER.unstructure(outcome)
    return out


def units_of(raw: list[dict[str, Any]]) -> tuple[proto.CheckEditUnit, ...]:
    """``fresh/checkEdit``'s units (JSON) as the protocol's class: a server answering some
    other shape fails here, loudly, rather than in a client."""
    return tuple(proto.CONVERTER.structure(u, proto.CheckEditUnit) for u in raw)


def parse(cls: type[Any], raw: dict[str, Any]) -> Any:
    return proto.CONVERTER.structure(raw, cls)


# -- JSON Schema ----------------------------------------------------------------------------


def _schema_of(t: Any) -> dict[str, Any]:
    origin = get_origin(t)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(t) if a is not type(None)]
        inner = _schema_of(args[0]) if len(args) == 1 else {"anyOf": [_schema_of(a) for a in args]}
        return {"anyOf": [inner, {"type": "null"}]}
    if origin in (list, tuple):
        return {"type": "array", "items": _schema_of(get_args(t)[0])}
    if isinstance(t, type) and issubclass(t, enum.Enum):
        return {"type": "string", "enum": [m.value for m in t]}
    if isinstance(t, type) and attrs.has(t):
        return _class_schema(t)
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if t in simple:
        return {"type": simple[t]}
    raise TypeError(f"no JSON Schema for {t!r}")


def _class_schema(cls: type) -> dict[str, Any]:
    """An object with every field; required: all of an ``Outcome`` (every key is always
    sent), and a protocol class's fields without a default (``OMITTED`` ones may be
    absent)."""
    hints = get_type_hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    every = issubclass(cls, Outcome)
    for a in attrs.fields(cls):
        key = proto.camel(a.name)
        props[key] = _schema_of(hints[a.name])
        if every or a.default is attrs.NOTHING:
            required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    doc = (cls.__doc__ or "").strip()
    if doc and not doc.startswith(cls.__name__ + "("):
        out["description"] = " ".join(doc.split())
    return out


@cache
def output_schema(tool: str) -> dict[str, Any]:
    """The ``outputSchema`` ``tool`` declares: its outcome class as JSON Schema, inline
    (no ``$ref``: some clients resolve none)."""
    return _class_schema(OUTCOMES[tool])
