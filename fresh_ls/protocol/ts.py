"""TypeScript interfaces generated from the protocol's JSON Schema, and ``make protocol``.

``python -P -m fresh_ls.protocol.ts`` rewrites ``vscode-ext/src/protocol.generated.ts`` from
``fresh_ls/protocol/protocol.schema.json`` (itself ``python -P -m fresh_ls.protocol
--schema``), so the extension's types are the Python classes' by construction, and with
them the Python files generated from the method table (``fresh_ls.protocol.python``: the
import-free names and the client's typed methods); ``--check`` fails when any committed
file is stale. tests/test_ext_contract.py runs the same checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent
SCHEMA_PATH = PACKAGE / "protocol.schema.json"
TS_PATH = PACKAGE.parent.parent / "vscode-ext" / "src" / "protocol.generated.ts"


def _ts_type(prop: dict[str, Any], drop_null: bool = False) -> str:
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[1]
    if "anyOf" in prop:
        parts = [_ts_type(p) for p in prop["anyOf"]]
        if drop_null:
            parts = [p for p in parts if p != "null"]
        return " | ".join(parts)
    t = prop["type"]
    if t == "array":
        inner = _ts_type(prop["items"])
        return f"({inner})[]" if " " in inner else f"{inner}[]"
    return {"string": "string", "integer": "number", "number": "number", "boolean": "boolean",
            "null": "null"}[t]  # fmt: skip


def _member(name: str) -> str:
    """``fresh/viewText`` -> ``viewText``: the key of a method in ``ClientMethods``."""
    return name.split("/", 1)[1]


def _doc(text: str | None, indent: str = "") -> list[str]:
    return [f"{indent}/** {text} */"] if text else []


def generate(schema: dict[str, Any]) -> str:
    defs: dict[str, Any] = schema["$defs"]
    out = [
        "// GENERATED from fresh_ls/protocol/protocol.schema.json by",
        "// `python -P -m fresh_ls.protocol.ts` (make protocol): do not edit. The Python classes",
        "// in fresh_ls/protocol/__init__.py are the source; change them, then run",
        "// `make protocol`. tests/test_ext_contract.py fails while either file is stale.",
        "//",
        "// No imports: node's test runner loads this module directly.",
        "",
        f'export const PROTOCOL_VERSION = "{schema["x-version"]}";',
        "",
        "/** Requests and notifications a client sends to the server. */",
        "export const ClientMethods = {",
    ]
    client: dict[str, Any] = schema["x-clientMethods"]
    server: dict[str, Any] = schema["x-serverMethods"]
    out += [f'  {_member(m)}: "{m}",' for m in client]
    out += ["} as const;", "", "/** Notifications the server pushes to its clients. */"]
    out += ["export const ServerMethods = {"]
    out += [f'  {_member(m)}: "{m}",' for m in server]
    out += ["} as const;", ""]
    unserved = [m for m, d in client.items() if d.get("served") is False]
    out += ["/** Methods of the contract this server does not serve yet (they answer -32601). */"]
    out += ["export const UNSERVED_METHODS = ["]
    out += [f'  "{m}",' for m in unserved]
    out += ["] as const;", ""]
    out += ["/** Contract error codes (JSON-RPC `error.code`). */", "export const ErrorCodes = {"]
    out += [f"  {k}: {v}," for k, v in schema["x-errorCodes"].items()]
    out += ["} as const;", ""]

    for name, d in defs.items():
        if d.get("type") == "string" and "enum" in d:
            values = " | ".join(json.dumps(v) for v in d["enum"])
            out += [f"export type {name} = {values};"]
            out += [f"export const {name}Values: readonly {name}[] = ["]
            out += [f"  {json.dumps(v)}," for v in d["enum"]]
            out += ["];", ""]
    for name, d in defs.items():
        if d.get("type") != "object":
            continue
        out += _doc(d.get("description"))
        props: dict[str, Any] = d["properties"]
        if not props:
            out += [f"export interface {name} {{}}", ""]
            continue
        out += [f"export interface {name} {{"]
        required = set(d["required"])
        for key, prop in props.items():
            optional = key not in required
            # An optional key the server leaves out (or a client need not send) is `key?: T`,
            # not `T | null`; a key always sent, maybe null, keeps its null.
            drop_null = optional and "default" in prop and prop["default"] is None
            note = " // addition to the contract" if prop.get("x-addition") else ""
            out.append(f"  {key}{'?' if optional else ''}: {_ts_type(prop, drop_null)};{note}")
        out += ["}", ""]

    out += ["/** Each client method with its params and result (`void` for notifications). */"]
    out += ["export interface ClientMethodTypes {"]
    for m, d in client.items():
        out.append(f'  "{m}": {{ params: {d["params"]}; result: {d.get("result", "void")} }};')
    out += ["}", "", "export interface ServerMethodTypes {"]
    for m, d in server.items():
        out.append(f'  "{m}": {{ params: {d["params"]} }};')
    out += ["}", ""]
    notes = [m for m, d in client.items() if "result" not in d]
    out += ["/** Methods of `ClientMethods` that are notifications (no result). */"]
    out += ["export const CLIENT_NOTIFICATION_METHODS = ["]
    out += [f'  "{m}",' for m in notes]
    out += ["] as const;", ""]
    return "\n".join(out)


def committed_schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def generated() -> dict[Path, str]:
    """Every file ``make protocol`` writes, with what it must hold now. The TypeScript is
    made from the committed schema (what the extension's build reads), the rest from the
    classes."""
    from fresh_ls import protocol
    from fresh_ls.protocol import python

    return {
        SCHEMA_PATH: protocol.schema_json(),
        TS_PATH: generate(protocol.schema()),
        python.NAMES_PATH: python.names(protocol.CLIENT_METHODS, protocol.SERVER_METHODS),
        python.REQUESTS_PATH: python.requests(protocol.CLIENT_METHODS),
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        stale = [p for p, text in generated().items() if p.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"stale: {path}", file=sys.stderr)
        return 1 if stale else 0
    if args:
        print("usage: python -P -m fresh_ls.protocol.ts [--check]", file=sys.stderr)
        return 2
    for path, text in generated().items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
