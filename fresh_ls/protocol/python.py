"""The Python side of the method table, generated: the import-free names and the client's
typed methods.

``python -P -m fresh_ls.protocol.ts`` (``make protocol``) writes both from
``fresh_ls.protocol.CLIENT_METHODS`` next to the schema and the TypeScript, and
tests/test_ext_contract.py fails while either is stale. They are generated rather than
built when the class is made because mypy then checks every caller against a real
signature (required fields positional, optional ones keywords, their types the params
class's), and because the client must not import the typed protocol: ``cattrs`` and
``attrs`` cost the CLI and every hook run about 170 ms (tests/e2e/test_coldstart.py).
"""

from __future__ import annotations

import enum
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import attrs

from fresh_ls.protocol import camel

PACKAGE = Path(__file__).resolve().parent.parent
NAMES_PATH = PACKAGE / "methods.py"
REQUESTS_PATH = PACKAGE / "client" / "requests.py"

_HEADER = (
    "# GENERATED from the method table of fresh_ls/protocol/__init__.py by `make protocol`",
    "# (python -P -m fresh_ls.protocol.ts): do not edit. tests/test_ext_contract.py fails",
    "# while it is stale.",
)


def names(methods: Any, server_methods: Any) -> str:
    """``fresh_ls/methods.py``: each method's name as a constant, and nothing imported."""
    out = [
        *_HEADER,
        '"""The contract\'s method names, defined once (in the method table of',
        "``fresh_ls.protocol``, which re-exports these).",
        "",
        "Free of imports, so the clients and the CLI name methods without loading the typed",
        'protocol (``fresh_ls.protocol`` costs about 170 ms to import)."""',
        "",
        "from __future__ import annotations",
        "",
    ]
    for m in (*methods.values(), *server_methods.values()):
        out.append(f'{m.constant} = "{m.name}"')
    return "\n".join(out) + "\n"


def _is_record_list(t: Any) -> type | None:
    """The item class of ``list[SomeRecord]`` (a protocol class), else None."""
    if get_origin(t) is list:
        (item,) = get_args(t)
        if isinstance(item, type) and attrs.has(item):
            return item
    return None


def _py_type(t: Any) -> str:
    """The client's spelling of a field's type: enums as their strings, a list of records
    as a sequence of tuples of their fields (``ranges=[(3, 9), (20, 24)]``)."""
    if get_origin(t) in (Union, types.UnionType):
        args = [a for a in get_args(t) if a is not type(None)]
        return " | ".join(_py_type(a) for a in args)
    record = _is_record_list(t)
    if record is not None:
        hints = get_type_hints(record)
        inner = ", ".join(_py_type(hints[a.name]) for a in attrs.fields(record))
        return f"Sequence[tuple[{inner}]]"
    if get_origin(t) is list:
        return f"list[{_py_type(get_args(t)[0])}]"
    if isinstance(t, type) and issubclass(t, enum.Enum):
        return "str"
    if t in (str, int, bool, float):
        return t.__name__
    raise TypeError(f"no client type for {t!r}")


def _wrap(text: str, width: int, indent: str) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(indent) + len(line) + 1 + len(word) > width:
            lines.append(indent + line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(indent + line)
    return lines


def _method(m: Any) -> list[str]:
    hints = get_type_hints(m.params)
    fields = list(attrs.fields(m.params))
    required = [a for a in fields if a.default is attrs.NOTHING]
    optional = [a for a in fields if a.default is not attrs.NOTHING]
    params = [f"{a.name}: {_py_type(hints[a.name])}" for a in required]
    # one optional field may be given by position (``stale(session, ids)``); more are
    # keywords, so that adding one never moves another
    if len(optional) > 1:
        params.append("*")
    params += [f"{a.name}: {_py_type(hints[a.name])} | None = None" for a in optional]
    returns = "_N" if m.notification else "_R"
    head = f"    def {m.client_name}(self{''.join(', ' + p for p in params)}) -> {returns}:"
    out = (
        [head]
        if len(head) <= 100
        else [
            f"    def {m.client_name}(",
            "        self,",
            *(f"        {p}," for p in params),
            f"    ) -> {returns}:",
        ]
    )
    doc = _wrap(f"``{m.name}``: {m.doc}".rstrip(": "), 92, "        ")
    doc[0] = '        """' + doc[0].lstrip()
    if len(doc[-1]) + 3 <= 100:
        doc[-1] += '"""'
    else:
        doc.append('        """')
    out += doc
    for name in m.minted:
        out.append(f"        {name} = {name} or ids.view_id()")
    records = []
    for a in fields:
        record = _is_record_list(_strip_none(hints[a.name]))
        if record is not None:
            keys = ", ".join(f'"{camel(f.name)}"' for f in attrs.fields(record))
            records.append(f"{a.name}=({keys})")
    wire = f"wire_params(locals(){''.join(', ' + r for r in records)})"
    call = "self.notify" if m.notification else "self._result"
    out.append(f"        return {call}(M.{m.constant}, {wire})")
    return out


def _strip_none(t: Any) -> Any:
    if get_origin(t) in (Union, types.UnionType):
        args = [a for a in get_args(t) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return t


def requests(methods: Any) -> str:
    """``fresh_ls/client/requests.py``: one typed method per served method of the table."""
    served = [m for m in methods.values() if m.served]
    minted = any(m.minted for m in served)
    out = [
        *_HEADER,
        '"""The client\'s typed methods, one per method of the contract, shared by',
        "``SyncClient`` and ``AsyncClient``: each fills the wire params from its arguments",
        "(``view_id`` -> ``viewId``, a None left out: absent means the default) and hands them",
        'to the front\'s ``_result`` or ``notify``."""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Sequence",
        "from typing import Any, Generic, TypeVar",
        "",
        *(["from fresh_ls import ids"] if minted else []),
        "from fresh_ls import methods as M",
        "",
        '_R = TypeVar("_R")  # what a request method gives: a result, or an awaitable of one',
        '_N = TypeVar("_N")  # what a notification method gives: None, or an awaitable',
        "",
        "",
        "def wire_params(args: dict[str, Any], **records: tuple[str, ...]) -> dict[str, Any]:",
        '    """A method\'s arguments as wire params: camelCase keys (``camel`` of the protocol),',
        "    None left out (absent means the default), ``self`` skipped, and each sequence of",
        '    tuples named in ``records`` as objects with those keys."""',
        "    out = {}",
        "    for key, value in args.items():",
        '        if key == "self" or value is None:',
        "            continue",
        "        if key in records:",
        "            value = [dict(zip(records[key], item, strict=True)) for item in value]",
        '        head, *rest = key.split("_")',
        '        out[head + "".join(r[:1].upper() + r[1:] for r in rest)] = value',
        "    return out",
        "",
        "",
        "class Requests(Generic[_R, _N]):",
        '    """The typed methods; ``_result`` and ``notify`` are the front\'s (a blocking call,',
        '    or an awaitable)."""',
        "",
        "    def _result(self, method: str, params: dict[str, Any]) -> _R:  # pragma: no cover",
        "        raise NotImplementedError",
        "",
        "    def notify(self, method: str, params: Any) -> _N:  # pragma: no cover",
        "        raise NotImplementedError",
    ]
    for m in served:
        out += ["", *_method(m)]
    return "\n".join(out) + "\n"
