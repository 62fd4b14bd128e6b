"""fresh/project over a real server: entries are the disk, the budget holds, markers are stable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ._support import CART_PY, Lsp, disk_lines, parse_rendered, replace_in, sha256

pytestmark = pytest.mark.timeout(60)

STATUS_WORDS = ("fresh", "moved", "changed", "stale", "ambiguous", "unreadable")


def assert_entries_match_disk(projection: dict, root: Path) -> None:
    for e in projection["entries"]:
        data = disk_lines(root / e["path"], e["firstLine"], e["lastLine"])
        assert e["text"].encode("utf-8") == data, e["header"]
        assert e["bytes"] == len(data)
        assert e["sha256"] == sha256(data)


def assert_budget(projection: dict, budget: int) -> None:
    assert projection["budgetBytes"] == budget
    assert projection["usedBytes"] == len(projection["rendered"].encode("utf-8"))
    assert projection["usedBytes"] <= budget


async def _three_views_one_changed(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await fresh.observe(path="cart.py", viewId="h", firstLine=13, lastLine=14)
    await fresh.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")


async def test_entries_are_the_disk_bytes_of_their_lines(fresh: Lsp, ws: Path) -> None:
    await _three_views_one_changed(fresh, ws)
    text = (ws / "cart.py").read_text()
    (ws / "cart.py").write_text("# -*- coding: utf-8 -*-\n# ünïcödé\n" + text)
    projection = await fresh.project(policy="all")
    assert [(e["path"], e["firstLine"], e["lastLine"]) for e in projection["entries"]] == [
        ("cart.py", 10, 12),
        ("cart.py", 15, 16),
        ("util.py", 1, 2),
    ]
    assert_entries_match_disk(projection, ws)
    assert_budget(projection, 131072)


async def test_an_entry_carries_its_symbol_views_status_and_header(fresh: Lsp, ws: Path) -> None:
    observed = await fresh.observe(path="cart.py", viewId="call_7", firstLine=9, lastLine=9)
    (ws / "cart.py").write_text("import os\n\n" + CART_PY.replace("* RATE", "* RATE * 2"))
    projection = await fresh.project()
    [entry] = projection["entries"]
    text = (
        "    def total(self, quantity):\n        subtotal = quantity * RATE * 2\n"
        "        return subtotal\n"
    )
    assert entry["unitId"] == observed["units"][0]["unitId"]
    assert {k: v for k, v in entry.items() if k not in ("unitId", "label", "header")} == {
        "viewIds": ["call_7"],
        "path": "cart.py",
        "firstLine": 10,
        "lastLine": 12,
        "kind": "symbol",
        "name": "Cart.total",
        "symbolKind": "method",
        "bytes": len(text.encode()),
        "sha256": sha256(text),
        "status": "changed",
        "editorDirty": False,
        "text": text,
    }
    header = entry["header"]
    for part in ("cart.py", "lines 10-12", f"{len(text.encode())} bytes", "Cart.total", "call_7"):
        assert part in header, (part, header)
    assert entry["header"] + "\n" + text in projection["rendered"]


async def test_rendered_frames_every_entry_by_header_and_byte_count(fresh: Lsp, ws: Path) -> None:
    # Text that looks like a header, and a last line without a newline, must not confuse it.
    (ws / "tricky.py").write_text('def f():\n    return "[E-000000] x.py lines 1-2 (9 bytes)"')
    await fresh.observe(path="tricky.py", viewId="k", firstLine=1, lastLine=2)
    await _three_views_one_changed(fresh, ws)
    projection = await fresh.project(policy="all")
    framed = parse_rendered(projection["rendered"])
    assert framed == [(e["header"], e["text"]) for e in projection["entries"]]
    tricky = next(text for header, text in framed if "tricky.py" in header)
    assert tricky.endswith('(9 bytes)"')


async def test_used_bytes_is_the_size_of_rendered_and_within_budget(fresh: Lsp, ws: Path) -> None:
    await _three_views_one_changed(fresh, ws)
    for budget in (131072, 1000, 300, 200, 0):
        assert_budget(await fresh.project(policy="all", budgetBytes=budget), budget)


async def test_nothing_selected_renders_the_empty_string(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    projection = await fresh.project()
    assert (projection["entries"], projection["omitted"], projection["markers"]) == ([], [], [])
    assert (projection["rendered"], projection["usedBytes"]) == ("", 0)
    assert (await fresh.project("nobody"))["rendered"] == ""


async def test_policy_stale_replaces_only_views_that_are_not_fresh(fresh: Lsp, ws: Path) -> None:
    await _three_views_one_changed(fresh, ws)
    projection = await fresh.project(policy="stale")
    assert [m["viewId"] for m in projection["markers"]] == ["t"]
    assert [e["viewIds"] for e in projection["entries"]] == [["t"]]
    default = await fresh.project()  # the default policy is "stale"
    assert default["markers"] == projection["markers"]
    assert default["rendered"] == projection["rendered"]


async def test_policy_all_replaces_every_view(fresh: Lsp, ws: Path) -> None:
    await _three_views_one_changed(fresh, ws)
    projection = await fresh.project(policy="all")
    # Most recently observed first.
    assert [m["viewId"] for m in projection["markers"]] == ["u", "h", "t"]
    assert sorted(v for e in projection["entries"] for v in e["viewIds"]) == ["h", "t", "u"]
    assert {e["viewIds"][0]: e["status"] for e in projection["entries"]} == {
        "t": "changed",
        "h": "fresh",
        "u": "fresh",
    }


async def test_view_ids_restrict_the_projection(fresh: Lsp, ws: Path) -> None:
    await _three_views_one_changed(fresh, ws)
    projection = await fresh.project(policy="all", viewIds=["h"])
    assert [m["viewId"] for m in projection["markers"]] == ["h"]
    assert [e["viewIds"] for e in projection["entries"]] == [["h"]]


async def test_a_replaced_view_is_served_whole_fresh_units_included(fresh: Lsp, ws: Path) -> None:
    observed = await fresh.observe(path="util.py", viewId="u", firstLine=2, lastLine=6)
    assert [u.get("name") for u in observed["units"]] == ["add", None, "sub"]
    replace_in(ws / "util.py", "return a - b", "return b - a")
    projection = await fresh.project()
    served = {e["unitId"]: e["status"] for e in projection["entries"]}
    served.update({o["unitId"]: o["reason"] for o in projection["omitted"]})
    assert {u["unitId"] for u in observed["units"]} <= set(served)
    by_name = {e.get("name"): e["status"] for e in projection["entries"]}
    assert (by_name["add"], by_name["sub"]) == ("fresh", "changed")
    assert_entries_match_disk(projection, ws)


async def test_an_entry_over_budget_is_omitted_whole_with_its_size(fresh: Lsp, ws: Path) -> None:
    await _three_views_one_changed(fresh, ws)
    projection = await fresh.project(budgetBytes=100)
    assert projection["entries"] == []
    assert (projection["rendered"], projection["usedBytes"]) == ("", 0)
    total = disk_lines(ws / "cart.py", 8, 10)
    assert len(projection["omitted"]) == 1
    omission = projection["omitted"][0]
    assert {k: v for k, v in omission.items() if k != "unitId"} == {
        "viewIds": ["t"],
        "path": "cart.py",
        "name": "Cart.total",
        "reason": "over-budget",
        "bytes": len(total),
    }
    [marker] = projection["markers"]
    assert marker["viewId"] == "t"
    assert "cart.py" in marker["text"] and "lines 9-9" in marker["text"]
    assert f"{len(total)} bytes" in marker["text"]
    assert "again" in marker["text"]  # says what to do: read the file again


async def test_a_smaller_later_entry_still_fits(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="small", firstLine=1, lastLine=1)
    await fresh.observe(path="cart.py", viewId="big", firstLine=4, lastLine=10)
    replace_in(ws / "cart.py", "RATE = 10\n", "RATE = 11\n")
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    full = await fresh.project()
    small_only = await fresh.project(viewIds=["small"])
    budget = small_only["usedBytes"]
    assert budget < full["usedBytes"]
    projection = await fresh.project(budgetBytes=budget)
    assert [e["viewIds"] for e in projection["entries"]] == [["small"]]
    assert {o["reason"] for o in projection["omitted"]} == {"over-budget"}
    assert {v for o in projection["omitted"] for v in o["viewIds"]} == {"big"}
    assert all(isinstance(o["bytes"], int) for o in projection["omitted"])
    assert_budget(projection, budget)
    assert_entries_match_disk(projection, ws)


async def test_a_unit_inside_a_selected_unit_is_not_repeated(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="method", firstLine=9, lastLine=9)
    await fresh.observe(path="cart.py", viewId="klass", firstLine=4, lastLine=10)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    projection = await fresh.project()
    assert [(e["name"], e["viewIds"]) for e in projection["entries"]] == [
        ("Cart", ["klass", "method"])
    ]
    label = projection["entries"][0]["label"]
    for marker in projection["markers"]:
        assert f"[{label}]" in marker["text"]


async def test_a_whole_file_view_that_does_not_fit_falls_back_to_pieces(
    fresh: Lsp, ws: Path
) -> None:
    await fresh.observe(path="cart.py", viewId="w")
    replace_in(ws / "cart.py", "    return 1\n", "    return 2\n")
    whole = await fresh.project()
    assert [e["kind"] for e in whole["entries"]] == ["file"]
    budget = whole["usedBytes"] - 1
    projection = await fresh.project(budgetBytes=budget)
    assert projection["entries"], "some top-level piece fits"
    assert all(e["kind"] in ("symbol", "text") for e in projection["entries"])
    assert all(e["viewIds"] == ["w"] for e in projection["entries"])
    assert projection["omitted"], "the pieces together do not fit either"
    for omission in projection["omitted"]:
        assert (omission["reason"], omission["viewIds"]) == ("over-budget", ["w"])
        assert omission["bytes"] > 0
    served = sorted([(e["firstLine"], e["lastLine"]) for e in projection["entries"]])
    assert served[0][0] >= 1 and served[-1][1] <= 14
    assert_budget(projection, budget)
    assert_entries_match_disk(projection, ws)
    [marker] = projection["markers"]
    assert all(f"[{e['label']}]" in marker["text"] for e in projection["entries"])


async def test_markers_and_rendered_are_byte_identical_while_nothing_changes(
    fresh: Lsp, ws: Path
) -> None:
    await _three_views_one_changed(fresh, ws)
    one = await fresh.project(policy="all")
    two = await fresh.project(policy="all")
    assert one["planId"] != two["planId"]
    assert one["markers"] == two["markers"]
    assert one["rendered"].encode() == two["rendered"].encode()
    assert one["entries"] == two["entries"]


async def test_markers_name_no_status_and_survive_the_code_moving(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    before = await fresh.project()
    (ws / "cart.py").write_text("import os\nimport sys\n\n" + (ws / "cart.py").read_text())
    after = await fresh.project()
    assert (before["entries"][0]["firstLine"], after["entries"][0]["firstLine"]) == (8, 11)
    assert before["rendered"] != after["rendered"]
    assert before["markers"] == after["markers"]
    [marker] = after["markers"]
    text = marker["text"]
    assert "t" in text and "cart.py" in text and "lines 9-9" in text
    assert f"[{after['entries'][0]['label']}]" in text
    words = set(re.findall(r"[a-z]+", text.replace("[fresh-ls]", "").lower()))
    assert not words & set(STATUS_WORDS), text
    assert "lines 11" not in text  # no current line numbers


async def test_deleted_code_is_an_omission_and_the_marker_says_read_again(
    fresh: Lsp, ws: Path
) -> None:
    await fresh.observe(path="util.py", viewId="u", firstLine=5, lastLine=6)
    (ws / "util.py").unlink()
    projection = await fresh.project()
    assert projection["entries"] == []
    assert [(o["path"], o["reason"], o["viewIds"]) for o in projection["omitted"]] == [
        ("util.py", "deleted", ["u"])
    ]
    [marker] = projection["markers"]
    assert "util.py" in marker["text"] and "lines 5-6" in marker["text"]
    assert "again" in marker["text"]


async def test_initialization_options_set_the_connection_defaults(ws: Path, start) -> None:
    conn = await start(ws, "--no-watch", init_options={"budgetBytes": 64, "policy": "all"})
    await conn.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    projection = await conn.project()
    assert projection["budgetBytes"] == 64
    assert [m["viewId"] for m in projection["markers"]] == ["t"]  # "all": a fresh view too
    assert projection["entries"] == [] and projection["omitted"][0]["reason"] == "over-budget"
    explicit = await conn.project(budgetBytes=131072, policy="stale")
    assert (explicit["budgetBytes"], explicit["markers"]) == (131072, [])
