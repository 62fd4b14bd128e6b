"""fresh/observe over a real server: ranges, whole files, ids, given text, kinds, units."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._support import CART_PY, Lsp, check_diff, sha256

pytestmark = pytest.mark.timeout(60)


def _without_unit_ids(result: dict) -> list[str]:
    """Strip (and return) the unit ids, which are opaque; everything else is compared."""
    ids = [u.pop("unitId") for u in result["units"]]
    assert all(isinstance(i, str) and i for i in ids)
    return ids


async def test_a_line_in_a_method_maps_to_the_method_by_dotted_name(fresh: Lsp) -> None:
    result = await fresh.observe(path="cart.py", viewId="call_7", firstLine=9, lastLine=9)
    _without_unit_ids(result)
    assert result == {
        "viewId": "call_7",
        "path": "cart.py",
        "firstLine": 9,
        "lastLine": 9,
        "kind": "read",
        "status": "fresh",
        "units": [
            {
                "kind": "symbol",
                "name": "Cart.total",
                "symbolKind": "method",
                "firstLine": 8,
                "lastLine": 10,
            }
        ],
    }


async def test_a_range_over_several_definitions_maps_each_innermost_one(fresh: Lsp) -> None:
    result = await fresh.observe(path="cart.py", viewId="v", firstLine=5, lastLine=10)
    _without_unit_ids(result)
    assert result["units"] == [
        {
            "kind": "symbol",
            "name": "Cart.__init__",
            "symbolKind": "method",
            "firstLine": 5,
            "lastLine": 6,
        },
        {"kind": "symbol", "name": "Cart", "symbolKind": "class", "firstLine": 4, "lastLine": 10},
        {
            "kind": "symbol",
            "name": "Cart.total",
            "symbolKind": "method",
            "firstLine": 8,
            "lastLine": 10,
        },
    ]


async def test_a_constant_assignment_is_a_text_unit(fresh: Lsp) -> None:
    result = await fresh.observe(path="cart.py", viewId="v", firstLine=1, lastLine=1)
    _without_unit_ids(result)
    assert result["units"] == [{"kind": "text", "firstLine": 1, "lastLine": 1}]
    assert result["status"] == "fresh"


async def test_no_range_is_a_whole_file_read_with_a_file_unit(fresh: Lsp) -> None:
    result = await fresh.observe(path="cart.py", viewId="v")
    _without_unit_ids(result)
    assert result == {
        "viewId": "v",
        "path": "cart.py",
        "firstLine": 1,
        "lastLine": 14,
        "kind": "read",
        "status": "fresh",
        "units": [{"kind": "file", "firstLine": 1, "lastLine": 14}],
    }


async def test_a_range_covering_every_line_is_a_whole_file_read(fresh: Lsp) -> None:
    result = await fresh.observe(path="cart.py", viewId="v", firstLine=1, lastLine=14)
    _without_unit_ids(result)
    assert result["units"] == [{"kind": "file", "firstLine": 1, "lastLine": 14}]


async def test_last_line_past_the_end_is_clamped(fresh: Lsp) -> None:
    result = await fresh.observe(path="cart.py", viewId="v", firstLine=13, lastLine=500)
    assert (result["firstLine"], result["lastLine"]) == (13, 14)
    _without_unit_ids(result)
    assert result["units"] == [
        {
            "kind": "symbol",
            "name": "helper",
            "symbolKind": "function",
            "firstLine": 13,
            "lastLine": 14,
        }
    ]


async def test_an_unsupported_extension_maps_to_a_file_unit(fresh: Lsp) -> None:
    result = await fresh.observe(path="notes.md", viewId="v", firstLine=3, lastLine=3)
    _without_unit_ids(result)
    assert result == {
        "viewId": "v",
        "path": "notes.md",
        "firstLine": 3,
        "lastLine": 3,
        "kind": "read",
        "status": "fresh",
        "units": [{"kind": "file", "firstLine": 1, "lastLine": 3}],
    }


async def test_typescript_arrow_function_bound_to_a_const_is_a_definition(fresh: Lsp) -> None:
    result = await fresh.observe(path="web/price.ts", viewId="v", firstLine=6, lastLine=6)
    _without_unit_ids(result)
    assert result["units"] == [
        {
            "kind": "symbol",
            "name": "format",
            "symbolKind": "function",
            "firstLine": 6,
            "lastLine": 6,
        }
    ]


async def test_go_method_and_struct(fresh: Lsp) -> None:
    method = await fresh.observe(path="svc/stock.go", viewId="m", firstLine=8, lastLine=8)
    struct = await fresh.observe(path="svc/stock.go", viewId="s", firstLine=4, lastLine=4)
    _without_unit_ids(method)
    _without_unit_ids(struct)
    assert method["units"] == [
        {
            "kind": "symbol",
            "name": "Stock.Take",
            "symbolKind": "method",
            "firstLine": 7,
            "lastLine": 13,
        }
    ]
    assert struct["units"] == [
        {"kind": "symbol", "name": "Stock", "symbolKind": "struct", "firstLine": 3, "lastLine": 5}
    ]


async def test_path_is_relative_to_the_root_whatever_form_was_given(fresh: Lsp, ws: Path) -> None:
    absolute = await fresh.observe(path=str(ws / "web" / "price.ts"), viewId="a", firstLine=1)
    dotted = await fresh.observe(path="./web/../web/price.ts", viewId="b", firstLine=1)
    assert absolute["path"] == dotted["path"] == "web/price.ts"


async def test_view_id_is_minted_when_absent(fresh: Lsp) -> None:
    one = await fresh.observe(path="cart.py", firstLine=9, lastLine=9)
    two = await fresh.observe(path="cart.py", firstLine=9, lastLine=9)
    assert isinstance(one["viewId"], str) and one["viewId"]
    assert one["viewId"] != two["viewId"]
    listed = [v["viewId"] for v in (await fresh.stale())["views"]]
    assert listed == [one["viewId"], two["viewId"]]


async def test_observing_the_same_view_id_again_replaces_it(fresh: Lsp) -> None:
    await fresh.observe(path="cart.py", viewId="call_1", firstLine=9, lastLine=9)
    again = await fresh.observe(path="util.py", viewId="call_1", firstLine=5, lastLine=6)
    assert (again["path"], again["firstLine"], again["lastLine"]) == ("util.py", 5, 6)
    views = (await fresh.stale())["views"]
    assert [(v["viewId"], v["path"], v["observed"]["firstLine"]) for v in views] == [
        ("call_1", "util.py", 5)
    ]
    assert (await fresh.status())["sessions"] == [{"session": "s", "views": 1, "stale": 0}]


async def test_unit_ids_are_shared_by_views_of_the_same_definition(fresh: Lsp) -> None:
    one = await fresh.observe(path="cart.py", viewId="a", firstLine=9, lastLine=9)
    two = await fresh.observe(path="cart.py", viewId="b", firstLine=8, lastLine=10)
    assert one["units"][0]["unitId"] == two["units"][0]["unitId"]


async def test_given_text_equal_to_the_disk_is_fresh(fresh: Lsp) -> None:
    # Tools strip the final newline; the server restores it.
    result = await fresh.observe(
        path="cart.py",
        viewId="v",
        firstLine=9,
        lastLine=10,
        text="        subtotal = quantity * RATE\n        return subtotal",
    )
    assert result["status"] == "fresh"
    view = await fresh.view("v")
    assert view["observed"]["sha256"] == sha256(
        "        subtotal = quantity * RATE\n        return subtotal\n"
    )


async def test_given_text_that_differs_from_the_disk_is_already_changed(
    fresh: Lsp, ws: Path
) -> None:
    result = await fresh.observe(
        path="cart.py", viewId="v", firstLine=9, lastLine=9, text="        subtotal = 0\n"
    )
    assert result["status"] == "changed"
    view = await fresh.view("v")
    assert view["status"] == "changed"
    assert view["observed"]["sha256"] == sha256("        subtotal = 0\n")
    unit = view["units"][0]
    assert unit["status"] == "changed"
    # The observed line never stood on disk: "current" is line 9 or the method holding it.
    current = (unit["current"]["firstLine"], unit["current"]["lastLine"])
    assert current in ((9, 9), (8, 10))
    check_diff(unit["diff"], "cart.py", (9, 9), "        subtotal = 0\n", current, ws / "cart.py")
    assert "-        subtotal = 0\n" in unit["diff"]
    assert "+        subtotal = quantity * RATE\n" in unit["diff"]


async def test_observe_without_text_takes_the_current_lines(fresh: Lsp) -> None:
    await fresh.observe(path="cart.py", viewId="v", firstLine=8, lastLine=10)
    view = await fresh.view("v")
    assert view["observed"] == {
        "firstLine": 8,
        "lastLine": 10,
        "sha256": sha256("".join(CART_PY.splitlines(keepends=True)[7:10])),
    }


async def test_kind_edit_result_is_kept_and_named_in_the_marker(fresh: Lsp) -> None:
    result = await fresh.observe(
        path="cart.py", viewId="e", firstLine=9, lastLine=9, kind="editResult"
    )
    assert result["kind"] == "editResult"
    assert (await fresh.view("e"))["kind"] == "editResult"
    read = await fresh.observe(path="cart.py", viewId="r", firstLine=9, lastLine=9)
    assert read["kind"] == "read"
    markers = {m["viewId"]: m["text"] for m in (await fresh.project(policy="all"))["markers"]}
    assert markers["e"].startswith("[fresh-ls] e, an edit result, showed cart.py lines 9-9")
    assert markers["r"].startswith("[fresh-ls] r showed cart.py lines 9-9")


async def test_an_empty_file_has_no_lines(fresh: Lsp, ws: Path) -> None:
    (ws / "empty.py").write_bytes(b"")
    result = await fresh.observe(path="empty.py", viewId="v")
    _without_unit_ids(result)
    assert (result["firstLine"], result["lastLine"]) == (1, 0)
    assert result["units"] == [{"kind": "file", "firstLine": 1, "lastLine": 0}]
    view = await fresh.view("v")
    assert view["status"] == "fresh"
    assert view["observed"]["sha256"] == sha256("")


async def test_crlf_belongs_to_the_line_and_a_lone_cr_ends_none(fresh: Lsp, ws: Path) -> None:
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\rstill two\r\nthree\r\n")
    result = await fresh.observe(path="crlf.txt", viewId="v", firstLine=2, lastLine=2)
    assert (result["firstLine"], result["lastLine"]) == (2, 2)
    assert (await fresh.view("v"))["observed"]["sha256"] == sha256(b"two\rstill two\r\n")
    whole = await fresh.observe(path="crlf.txt", viewId="w")
    assert whole["lastLine"] == 3
