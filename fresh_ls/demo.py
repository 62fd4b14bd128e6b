"""``fresh-ls demo``: the whole job on a built-in example, no model needed.

A scratch workspace with Python, TypeScript and Go files; a real server over stdio; an
agent session that reads four views; then an agent write, a formatter and a human in an
editor change the files. The demo prints what the sidecar says before the next model
request: which views went stale (with diffs and who changed them), the markers that
replace them, and the budgeted projection of the current code.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fresh_ls.client import SyncClient
from fresh_ls.report import print_projection, print_stale

FILES = {
    "src/cart.py": """RATE = 10


class Cart:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)

    def total(self, quantity):
        subtotal = quantity * RATE
        return subtotal
""",
    "web/price.ts": """export interface Price {
  amount: number;
  currency: string;
}

export const format = (p: Price): string => `${p.amount} ${p.currency}`;

export function discount(p: Price, pct: number): Price {
  return { ...p, amount: p.amount * (1 - pct / 100) };
}
""",
    "svc/stock.go": """package svc

type Stock struct {
	count int
}

func (s *Stock) Take(n int) bool {
	if n > s.count {
		return false
	}
	s.count -= n
	return true
}

func NewStock(n int) *Stock {
	return &Stock{count: n}
}
""",
}


def _section(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 66 - len(title)))


def run_demo(keep: bool = False, as_json: bool = False) -> int:
    root = Path(tempfile.mkdtemp(prefix="fresh-ls-demo-"))
    try:
        for rel, text in FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        with SyncClient.spawn(root) as fresh:
            return _script(fresh, root, as_json)
    finally:
        if keep:
            print(f"\n(scratch workspace kept at {root})", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


def _script(fresh: SyncClient, root: Path, as_json: bool) -> int:
    session = "agent-1"
    out: dict[str, Any] = {"root": str(root)}
    if not as_json:
        print(f"fresh-ls demo · scratch workspace {root}")
        _section("1. the agent reads four views")
    reads = [
        ("call_1", "src/cart.py", 12, 12),  # inside Cart.total
        ("call_2", "web/price.ts", None, None),  # whole file
        ("call_3", "svc/stock.go", 7, 13),  # Stock.Take
        ("call_4", "svc/stock.go", 15, 17),  # NewStock: nobody touches it
    ]
    observed = []
    for view_id, path, first, last in reads:
        r = fresh.observe(session, path, view_id=view_id, first_line=first, last_line=last)
        observed.append(r)
        if not as_json:
            units = ", ".join(
                f"{u['kind']} {u.get('name', '')}".strip()
                + f" (lines {u['firstLine']}-{u['lastLine']})"
                for u in r["units"]
            )
            print(f"{view_id}: {path} lines {r['firstLine']}-{r['lastLine']} → {units}")
    out["observed"] = observed

    if not as_json:
        _section("2. the files change")
    # The agent edits Stock.Take and says so.
    go = root / "svc/stock.go"
    go.write_text(go.read_text().replace("if n > s.count {", "if n <= 0 || n > s.count {"))
    fresh.did_write("svc/stock.go", session=session)
    # A formatter adds a module docstring to cart.py (nobody tells the sidecar).
    cart = root / "src/cart.py"
    cart.write_text('"""Shopping cart."""\n\n' + cart.read_text())
    # A human edits Cart.total in an editor, then saves.
    uri = cart.as_uri()
    before = cart.read_text()
    fresh.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": before}},
    )
    after = before.replace("quantity * RATE", "quantity * RATE * 2")
    fresh.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": after}]},
    )
    time.sleep(0.05)
    cart.write_text(after)
    fresh.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    # A human also retypes the TypeScript discount.
    ts = root / "web/price.ts"
    ts.write_text(ts.read_text().replace("(1 - pct / 100)", "(100 - pct) / 100"))
    if not as_json:
        print("agent   : svc/stock.go, Stock.Take guards n <= 0 (reported with fresh/didWrite)")
        print("format  : src/cart.py gains a docstring at the top (nobody reports it)")
        print("editor  : src/cart.py, Cart.total doubles the rate (didOpen/didChange/didSave)")
        print("outside : web/price.ts, discount rewritten by another process")

    stale = fresh.stale(session)
    out["stale"] = stale
    if not as_json:
        _section("3. fresh/stale: what went stale, and who changed it")
        print_stale(stale)

    plan = fresh.project(session, budget_bytes=2048)
    out["project"] = plan
    commit = fresh.commit(plan["planId"])
    out["commit"] = commit
    exchange = _two_requests(fresh, session, reads)
    out["anchored"] = exchange
    if as_json:
        print(json.dumps(out, indent=2))
        return 0
    _section("4. fresh/project: markers and the projection (budget 2048 bytes)")
    print_projection(plan)
    _section("5. fresh/commit just before sending")
    print(f"ok: {commit['ok']} · changed since the plan: {commit['changed'] or 'nothing'}")
    _section("6. placement anchored: two requests, one refresh")
    first, second = exchange["requests"]
    print(
        f"request 1: {first['markers']} markers; refresh {first['refresh']} "
        f"({first['refreshBytes']} bytes) goes after {first['after']}, the newest tool result"
    )
    print(
        f"request 2 (the agent ran one more tool): refresh {second['refresh']} is "
        f"{'unchanged, byte for byte' if exchange['reused'] else 'CHANGED'}; "
        f"{exchange['prefixBytes']} of its {second['bytes']} bytes are request 1's bytes, "
        "which a prompt cache serves"
    )
    return 0


def _two_requests(
    fresh: SyncClient, session: str, reads: list[tuple[str, str, int | None, int | None]]
) -> dict[str, Any]:
    """Two chat requests through the rewriter with ``placement="anchored"``: the second one
    appends a tool call to the first, and carries the first's refresh where it was."""
    from fresh_ls.harness.rewrite import rewrite_request

    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the stock check"}]

    def call(call_id: str, text: str) -> None:
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "t", "arguments": "{}"},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    for view_id, path, _first, _last in reads:
        call(view_id, f"(what the tool showed of {path})")
    requests: list[dict[str, Any]] = []
    for _ in range(2):
        done = rewrite_request(fresh, session, {"messages": list(messages)}, placement="anchored")
        data = json.dumps(done.request, separators=(",", ":")).encode()
        refreshes = done.plan["refreshes"]
        requests.append(
            {
                "bytes": len(data),
                "markers": len(done.plan["markers"]),
                "refresh": refreshes[-1]["refreshId"] if refreshes else None,
                "after": refreshes[-1]["after"] if refreshes else None,
                "refreshBytes": len(refreshes[-1]["text"].encode()) if refreshes else 0,
                "texts": {r["refreshId"]: r["text"] for r in refreshes},
                "data": data,
            }
        )
        call("call_5", "ok")
    a, b = requests
    prefix = 0
    for x, y in zip(a["data"], b["data"], strict=False):
        if x != y:
            break
        prefix += 1
    reused = bool(a["texts"]) and all(b["texts"].get(k) == v for k, v in a["texts"].items())
    for r in requests:
        del r["data"]
    return {"requests": requests, "reused": reused, "prefixBytes": prefix}
