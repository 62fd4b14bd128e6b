"""The VS Code extension's protocol.ts and the Python server cannot drift apart.

``vscode-ext/src/protocol.ts`` defines every method name and payload type once for the
extension. This test reads it and checks, both ways:

- its client methods are exactly the keys of ``fresh_ls.server.params.PARAMS``, and its
  notifications exactly ``NOTIFICATIONS``;
- each method's ``*Params`` interface has exactly the fields of the Python params class, a
  field optional (``?``) in TypeScript exactly when it has a default in Python; the same for
  ``InitializationOptions``;
- against a live server: every key of every result (nested objects and arrays included), of
  the pushed ``fresh/didInvalidate`` and of ``endpoint.json`` is declared in its interface, and
  every required (non-``?``) field of those interfaces is present.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import attrs
import pytest

from fresh_ls.client import SyncClient
from fresh_ls.server import params as P

PROTOCOL_TS = Path(__file__).resolve().parent.parent / "vscode-ext" / "src" / "protocol.ts"


@dataclass
class Field:
    name: str
    optional: bool
    type: str


@dataclass
class Interface:
    name: str
    fields: dict[str, Field] = field(default_factory=dict)


@dataclass
class Protocol:
    client_methods: dict[str, str]  # key -> method name
    server_methods: dict[str, str]
    method_types: dict[str, tuple[str, str]]  # method -> (params interface, result type)
    notifications: set[str]
    interfaces: dict[str, Interface]


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _const_object(text: str, name: str) -> dict[str, str]:
    m = re.search(rf"export const {name} = \{{(.*?)\}} as const;", text, re.S)
    assert m, f"protocol.ts: `export const {name} = {{...}} as const;` not found"
    return dict(re.findall(r'(\w+):\s*"([^"]+)"', m.group(1)))


def parse_protocol(path: Path = PROTOCOL_TS) -> Protocol:
    text = _strip_comments(path.read_text(encoding="utf-8"))
    client = _const_object(text, "ClientMethods")
    server = _const_object(text, "ServerMethods")

    raw: dict[str, tuple[list[str], str]] = {}
    # `{}` on one line, or a body that closes with `}` alone on a line.
    pattern = r"export interface (\w+)(?:\s+extends\s+([\w,\s]+?))?\s*\{(\}|\n.*?\n\})"
    for m in re.finditer(pattern, text, re.S):
        name, parents, body = m.group(1), m.group(2), m.group(3)
        raw[name] = ([p.strip() for p in parents.split(",")] if parents else [], body)

    interfaces: dict[str, Interface] = {}

    def build(name: str) -> Interface:
        if name in interfaces:
            return interfaces[name]
        parents, body = raw[name]
        iface = Interface(name)
        for parent in parents:
            iface.fields.update(build(parent).fields)
        for fm in re.finditer(r"^\s*(\w+)(\?)?:\s*([^;]+);", body, re.M):
            iface.fields[fm.group(1)] = Field(fm.group(1), bool(fm.group(2)), fm.group(3).strip())
        interfaces[name] = iface
        return iface

    for name in raw:
        build(name)

    table = interfaces.get("ClientMethodTypes")
    assert table is not None, "protocol.ts: interface ClientMethodTypes not found"
    body = raw["ClientMethodTypes"][1]
    method_types = {
        mm.group(1): (mm.group(2), mm.group(3))
        for mm in re.finditer(r'"([^"]+)":\s*\{\s*params:\s*(\w+);\s*result:\s*(\w+)\s*\}', body)
    }
    nm = re.search(r"CLIENT_NOTIFICATIONS[^=]*=\s*new Set<\w+>\(\[(.*?)\]\)", text, re.S)
    assert nm, "protocol.ts: CLIENT_NOTIFICATIONS not found"
    notifications = {client[k] for k in re.findall(r"ClientMethods\.(\w+)", nm.group(1))}
    return Protocol(client, server, method_types, notifications, interfaces)


@pytest.fixture(scope="module")
def proto() -> Protocol:
    return parse_protocol()


def _python_fields(cls: type) -> dict[str, bool]:
    """Field name -> optional (has a default)."""
    return {a.name: a.default is not attrs.NOTHING for a in attrs.fields(cls)}  # type: ignore[arg-type]


def _ts_fields(proto: Protocol, name: str) -> dict[str, bool]:
    assert name in proto.interfaces, f"protocol.ts: interface {name} not found"
    return {f.name: f.optional for f in proto.interfaces[name].fields.values()}


# -- methods and params --------------------------------------------------------------------------


def test_client_methods_are_exactly_the_servers(proto: Protocol) -> None:
    ts = set(proto.client_methods.values())
    py = set(P.PARAMS)
    assert ts - py == set(), f"in protocol.ts but not in PARAMS: {sorted(ts - py)}"
    assert py - ts == set(), f"in PARAMS but not in protocol.ts ClientMethods: {sorted(py - ts)}"
    assert set(proto.method_types) == py, "ClientMethodTypes must list every method of PARAMS"
    assert proto.notifications == set(P.NOTIFICATIONS)


def test_server_notification_is_the_contracts(proto: Protocol) -> None:
    assert set(proto.server_methods.values()) == {"fresh/didInvalidate"}


@pytest.mark.parametrize("method", sorted(P.PARAMS))
def test_params_fields_match(proto: Protocol, method: str) -> None:
    iface, _ = proto.method_types[method]
    py = _python_fields(P.PARAMS[method])
    ts = _ts_fields(proto, iface)
    assert set(ts) == set(py), (
        f"{method}: {iface} in protocol.ts has {sorted(ts)}, "
        f"{P.PARAMS[method].__name__} in params.py has {sorted(py)}"
    )
    for name, optional in py.items():
        assert ts[name] == optional, (
            f"{method}: {iface}.{name} is {'optional' if ts[name] else 'required'} in protocol.ts "
            f"but {'has a default' if optional else 'is required'} in params.py"
        )


def test_initialization_options_match(proto: Protocol) -> None:
    assert _ts_fields(proto, "InitializationOptions") == _python_fields(P.InitializationOptions)


def test_parser_sees_what_is_there() -> None:
    """The checks above are only as good as the parser: it must read nested and inherited types."""
    proto = parse_protocol()
    stale_view = proto.interfaces["StaleView"].fields
    assert stale_view["observed"].type == "ObservedRange"
    assert set(proto.interfaces["ObservedRange"].fields) == {"firstLine", "lastLine", "sha256"}
    assert proto.interfaces["StaleUnit"].fields["current"].type == "LineRange | null"
    assert proto.method_types["fresh/stale"] == ("StaleParams", "StaleResult")


# -- results against a live server ---------------------------------------------------------------


def _check(proto: Protocol, type_name: str, value: Any, where: str, seen: set[str]) -> None:
    """``value`` conforms to ``type_name`` by keys, recursively; records the interfaces seen."""
    t = type_name.strip()
    if t.endswith("| null"):
        if value is None:
            return
        t = t[: -len("| null")].strip()
    if t.endswith("[]"):
        assert isinstance(value, list), f"{where}: expected an array for {type_name}"
        for i, item in enumerate(value):
            _check(proto, t[:-2], item, f"{where}[{i}]", seen)
        return
    iface = proto.interfaces.get(t)
    if iface is None:
        return  # a primitive or a string union: keys are what this test is about
    assert isinstance(value, dict), f"{where}: expected an object for {t}, got {value!r}"
    seen.add(t)
    extra = set(value) - set(iface.fields)
    assert not extra, f"{where}: the server returns {sorted(extra)}, which {t} in protocol.ts lacks"
    missing = {n for n, f in iface.fields.items() if not f.optional and n not in value}
    assert not missing, (
        f"{where}: {t} in protocol.ts requires {sorted(missing)}, the server omits it"
    )
    for name, val in value.items():
        _check(proto, iface.fields[name].type, val, f"{where}.{name}", seen)


CART = (
    "RATE = 10\n\n\nclass Cart:\n    def __init__(self):\n        self.items = []\n\n"
    "    def total(self, quantity):\n        subtotal = quantity * RATE\n        return subtotal\n"
)


@pytest.mark.timeout(60)
def test_results_match_a_live_server(proto: Protocol, tmp_path: Path) -> None:
    (tmp_path / "cart.py").write_text(CART)
    (tmp_path / "big.py").write_text(
        "".join(f"def f{i}():\n    return {i}\n\n" for i in range(400))
    )
    seen: set[str] = set()
    client = SyncClient.spawn(
        tmp_path, python=sys.executable, extra_args=["--listen", "--no-watch"]
    )
    try:
        result_of = {m: r for m, (_, r) in proto.method_types.items()}

        def call(method: str, value: Any, label: str) -> Any:
            _check(proto, result_of[method], value, label, seen)
            return value

        call(
            "fresh/observe",
            client.observe("a", "cart.py", view_id="v1", first_line=8, last_line=10),
            "observe",
        )
        call("fresh/observe", client.observe("a", "cart.py", view_id="v2"), "observe(whole)")
        call("fresh/observe", client.observe("a", "big.py", view_id="v3"), "observe(big)")
        (tmp_path / "cart.py").write_text(CART.replace("* RATE", "* RATE * 2"))
        (tmp_path / "big.py").write_text("# moved\n" + (tmp_path / "big.py").read_text())
        client.did_write("cart.py", session="b")
        client.did_write("big.py")
        stale = call("fresh/stale", client.stale("a"), "stale")
        assert any(u["diff"] for v in stale["views"] for u in v["units"]), (
            "no changed unit to check"
        )
        call("fresh/status", client.status(), "status")
        call("fresh/viewText", client.view_text("a", "v1"), "viewText")
        plan = call("fresh/project", client.project("a"), "project")
        assert plan["entries"] and plan["markers"]
        tight = call(
            "fresh/project", client.project("a", budget_bytes=200, policy="all"), "project(tight)"
        )
        assert tight["omitted"], "a tight budget should omit something"
        call("fresh/commit", client.commit(plan["planId"]), "commit")
        call("fresh/forget", client.forget("a", ["v3"]), "forget")

        invalidations = [n for n in client.notifications if n["method"] == "fresh/didInvalidate"]
        assert invalidations, "the server pushed no fresh/didInvalidate"
        for n in invalidations:
            _check(proto, "DidInvalidateParams", n["params"], "didInvalidate", seen)

        endpoint = json.loads((tmp_path / ".fresh-ls" / "endpoint.json").read_text())
        _check(proto, "Endpoint", endpoint, "endpoint.json", seen)
    finally:
        client.close()

    # Every result interface was exercised, so none can drift unnoticed.
    wanted = {
        "ObserveResult", "ObservedUnit", "StaleResult", "StaleView", "StaleUnit", "LineRange",
        "ObservedRange", "ProjectResult", "Entry", "Omission", "Marker", "CommitResult",
        "ForgetResult", "StatusResult", "SessionSummary", "ViewTextResult",
        "DidInvalidateParams", "Endpoint",
    }  # fmt: skip
    assert wanted <= seen, f"not exercised: {sorted(wanted - seen)}"


def test_checks_catch_drift(tmp_path: Path) -> None:
    """A protocol.ts that lost a result field or renamed a param fails the checks above."""
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    drifted = tmp_path / "protocol.ts"
    drifted.write_text(
        text.replace("  plans?: number;\n", "").replace(
            "  firstLine?: number;\n", "  first?: number;\n", 1
        )
    )
    proto = parse_protocol(drifted)
    status = {
        "version": "0", "root": "/", "sessions": [], "sources": 0, "watching": True,
        "stateDir": "/s", "plans": 0,
    }  # fmt: skip
    with pytest.raises(AssertionError, match=r"returns \['plans'\]"):
        _check(proto, "StatusResult", status, "status", set())
    assert set(_ts_fields(proto, "ObserveParams")) != set(_python_fields(P.ObserveParams))
    with pytest.raises(AssertionError, match="requires"):
        _check(proto, "ObserveResult", {"viewId": "v"}, "observe", set())
