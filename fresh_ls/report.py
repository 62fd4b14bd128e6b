"""Readable text for people: tables of sessions and views, diffs, the projection.

Every number carries its unit, as in the prompts the sidecar writes (``lines 12-30``,
``412 bytes``). Machines use ``--json`` instead.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

_MARK = {
    "fresh": "fresh",
    "moved": "moved",
    "changed": "CHANGED",
    "ambiguous": "AMBIGUOUS",
    "deleted": "DELETED",
    "unreadable": "UNREADABLE",
}


def table(rows: list[list[str]], headers: list[str], out: TextIO = sys.stdout) -> None:
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=out)


def plural(n: int, noun: str) -> str:
    """``1 view``, ``2 views``: counts in what people read are never ``1 views``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def print_status(result: dict[str, Any], out: TextIO = sys.stdout) -> None:
    print(f"fresh-ls {result['version']} serving {result['root']}", file=out)
    print(
        f"state dir {result['stateDir']} · {plural(result['sources'], 'file')} tracked · "
        f"watcher {'on' if result['watching'] else 'off'}",
        file=out,
    )
    if not result["sessions"]:
        print("no sessions yet: a harness registers views with fresh/observe", file=out)
        return
    rows = [
        [s["session"], plural(s["views"], "view"), f"{s['stale']} stale"]
        for s in result["sessions"]
    ]
    table(rows, ["session", "views", "stale"], out)


def _lines(r: dict[str, Any] | None) -> str:
    return "—" if r is None else f"lines {r['firstLine']}-{r['lastLine']}"


def print_stale(result: dict[str, Any], out: TextIO = sys.stdout) -> None:
    views = result["views"]
    if not views:
        print("this session has no views", file=out)
        return
    rows = []
    for v in views:
        dirty = " (editor has unsaved edits)" if v["editorDirty"] else ""
        rows.append(
            [v["viewId"], _MARK[v["status"]], f"{v['path']} {_lines(v['observed'])}{dirty}"]
        )
    table(rows, ["view", "status", "observed"], out)
    for v in views:
        for u in v["units"]:
            if u["status"] == "fresh":
                continue
            what = u.get("name") or ("whole file" if u["kind"] == "file" else "text")
            by = f" · changed by {u['changedBy']}" if u.get("changedBy") else ""
            print(
                f"\n{v['viewId']} · {what}: {u['status']} · observed {_lines(u['observed'])}"
                f" · now {_lines(u['current'])}{by}",
                file=out,
            )
            if u.get("diff"):
                print(u["diff"].rstrip("\n"), file=out)


def print_projection(result: dict[str, Any], out: TextIO = sys.stdout) -> None:
    print(
        f"plan {result['planId']} · {len(result['entries'])} entries · "
        f"{result['usedBytes']} of {result['budgetBytes']} bytes",
        file=out,
    )
    for m in result["markers"]:
        print(f"marker for {m['viewId']}: {m['text']}", file=out)
    for o in result["omitted"]:
        size = f", {o['bytes']} bytes" if o.get("bytes") is not None else ""
        print(
            f"omitted {o.get('name') or o['unitId']} in {o['path']}: {o['reason']}{size}", file=out
        )
    if result["rendered"]:
        print("\n" + result["rendered"], end="", file=out)
