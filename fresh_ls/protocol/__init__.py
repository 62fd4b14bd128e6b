"""The wire contract (PROTOCOL.md v1.3) as typed Python: one attrs class per params, result
and notification, the method names, the closed sets as enums, and ONE converter.

Python speaks snake_case; the wire speaks camelCase. Every class here goes through the same
cattrs hooks (``_structure_factory`` / ``_unstructure_factory``), which rename each field
with ``camel`` and leave out the optional keys the contract omits when they are None
(fields with ``metadata=OMITTED``). Structuring is strict: cattrs would turn ``"3"``
into ``3`` and ``"abc"`` into ``['a', 'b', 'c']``; a harness that sends those has a bug it
should hear about, so only the JSON types the contract names are accepted and every failure
becomes ``InvalidParams`` (-32602) naming the field in its wire spelling.

Results are frozen, their arrays tuples: a cached projection is answered again and again
from the same objects, so no caller can change the next answer.

``schema()`` exports all of it as JSON Schema (``python -P -m fresh_ls.protocol --schema``);
``fresh_ls/protocol/protocol.schema.json`` is that export, committed, and the VS Code extension's
``protocol.generated.ts`` is generated from it (``tools/gen_ts.py``).
"""

from __future__ import annotations

import enum
import json
import sys
import types
from collections.abc import Callable
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

import attrs
import cattrs
from cattrs import transform_error
from cattrs.gen import make_dict_structure_fn, override

from fresh_ls.core.paths import path_too_long
from fresh_ls.core.sources import MAX_FILE_BYTES
from fresh_ls.errors import (
    FILE_UNREADABLE,
    INVALID_PARAMS,
    PATH_OUTSIDE_ROOT,
    UNAUTHORIZED,
    UNKNOWN_ID,
    InvalidParams,
)

VERSION = "1.3"

# -- method names ---------------------------------------------------------------------------

#: The names, generated from the tables below into a module free of imports, so the clients
#: and the CLI name methods without loading this one (``fresh_ls.protocol.python``).
from fresh_ls.methods import *  # noqa: E402, F403 (every name, whatever the table holds)

#: Error codes of the contract, by the name the extension uses.
ERROR_CODES: dict[str, int] = {
    "invalidParams": INVALID_PARAMS,
    "outsideRoot": PATH_OUTSIDE_ROOT,
    "fileUnreadable": FILE_UNREADABLE,
    "unknownView": UNKNOWN_ID,
    "unauthorized": UNAUTHORIZED,
}

# -- closed sets ----------------------------------------------------------------------------


class Status(enum.StrEnum):
    """Worst last: a view's status is the worst of its units' (``STATUS_ORDER``)."""

    FRESH = "fresh"
    MOVED = "moved"
    CHANGED = "changed"
    AMBIGUOUS = "ambiguous"
    DELETED = "deleted"
    UNREADABLE = "unreadable"


class UnitKind(enum.StrEnum):
    SYMBOL = "symbol"
    TEXT = "text"
    FILE = "file"


class ViewKind(enum.StrEnum):
    READ = "read"
    EDIT_RESULT = "editResult"


class Policy(enum.StrEnum):
    STALE = "stale"
    ALL = "all"


class Placement(enum.StrEnum):
    """Where current code goes (a fresh-ls addition to ``fresh/project``): ``end``, the
    v1.1 behaviour, appends ``rendered`` after the newest message of every request;
    ``anchored`` sends each piece of current code once, as a refresh after the newest tool
    result, and carries it there while it is current (``docs/protocol.md``)."""

    END = "end"
    ANCHORED = "anchored"


class OmissionReason(enum.StrEnum):
    OVER_BUDGET = "over-budget"
    AMBIGUOUS = "ambiguous"
    DELETED = "deleted"
    UNREADABLE = "unreadable"


class Verdict(enum.StrEnum):
    ALLOW = "allow"
    DENY = "deny"


class CheckEditReason(enum.StrEnum):
    KNOWN = "known"
    CHANGED = "changed"
    UNSEEN = "unseen"
    AMBIGUOUS = "ambiguous"
    MISSING = "missing"


#: ``changedBy`` is open (``"session:<id>"``); these are its fixed values.
CHANGED_BY_SELF = "self"
CHANGED_BY_EDITOR = "editor"
CHANGED_BY_OUTSIDE = "outside"

ENUMS: tuple[type[enum.StrEnum], ...] = (
    Status, UnitKind, ViewKind, Policy, Placement, OmissionReason, Verdict, CheckEditReason
)  # fmt: skip

# -- field helpers --------------------------------------------------------------------------

#: metadata: the key is left out of the wire object when the value is None
OMIT_NONE = "fresh_ls.omit_none"
#: metadata: always sent, but an addition to the contract, so optional for clients
ADDITION = "fresh_ls.addition"


def camel(name: str) -> str:
    """``first_line`` -> ``firstLine``: the wire name of a Python field."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


#: ``attrs.field(default=None, metadata=OMITTED)``: an optional key the wire leaves out
#: when it is None (the contract's ``name?``, ``symbolKind?``, ``bytes?``)
OMITTED = {OMIT_NONE: True}
#: ``attrs.field(metadata=ADDED)``: a field fresh-ls adds to the contract's shape (sent
#: always; optional for clients)
ADDED = {ADDITION: True}


def _non_empty(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not value:
        raise ValueError(f"{camel(attribute.name)} must not be empty")


def _path(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """Non-empty, and short enough to resolve cheaply (see ``paths.MAX_PATH_BYTES``)."""
    _non_empty(_, attribute, value)
    if value is not None and (too_long := path_too_long(value)) is not None:
        raise ValueError(f"{camel(attribute.name)} {too_long}")


def _text(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """No larger than a file may be: a view is of a file (see ``sources.MAX_FILE_BYTES``)."""
    if value is None or len(value) * 4 <= MAX_FILE_BYTES:
        return
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{camel(attribute.name)} is {size} bytes, over the limit of {MAX_FILE_BYTES} "
            "bytes for a file; observe a smaller range"
        )


def _positive(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{camel(attribute.name)} must be 1 or more, got {value}")


def _not_negative(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{camel(attribute.name)} must be 0 or more, got {value}")


# -- params (client to server) --------------------------------------------------------------


@attrs.define(kw_only=True)
class InitializationOptions:
    token: str | None = None
    budget_bytes: int | None = attrs.field(default=None, validator=_not_negative)
    policy: Policy | None = None


@attrs.define(kw_only=True)
class ObserveRange:
    """One range of a sparse view (v1.3 ``ranges``): 1-based, inclusive."""

    first_line: int = attrs.field(validator=_positive)
    last_line: int = attrs.field(validator=_positive)


def _ranges(_: object, attribute: attrs.Attribute[Any], value: list[ObserveRange] | None) -> None:
    """Ascending, not overlapping, none reversed, at least one (PROTOCOL.md v1.3)."""
    if value is None:
        return
    if not value:
        raise ValueError("ranges must hold at least one range")
    for i, r in enumerate(value):
        if r.last_line < r.first_line:
            raise ValueError(
                f"ranges[{i}]: lastLine {r.last_line} is before firstLine {r.first_line}"
            )
        if i and r.first_line <= value[i - 1].last_line:
            raise ValueError(
                f"ranges[{i}]: firstLine {r.first_line} is not after the previous range's "
                f"lastLine {value[i - 1].last_line}; ranges must be ascending and not overlap"
            )


@attrs.define(kw_only=True)
class ObserveParams:
    session: str = attrs.field(validator=_non_empty)
    path: str = attrs.field(validator=_path)
    view_id: str | None = attrs.field(default=None, validator=_non_empty)
    first_line: int | None = attrs.field(default=None, validator=_positive)
    last_line: int | None = attrs.field(default=None, validator=_not_negative)
    #: v1.3: a sparse view (the lines a search printed), instead of firstLine/lastLine
    ranges: list[ObserveRange] | None = attrs.field(default=None, validator=_ranges)
    text: str | None = attrs.field(default=None, validator=_text)
    kind: ViewKind = ViewKind.READ
    #: fresh-ls addition: the tool result exactly as the model sees it (decorated). With it,
    #: ``placement: anchored`` can patch the result in place at the view's first change.
    result: str | None = attrs.field(default=None, validator=_text)

    def __attrs_post_init__(self) -> None:
        if self.ranges is not None and (self.first_line is not None or self.last_line is not None):
            raise ValueError("ranges: send either ranges or firstLine/lastLine, never both")


@attrs.define(kw_only=True)
class StaleParams:
    session: str = attrs.field(validator=_non_empty)
    view_ids: list[str] | None = None


@attrs.define(kw_only=True)
class ProjectParams:
    session: str = attrs.field(validator=_non_empty)
    budget_bytes: int | None = attrs.field(default=None, validator=_not_negative)
    policy: Policy | None = None
    view_ids: list[str] | None = None
    #: fresh-ls additions for ``placement: anchored``: the tool-call ids of the tool results
    #: in the request, oldest first; a new refresh goes after the last of them
    placement: Placement | None = None
    results: list[str] | None = None
    #: per tool result in ``results``: the bytes of the request after it (lets the server
    #: weigh a patch in place against a marker; absent: no patch in place)
    bytes_after: list[int] | None = None

    def __attrs_post_init__(self) -> None:
        if self.placement == Placement.ANCHORED and self.results is None:
            raise ValueError("results is required with placement 'anchored'")
        if self.bytes_after is not None and (
            self.results is None or len(self.bytes_after) != len(self.results)
        ):
            raise ValueError("bytesAfter must have one count per entry of results")
        if self.bytes_after is not None and any(n < 0 for n in self.bytes_after):
            raise ValueError("bytesAfter must not hold negative counts")


@attrs.define(kw_only=True)
class CommitParams:
    plan_id: str


@attrs.define(kw_only=True)
class ForgetParams:
    session: str = attrs.field(validator=_non_empty)
    view_ids: list[str] | None = None


@attrs.define(kw_only=True)
class StatusParams:
    pass


@attrs.define(kw_only=True)
class ViewTextParams:
    session: str = attrs.field(validator=_non_empty)
    view_id: str = attrs.field(validator=_non_empty)


@attrs.define(kw_only=True)
class CheckEditParams:
    session: str = attrs.field(validator=_non_empty)
    path: str = attrs.field(validator=_path)
    old_text: str | None = attrs.field(default=None, validator=_text)
    first_line: int | None = attrs.field(default=None, validator=_positive)
    last_line: int | None = attrs.field(default=None, validator=_not_negative)
    whole_file: bool | None = None


@attrs.define(kw_only=True)
class GateParams:
    session: str = attrs.field(validator=_non_empty)
    view_ids: list[str] | None = None


@attrs.define(kw_only=True)
class DidWriteParams:
    path: str = attrs.field(validator=_path)
    session: str | None = None
    #: An addition: the lines of the new file the writer wrote (both given, or neither);
    #: changed lines outside them are not credited to it (docs/protocol.md).
    first_line: int | None = attrs.field(default=None, validator=_positive)
    last_line: int | None = attrs.field(default=None, validator=_not_negative)


# -- notifications (server to client) -------------------------------------------------------


@attrs.frozen(kw_only=True)
class DidInvalidateParams:
    session: str
    view_ids: tuple[str, ...]
    path: str


# -- results --------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class LineRange:
    first_line: int
    last_line: int


@attrs.frozen(kw_only=True)
class ObservedRange:
    first_line: int
    last_line: int
    sha256: str


@attrs.frozen(kw_only=True)
class ObservedUnit:
    unit_id: str
    kind: UnitKind
    name: str | None = attrs.field(default=None, metadata=OMITTED)
    symbol_kind: str | None = attrs.field(default=None, metadata=OMITTED)
    first_line: int
    last_line: int


@attrs.frozen(kw_only=True)
class ObserveResult:
    view_id: str
    path: str
    first_line: int
    last_line: int
    kind: ViewKind = attrs.field(metadata=ADDED)
    status: Status
    units: tuple[ObservedUnit, ...]
    #: a sparse view's ranges as recorded (clamped to the file), left out for a range view
    ranges: tuple[LineRange, ...] | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen(kw_only=True)
class StaleUnit:
    unit_id: str
    kind: UnitKind
    name: str | None = attrs.field(default=None, metadata=OMITTED)
    symbol_kind: str | None = attrs.field(default=None, metadata=OMITTED)
    status: Status
    observed: LineRange
    current: LineRange | None
    diff: str | None
    #: ``"self"``, ``"session:<id>"``, ``"editor"``, ``"outside"``, or None (unknown, fresh)
    changed_by: str | None


@attrs.frozen(kw_only=True)
class StaleView:
    view_id: str
    path: str
    kind: ViewKind = attrs.field(metadata=ADDED)
    status: Status
    editor_dirty: bool
    observed: ObservedRange
    units: tuple[StaleUnit, ...]
    #: When the view was registered, in seconds since the epoch (the server's clock): the
    #: editor's "read 5 minutes ago"
    observed_at: float = attrs.field(metadata=ADDED)
    #: a sparse view's ranges (v1.3 ``ranges``), left out for a range view
    ranges: tuple[LineRange, ...] | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen(kw_only=True)
class StaleResult:
    views: tuple[StaleView, ...]


@attrs.frozen(kw_only=True)
class ViewStatus:
    view_id: str
    status: Status


@attrs.frozen(kw_only=True)
class StatusesResult:
    """``fresh/statuses`` (an addition): each view's status and nothing else, for a client
    that only needs to know which views the server holds and which went stale (the
    proxy, on every model request): ``fresh/stale`` also builds every view's units and
    diffs."""

    views: tuple[ViewStatus, ...]


@attrs.frozen(kw_only=True)
class Entry:
    unit_id: str
    label: str = attrs.field(metadata=ADDED)
    view_ids: tuple[str, ...]
    path: str
    first_line: int
    last_line: int
    kind: UnitKind
    name: str | None = attrs.field(default=None, metadata=OMITTED)
    symbol_kind: str | None = attrs.field(default=None, metadata=OMITTED)
    bytes: int
    sha256: str
    status: Status
    editor_dirty: bool = attrs.field(metadata=ADDED)
    header: str
    text: str


@attrs.frozen(kw_only=True)
class Omission:
    unit_id: str
    view_ids: tuple[str, ...]
    path: str
    name: str | None = attrs.field(default=None, metadata=OMITTED)
    reason: OmissionReason
    bytes: int | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen(kw_only=True)
class Marker:
    view_id: str
    text: str


@attrs.frozen(kw_only=True)
class Refresh:
    """One refresh of ``placement: anchored``: ``text`` goes right after the tool result
    of the tool call ``after``, in every request that still holds that tool result."""

    refresh_id: str
    after: str
    text: str


@attrs.frozen(kw_only=True)
class ProjectResult:
    plan_id: str
    entries: tuple[Entry, ...]
    omitted: tuple[Omission, ...]
    markers: tuple[Marker, ...]
    used_bytes: int
    budget_bytes: int
    rendered: str
    #: ``placement: anchored`` only (absent otherwise): the refreshes the request carries
    placement: Placement | None = attrs.field(default=None, metadata=OMITTED)
    refreshes: tuple[Refresh, ...] | None = attrs.field(default=None, metadata=OMITTED)
    #: ``placement: anchored`` only: bytes of the entries sent for the first time (at most
    #: ``budgetBytes``; ``usedBytes`` stays the size of ``rendered``, which is empty there)
    refresh_bytes: int | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen(kw_only=True)
class CommitResult:
    ok: bool
    changed: tuple[str, ...]


@attrs.frozen(kw_only=True)
class ForgetResult:
    forgotten: int


@attrs.frozen(kw_only=True)
class SessionSummary:
    session: str
    views: int
    stale: int


@attrs.frozen(kw_only=True)
class StatusResult:
    version: str
    root: str
    sessions: tuple[SessionSummary, ...]
    sources: int
    watching: bool
    state_dir: str
    plans: int = attrs.field(metadata=ADDED)


@attrs.frozen(kw_only=True)
class ViewTextResult:
    view_id: str
    path: str
    kind: ViewKind
    first_line: int
    last_line: int
    text: str
    sha256: str
    #: a sparse view's ranges: ``text`` is their lines joined in order
    ranges: tuple[LineRange, ...] | None = attrs.field(default=None, metadata=OMITTED)


@attrs.frozen(kw_only=True)
class CheckEditUnit:
    """A unit of the edit's region: its current lines (a definition whole), and what the
    session knew of it. ``status`` is ``changed`` (or the view's worse status) when it
    changed since the session's view, else ``fresh``; ``known`` (an addition) is false
    when the session never saw all of it."""

    kind: UnitKind
    name: str | None = attrs.field(default=None, metadata=OMITTED)
    symbol_kind: str | None = attrs.field(default=None, metadata=OMITTED)
    first_line: int
    last_line: int
    status: Status
    changed_by: str | None
    diff: str | None
    known: bool = attrs.field(metadata=ADDED)


@attrs.frozen(kw_only=True)
class CheckEditResult:
    verdict: Verdict
    reason: CheckEditReason
    units: tuple[CheckEditUnit, ...]
    text: str
    #: the view ``text`` was recorded as (an addition; on ``changed`` and ``unseen`` only)
    view_id: str | None = attrs.field(default=None, metadata=OMITTED)
    #: whether the same call can succeed now (an addition): true on ``changed`` and
    #: ``unseen``, whose ``text`` the session now knows; false when oldText must change
    #: (``missing``, ``ambiguous``) or nothing was denied
    retryable: bool = attrs.field(default=False, metadata=ADDED)


@attrs.frozen(kw_only=True)
class GateStaleView:
    view_id: str
    path: str
    status: Status
    changed_by: str | None


@attrs.frozen(kw_only=True)
class GateResult:
    proceed: bool
    stale: tuple[GateStaleView, ...]


@attrs.frozen(kw_only=True)
class Endpoint:
    """``<stateDir>/endpoint.json``, written by a listening server."""

    address: str
    token: str
    pid: int


# -- the method tables ----------------------------------------------------------------------


@attrs.frozen
class Method:
    """One method of the contract, declared once: everything else about it is derived.

    From this table come the server's params structuring (``PARAMS``) and handler table
    (``fresh_ls.server.connection.register_features`` refuses a missing or extra handler),
    the JSON Schema and the TypeScript (``fresh_ls.protocol.ts``), the import-free names
    (``fresh_ls/methods.py``) and the Python client's typed methods
    (``fresh_ls/client/requests.py``), both generated by ``fresh_ls.protocol.python``.
    """

    name: str
    params: type
    result: type | None  # None: a notification
    served: bool = True
    #: what the client's method says it does (its docstring, after the method's name)
    doc: str = ""
    #: params the Python client fills with a fresh id when the caller gives none
    #: (``fresh_ls.ids.view_id``), so that sending the request twice replaces, not adds
    minted: tuple[str, ...] = ()

    @property
    def notification(self) -> bool:
        return self.result is None

    @property
    def constant(self) -> str:
        """``fresh/viewText`` -> ``VIEW_TEXT``: its name in ``fresh_ls/methods.py``."""
        return _snake(self.name.split("/", 1)[1]).upper()

    @property
    def client_name(self) -> str:
        """``fresh/viewText`` -> ``view_text``: the Python client's method."""
        return _snake(self.name.split("/", 1)[1])


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


#: Every method of the contract (and fresh-ls's additions), client to server.
CLIENT_METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "fresh/observe",
            ObserveParams,
            ObserveResult,
            doc="register a view; ``{viewId, path, firstLine, lastLine, status, units}``. "
            "``result``: the tool result as the model saw it, decorated (lets ``placement: "
            "anchored`` patch it in place). ``ranges``: a sparse view (v1.3), as "
            "``(firstLine, lastLine)`` pairs, instead of ``first_line``/``last_line``. "
            "Without ``view_id`` the client mints one (``fresh_ls.ids``), so sending it "
            "again after a reconnection replaces the view rather than adding a second.",
            minted=("view_id",),
        ),
        Method(
            "fresh/stale",
            StaleParams,
            StaleResult,
            doc="``{views: [...]}`` with statuses, diffs and who changed what.",
        ),
        Method(
            "fresh/statuses",
            StaleParams,
            StatusesResult,
            doc="``{views: [{viewId, status}]}``: each view's status, without units or diffs "
            "(an addition).",
        ),
        Method(
            "fresh/project",
            ProjectParams,
            ProjectResult,
            doc="``{planId, entries, omitted, markers, usedBytes, budgetBytes, rendered}``, "
            'and with ``placement="anchored"`` (``results``: the tool-call ids of the '
            "request's tool results, oldest first) also ``{placement, refreshes}``.",
        ),
        Method("fresh/commit", CommitParams, CommitResult, doc="``{ok, changed}``."),
        Method("fresh/forget", ForgetParams, ForgetResult, doc="``{forgotten}``."),
        Method(
            "fresh/status",
            StatusParams,
            StatusResult,
            doc="``{version, root, sessions, sources, watching, stateDir, ...}``.",
        ),
        Method(
            "fresh/viewText",
            ViewTextParams,
            ViewTextResult,
            doc="what a view showed (an addition).",
        ),
        Method(
            "fresh/checkEdit",
            CheckEditParams,
            CheckEditResult,
            doc="may this session's edit of that region go ahead (v1.2)? "
            "``{verdict, reason, units, text, viewId?}``.",
        ),
        Method(
            "fresh/gate",
            GateParams,
            GateResult,
            doc="``{proceed, stale}``: do these views still hold (v1.2)?",
        ),
        Method(
            "fresh/didWrite",
            DidWriteParams,
            None,
            doc="this agent (``session``) wrote ``path``.",
        ),
    )
}
#: Notifications the server pushes.
SERVER_METHODS: dict[str, Method] = {
    m.name: m for m in (Method("fresh/didInvalidate", DidInvalidateParams, None),)
}

#: method name -> params class, for the methods the server serves: the one table the
#: server structures incoming messages by.
PARAMS: dict[str, type] = {m.name: m.params for m in CLIENT_METHODS.values() if m.served}
REQUESTS = frozenset(m.name for m in CLIENT_METHODS.values() if m.served and not m.notification)
NOTIFICATIONS = frozenset(m.name for m in CLIENT_METHODS.values() if m.notification)

#: Classes outside the method tables that the schema also names.
EXTRA_TYPES: tuple[type, ...] = (InitializationOptions, Endpoint)


def _is_protocol_class(t: Any) -> bool:
    return isinstance(t, type) and attrs.has(t) and t.__module__ == __name__


def protocol_classes() -> list[type]:
    return [v for v in vars(sys.modules[__name__]).values() if _is_protocol_class(v)]


# -- the converter --------------------------------------------------------------------------


def _json_type(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _strict(kind: type, label: str) -> Callable[[Any, Any], Any]:
    def hook(value: Any, _: Any) -> Any:
        if kind is int and (type(value) is not int):
            raise TypeError(f"expected {label}, got {_json_type(value)}")
        if kind is not int and not isinstance(value, kind):
            raise TypeError(f"expected {label}, got {_json_type(value)}")
        if kind is str:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                # JSON allows "\ud800"; UTF-8 (the store, hashes, the disk) does not.
                raise TypeError(
                    "expected a string of valid Unicode (it holds a lone surrogate)"
                ) from None
        return value

    return hook


def _list_of_str(value: Any, _: Any) -> list[str]:
    if not isinstance(value, list):
        raise TypeError(f"expected an array of strings, got {_json_type(value)}")
    for v in value:
        if not isinstance(v, str):
            raise TypeError(f"expected an array of strings, got an array holding {_json_type(v)}")
    return list(value)


E = TypeVar("E", bound=enum.Enum)


def _enum(value: Any, cls: type[E]) -> E:
    if isinstance(value, str):
        try:
            return cls(value)
        except ValueError:
            pass
    choices = ", ".join(repr(m.value) for m in cls)
    got = repr(value) if isinstance(value, str) else _json_type(value)
    raise ValueError(f"expected one of {choices}, got {got}")


def _enum_value(member: enum.Enum) -> Any:
    return member.value


def _structure_factory(conv: cattrs.Converter) -> Callable[[type], Any]:
    def factory(cls: type) -> Any:
        renames = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
        return make_dict_structure_fn(cls, conv, **renames)  # type: ignore[arg-type]

    return factory


_PRIMITIVES = (str, int, bool, float)


def _unstructure_factory(conv: cattrs.Converter) -> Callable[[type], Any]:
    """A generated function per class that keeps the fields' order on the wire, leaving out
    an ``OMITTED`` key in its place when None (cattrs's own ``omit_if_default`` moves such
    keys to the end, and ``fresh_ls.engine.wire`` has always sent e.g. ``name`` before
    ``firstLine``)."""

    def factory(cls: type) -> Any:
        hints = get_type_hints(cls)
        globs: dict[str, Any] = {}
        lines = ["def unstructure(o):", "  res = {}"]
        for i, a in enumerate(attrs.fields(cls)):
            key = camel(a.name)
            t = hints[a.name]
            args = [x for x in get_args(t) if x is not type(None)]
            optional = get_origin(t) in (Union, types.UnionType) and len(args) == 1
            inner = args[0] if optional else t
            value = f"o.{a.name}"
            if isinstance(inner, type) and issubclass(inner, enum.Enum):
                value = f"{value}._value_"  # inlined: no call per field
            elif _is_tuple(inner) and get_args(inner)[0] in _PRIMITIVES:
                value = f"list({value})"
            elif inner not in _PRIMITIVES:
                globs[f"h{i}"] = conv.get_unstructure_hook(inner)
                value = f"h{i}({value})"
            if optional and value != f"o.{a.name}":
                value = f"None if o.{a.name} is None else {value}"
            if a.metadata.get(OMIT_NONE):
                lines.append(f"  if o.{a.name} is not None:")
                lines.append(f"    res[{key!r}] = {value}")
            else:
                lines.append(f"  res[{key!r}] = {value}")
        lines.append("  return res")
        namespace: dict[str, Any] = {}
        exec(compile("\n".join(lines), f"<unstructure {cls.__name__}>", "exec"), globs, namespace)
        return namespace["unstructure"]

    return factory


def _is_tuple(t: Any) -> bool:
    return get_origin(t) is tuple


def _tuple_to_list(conv: cattrs.Converter, t: Any) -> Callable[[Any], list[Any]]:
    """``tuple[X, ...]`` -> a list, each item through X's own hook (no per-item dispatch)."""
    item = get_args(t)[0]
    if item in _PRIMITIVES:
        return list
    hook = conv.get_unstructure_hook(item)
    return lambda seq: [hook(x) for x in seq]


def make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=False)
    conv.register_structure_hook(int, _strict(int, "an integer"))
    conv.register_structure_hook(str, _strict(str, "a string"))
    conv.register_structure_hook(bool, _strict(bool, "a boolean"))
    conv.register_structure_hook_func(lambda t: t == list[str], _list_of_str)
    for e in ENUMS:  # the enum's own hook: singledispatch prefers it to str's
        conv.register_structure_hook(e, _enum)
        conv.register_unstructure_hook(e, _enum_value)
    conv.register_structure_hook_factory(_is_protocol_class, _structure_factory(conv))
    conv.register_unstructure_hook_factory(_is_protocol_class, _unstructure_factory(conv))
    # Results hold tuples (they are shared); the wire and in-process callers see arrays.
    conv.register_unstructure_hook_factory(_is_tuple, lambda t: _tuple_to_list(conv, t))
    return conv


#: The one converter between the protocol classes and their JSON objects.
CONVERTER = make_converter()


def unstructure(obj: Any) -> Any:
    """A protocol object (or a list of them) as its JSON value, camelCase keys."""
    return CONVERTER.unstructure(obj)


T = TypeVar("T")


def parse(cls: type[T], raw: Any, where: str = "params") -> T:
    """Structure ``raw`` into ``cls`` or raise InvalidParams naming every bad field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InvalidParams(f"{where}: expected an object, got {_json_type(raw)}")
    try:
        return CONVERTER.structure(raw, cls)
    except Exception as exc:
        messages = transform_error(exc, path=where, format_exception=_describe)
        raise InvalidParams("; ".join(_tidy(m) for m in messages)) from None


def _describe(exc: BaseException, type_: Any) -> str:
    """One phrase per failure, in JSON terms rather than Python's."""
    if isinstance(exc, KeyError):
        return "required field missing"
    text = str(exc)
    if isinstance(exc, (TypeError, ValueError)) and text:
        return text
    return f"invalid value for {type_}"


def _tidy(message: str) -> str:
    """cattrs says ``invalid value ... @ params.first_line``; put the field first, in its
    wire spelling."""
    if " @ " in message:
        text, where = message.rsplit(" @ ", 1)
        return f"{'.'.join(camel(p) for p in where.split('.'))}: {text}"
    return message


# -- JSON Schema ----------------------------------------------------------------------------


def _type_schema(t: Any) -> dict[str, Any]:
    origin = get_origin(t)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(t) if a is not type(None)]
        inner = (
            _type_schema(args[0]) if len(args) == 1 else {"anyOf": [_type_schema(a) for a in args]}
        )
        return {"anyOf": [inner, {"type": "null"}]}
    if origin in (list, tuple):
        return {"type": "array", "items": _type_schema(get_args(t)[0])}
    if isinstance(t, type) and issubclass(t, enum.Enum):
        return {"$ref": f"#/$defs/{t.__name__}"}
    if _is_protocol_class(t):
        return {"$ref": f"#/$defs/{t.__name__}"}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if t in simple:
        return {"type": simple[t]}
    raise TypeError(f"no JSON Schema for {t!r}")


def _class_schema(cls: type) -> dict[str, Any]:
    hints = get_type_hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    for a in attrs.fields(cls):
        key = camel(a.name)
        props[key] = _type_schema(hints[a.name])
        if a.default is attrs.NOTHING and not a.metadata.get(ADDITION):
            required.append(key)
        if a.default is not attrs.NOTHING:
            props[key]["default"] = (
                a.default.value if isinstance(a.default, enum.Enum) else a.default
            )
        if a.metadata.get(ADDITION):
            props[key]["x-addition"] = True
    out: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    doc = (cls.__doc__ or "").strip()
    if doc and not doc.startswith(cls.__name__ + "("):
        out["description"] = " ".join(doc.split())
    return out


def schema() -> dict[str, Any]:
    """The protocol as JSON Schema (2020-12): every class and enum under ``$defs``, and the
    method tables under ``x-clientMethods`` / ``x-serverMethods``."""
    defs: dict[str, Any] = {}
    for e in ENUMS:
        defs[e.__name__] = {"type": "string", "enum": [m.value for m in e]}
    for cls in protocol_classes():
        if cls is Method:
            continue
        defs[cls.__name__] = _class_schema(cls)

    def method(m: Method) -> dict[str, Any]:
        out: dict[str, Any] = {"params": m.params.__name__}
        if m.result is not None:
            out["result"] = m.result.__name__
        if not m.served:
            out["served"] = False
        return out

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://fresh-ls/protocol.schema.json",
        "title": f"fresh-ls wire contract v{VERSION}",
        "x-version": VERSION,
        "x-clientMethods": {name: method(m) for name, m in CLIENT_METHODS.items()},
        "x-serverMethods": {name: method(m) for name, m in SERVER_METHODS.items()},
        "x-errorCodes": ERROR_CODES,
        "$defs": dict(sorted(defs.items())),
    }


def schema_json() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args != ["--schema"]:
        print("usage: python -P -m fresh_ls.protocol --schema", file=sys.stderr)
        return 2
    from fresh_ls import protocol  # this module by its name, not as __main__

    sys.stdout.write(protocol.schema_json())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
