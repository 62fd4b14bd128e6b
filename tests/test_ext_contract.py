"""The VS Code extension's protocol types and the Python server cannot drift apart.

The Python classes in ``fresh_ls/protocol/`` are the one definition of the wire. From them:

- ``fresh_ls/protocol/protocol.schema.json`` (JSON Schema, committed) must be exactly what
  ``protocol.schema()`` exports now;
- ``vscode-ext/src/protocol.generated.ts`` must be exactly what ``fresh_ls.protocol.ts``
  generates from that schema, and ``protocol.ts`` re-exports it instead of declaring its
  own interfaces;
- ``fresh_ls/methods.py`` (the import-free names) and ``fresh_ls/client/requests.py`` (the
  Python client's typed methods) must be exactly what ``fresh_ls.protocol.python``
  generates from the method table;
- the schema's method tables are the server's (``protocol.PARAMS``, ``NOTIFICATIONS``) and
  each params type has exactly the fields of its class, optional exactly when it has a
  default;
- against a live server: every key of every result (nested objects and arrays included), of
  the pushed ``fresh/didInvalidate`` and of ``endpoint.json`` is declared in its schema type
  with the JSON type it declares, and every required key is present.

Regenerate them all with ``make protocol`` (``python -m fresh_ls.protocol.ts``).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from fresh_ls import protocol as P
from fresh_ls.client import SyncClient
from fresh_ls.protocol import python as protocol_py
from fresh_ls.protocol import ts as protocol_ts

PROTOCOL_TS = Path(__file__).resolve().parent.parent / "vscode-ext" / "src" / "protocol.ts"
REGENERATE = "run `make protocol` (python -m fresh_ls.protocol.ts) and commit the files"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return protocol_ts.committed_schema()


# -- the committed files are the classes' ------------------------------------------------------


def test_committed_schema_is_the_classes() -> None:
    committed = protocol_ts.SCHEMA_PATH.read_text(encoding="utf-8")
    assert committed == P.schema_json(), f"{protocol_ts.SCHEMA_PATH.name} is stale: {REGENERATE}"


def test_generated_typescript_is_the_schemas(schema: dict[str, Any]) -> None:
    committed = protocol_ts.TS_PATH.read_text(encoding="utf-8")
    assert committed == protocol_ts.generate(schema), (
        f"{protocol_ts.TS_PATH.name} is stale: {REGENERATE}"
    )


def test_generated_python_is_the_method_tables() -> None:
    names = protocol_py.names(P.CLIENT_METHODS, P.SERVER_METHODS)
    assert protocol_py.NAMES_PATH.read_text(encoding="utf-8") == names, (
        f"{protocol_py.NAMES_PATH.name} is stale: {REGENERATE}"
    )
    requests = protocol_py.requests(P.CLIENT_METHODS)
    assert protocol_py.REQUESTS_PATH.read_text(encoding="utf-8") == requests, (
        f"{protocol_py.REQUESTS_PATH.name} is stale: {REGENERATE}"
    )


def test_check_entry_point_sees_every_generated_file(tmp_path: Path) -> None:
    assert protocol_ts.main(["--check"]) == 0
    assert set(protocol_ts.generated()) == {
        protocol_ts.SCHEMA_PATH,
        protocol_ts.TS_PATH,
        protocol_py.NAMES_PATH,
        protocol_py.REQUESTS_PATH,
    }


def test_the_client_has_one_typed_method_per_served_method() -> None:
    """Derived, not written again: a method of the table is a method of both clients, with
    the params class's fields as its arguments (wire names through ``camel``)."""
    import inspect

    from fresh_ls.client import AsyncClient, SyncClient

    for m in P.CLIENT_METHODS.values():
        for cls in (SyncClient, AsyncClient):
            fn = getattr(cls, m.client_name)
            args = [a for a in inspect.signature(fn).parameters if a != "self"]
            assert sorted(P.camel(a) for a in args) == sorted(_python_fields(m.params)), m.name
    sent: list[tuple[str, Any]] = []

    class Recorder(SyncClient):
        def __init__(self) -> None:
            pass

        def _result(self, method: str, params: dict[str, Any]) -> Any:
            sent.append((method, params))
            return {}

        def notify(self, method: str, params: Any) -> None:
            sent.append((method, params))

    client = Recorder()
    client.observe("s", "a.py", view_id="v1", ranges=[(1, 2), (5, 6)], kind="read")
    client.stale("s", ["v1"])
    client.project("s", budget_bytes=0, bytes_after=[3], results=["c"])
    client.did_write("a.py")
    client.observe("s", "a.py")
    assert sent[:4] == [
        (
            "fresh/observe",
            {
                "session": "s",
                "path": "a.py",
                "viewId": "v1",
                "ranges": [{"firstLine": 1, "lastLine": 2}, {"firstLine": 5, "lastLine": 6}],
                "kind": "read",
            },
        ),
        ("fresh/stale", {"session": "s", "viewIds": ["v1"]}),
        ("fresh/project", {"session": "s", "budgetBytes": 0, "results": ["c"], "bytesAfter": [3]}),
        ("fresh/didWrite", {"path": "a.py"}),
    ]
    minted = sent[4][1]["viewId"]
    assert isinstance(minted, str) and minted.startswith("v-")


def test_one_table_entry_is_one_more_method_of_every_generated_file() -> None:
    """Adding a method is one entry of the table (plus its handler): the names, the client's
    typed method and the schema follow from it, with nothing else written by hand."""

    @attrs.define(kw_only=True)
    class PinParams:
        session: str
        view_id: str
        until: int | None = None

    pin = P.Method("fresh/pinView", PinParams, P.CommitResult, doc="keep a view in view.")
    table = {**P.CLIENT_METHODS, pin.name: pin}
    names: dict[str, Any] = {}
    exec(protocol_py.names(table, P.SERVER_METHODS), names)
    assert names["PIN_VIEW"] == "fresh/pinView"
    source = protocol_py.requests(table)
    assert (
        "    def pin_view(self, session: str, view_id: str, until: int | None = None) -> _R:"
        in (source.splitlines())
    )
    namespace: dict[str, Any] = {}
    exec(source.replace("M.PIN_VIEW", '"fresh/pinView"'), namespace)
    sent: list[tuple[str, Any]] = []

    class Front(namespace["Requests"]):  # type: ignore[misc]
        def _result(self, method: str, params: dict[str, Any]) -> Any:
            sent.append((method, params))

    Front().pin_view("s", "v1")
    assert sent == [("fresh/pinView", {"session": "s", "viewId": "v1"})]


def test_protocol_ts_declares_no_wire_type_of_its_own() -> None:
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    assert 'export * from "./protocol.generated";' in text
    assert "export interface" not in text, "wire types belong in fresh_ls/protocol/"
    assert "fresh/" not in text.replace("fresh_ls/", ""), "method names come from the schema"


def test_schema_module_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    assert P.main(["--schema"]) == 0
    assert json.loads(capsys.readouterr().out) == P.schema()


# -- methods and params --------------------------------------------------------------------------


def _python_fields(cls: type) -> dict[str, bool]:
    """Wire name -> optional (has a default)."""
    return {P.camel(a.name): a.default is not attrs.NOTHING for a in attrs.fields(cls)}


def _schema_fields(schema: dict[str, Any], name: str) -> dict[str, bool]:
    d = schema["$defs"][name]
    return {k: k not in d["required"] for k in d["properties"]}


def test_methods_are_exactly_the_servers(schema: dict[str, Any]) -> None:
    client = schema["x-clientMethods"]
    assert set(client) == set(P.CLIENT_METHODS)
    served = {m for m, d in client.items() if d.get("served", True)}
    assert served == set(P.PARAMS), f"served: {sorted(served ^ set(P.PARAMS))}"
    assert {m for m, d in client.items() if "result" not in d} == set(P.NOTIFICATIONS)
    assert set(schema["x-serverMethods"]) == {"fresh/didInvalidate"}
    assert set(client) >= {
        "fresh/observe", "fresh/stale", "fresh/project", "fresh/commit", "fresh/forget",
        "fresh/status", "fresh/checkEdit", "fresh/gate", "fresh/didWrite",
    }  # fmt: skip


@pytest.mark.parametrize("method", sorted(P.CLIENT_METHODS))
def test_params_fields_match(schema: dict[str, Any], method: str) -> None:
    name = schema["x-clientMethods"][method]["params"]
    cls = P.CLIENT_METHODS[method].params
    assert name == cls.__name__
    assert _schema_fields(schema, name) == _python_fields(cls)


def test_initialization_options_match(schema: dict[str, Any]) -> None:
    assert _schema_fields(schema, "InitializationOptions") == _python_fields(
        P.InitializationOptions
    )
    assert set(_python_fields(P.InitializationOptions)) == {"token", "budgetBytes", "policy"}


# -- values against the schema -------------------------------------------------------------------


def _check(schema: dict[str, Any], type_: Any, value: Any, where: str, seen: set[str]) -> None:
    """``value`` conforms to ``type_`` (a schema type, or the name of one of its ``$defs``),
    recursively: no undeclared key, every required key, the declared JSON types."""
    if isinstance(type_, str):
        type_ = {"$ref": f"#/$defs/{type_}"}
    if "$ref" in type_:
        name = type_["$ref"].rsplit("/", 1)[1]
        d = schema["$defs"][name]
        if "enum" in d:
            assert value in d["enum"], f"{where}: {value!r} is not one of {name} {d['enum']}"
            return
        assert isinstance(value, dict), f"{where}: expected an object for {name}, got {value!r}"
        seen.add(name)
        props = d["properties"]
        extra = set(value) - set(props)
        assert not extra, (
            f"{where}: the server returns {sorted(extra)}, which {name} in the schema lacks"
        )
        missing = set(d["required"]) - set(value)
        assert not missing, (
            f"{where}: {name} in the schema requires {sorted(missing)}, the server omits it"
        )
        for key, val in value.items():
            _check(schema, props[key], val, f"{where}.{key}", seen)
        return
    if "anyOf" in type_:
        if value is None and {"type": "null"} in type_["anyOf"]:
            return
        options = [t for t in type_["anyOf"] if t != {"type": "null"}]
        assert len(options) == 1, f"{where}: unions of several types are not checked"
        _check(schema, options[0], value, where, seen)
        return
    t = type_["type"]
    if t == "array":
        assert isinstance(value, list), f"{where}: expected an array, got {value!r}"
        for i, item in enumerate(value):
            _check(schema, type_["items"], item, f"{where}[{i}]", seen)
        return
    ok = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }[t]
    assert ok(value), f"{where}: expected {t}, got {value!r}"


CART = (
    "RATE = 10\n\n\nclass Cart:\n    def __init__(self):\n        self.items = []\n\n"
    "    def total(self, quantity):\n        subtotal = quantity * RATE\n        return subtotal\n"
)


@pytest.mark.timeout(60)
def test_results_match_a_live_server(schema: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "cart.py").write_text(CART)
    (tmp_path / "big.py").write_text(
        "".join(f"def f{i}():\n    return {i}\n\n" for i in range(400))
    )
    seen: set[str] = set()
    client = SyncClient.spawn(
        tmp_path, python=sys.executable, extra_args=["--listen", "--no-watch"]
    )
    try:
        methods = schema["x-clientMethods"]
        result_of = {m: d["result"] for m, d in methods.items() if "result" in d}

        def call(method: str, value: Any, label: str) -> Any:
            _check(schema, result_of[method], value, label, seen)
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
        denied = call(
            "fresh/checkEdit",
            client.check_edit("a", "cart.py", old_text="return subtotal"),
            "checkEdit(changed)",
        )
        assert denied["reason"] == "changed" and denied["units"][0]["diff"]
        call("fresh/checkEdit", client.check_edit("a", "cart.py", whole_file=True), "checkEdit")
        gate = call("fresh/gate", client.gate("a"), "gate")
        assert gate["stale"], "no stale view to check in the gate"
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
            _check(schema, "DidInvalidateParams", n["params"], "didInvalidate", seen)

        endpoint = json.loads((tmp_path / ".fresh-ls" / "endpoint.json").read_text())
        _check(schema, "Endpoint", endpoint, "endpoint.json", seen)
    finally:
        client.close()

    # Every result type a served method returns was exercised, so none can drift unnoticed.
    wanted = {
        "ObserveResult", "ObservedUnit", "StaleResult", "StaleView", "StaleUnit", "LineRange",
        "ObservedRange", "ProjectResult", "Entry", "Omission", "Marker", "CommitResult",
        "ForgetResult", "StatusResult", "SessionSummary", "ViewTextResult",
        "CheckEditResult", "CheckEditUnit", "GateResult", "GateStaleView",
        "DidInvalidateParams", "Endpoint",
    }  # fmt: skip
    assert wanted <= seen, f"not exercised: {sorted(wanted - seen)}"


def test_checks_catch_drift(schema: dict[str, Any]) -> None:
    """A schema that lost a result field, or a class renamed, fails the checks above."""
    drifted = copy.deepcopy(schema)
    del drifted["$defs"]["StatusResult"]["properties"]["plans"]
    status = {
        "version": "0", "root": "/", "sessions": [], "sources": 0, "watching": True,
        "stateDir": "/s", "plans": 0,
    }  # fmt: skip
    _check(schema, "StatusResult", status, "status", set())
    with pytest.raises(AssertionError, match=r"returns \['plans'\]"):
        _check(drifted, "StatusResult", status, "status", set())
    with pytest.raises(AssertionError, match="requires"):
        _check(schema, "ObserveResult", {"viewId": "v"}, "observe", set())
    with pytest.raises(AssertionError, match="expected integer"):
        _check(schema, "StatusResult", {**status, "sources": "0"}, "status", set())
    with pytest.raises(AssertionError, match="not one of Status"):
        _check(schema, "Status", "stale", "status", set())
    renamed = copy.deepcopy(schema)
    props = renamed["$defs"]["ObserveParams"]["properties"]
    props["first"] = props.pop("firstLine")
    assert protocol_ts.generate(renamed) != protocol_ts.generate(schema)
    assert _schema_fields(renamed, "ObserveParams") != _python_fields(P.ObserveParams)
