"""fresh/stale over a real server: statuses, units, diffs, range overlap, who changed it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from ._support import CART_PY, Lsp, check_diff, replace_in, sha256

pytestmark = pytest.mark.timeout(60)

LINE_9 = "        subtotal = quantity * RATE\n"


async def test_untouched_view_is_fresh_with_its_full_shape(fresh: Lsp) -> None:
    before = time.time()
    observed = await fresh.observe(path="cart.py", viewId="call_7", firstLine=9, lastLine=9)
    after = time.time()
    got = await fresh.stale()
    # When it was read, by the server's wall clock: the editor's "read 5 minutes ago".
    observed_at = got["views"][0].pop("observedAt")
    assert before <= observed_at <= after
    assert got == {
        "views": [
            {
                "viewId": "call_7",
                "path": "cart.py",
                "kind": "read",
                "status": "fresh",
                "editorDirty": False,
                "observed": {"firstLine": 9, "lastLine": 9, "sha256": sha256(LINE_9)},
                "units": [
                    {
                        "unitId": observed["units"][0]["unitId"],
                        "kind": "symbol",
                        "name": "Cart.total",
                        "symbolKind": "method",
                        "status": "fresh",
                        "observed": {"firstLine": 9, "lastLine": 9},
                        "current": {"firstLine": 9, "lastLine": 9},
                        "diff": None,
                        "changedBy": None,
                    }
                ],
            }
        ]
    }


async def test_a_session_with_no_views_answers_empty(fresh: Lsp) -> None:
    assert await fresh.stale("nobody") == {"views": []}


async def test_lines_added_above_make_the_view_moved(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="h", firstLine=13, lastLine=14)
    (ws / "cart.py").write_text('"""Cart."""\n\n' + CART_PY)
    view = await fresh.view("h")
    assert view["status"] == "moved"
    unit = view["units"][0]
    assert (unit["status"], unit["observed"], unit["current"], unit["diff"]) == (
        "moved",
        {"firstLine": 13, "lastLine": 14},
        {"firstLine": 15, "lastLine": 16},
        None,
    )


async def test_an_edit_in_the_observed_lines_makes_it_changed_with_a_diff(
    fresh: Lsp, ws: Path
) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    (ws / "cart.py").write_text(
        '"""Cart."""\n\n' + CART_PY.replace("quantity * RATE", "quantity * RATE * 2")
    )
    view = await fresh.view("t")
    assert view["status"] == "changed"
    unit = view["units"][0]
    assert unit["status"] == "changed"
    assert unit["observed"] == {"firstLine": 9, "lastLine": 9}
    # Where the line is now: the changed line 11 itself, or the method holding it (10-12).
    current = (unit["current"]["firstLine"], unit["current"]["lastLine"])
    assert current in ((11, 11), (10, 12))
    check_diff(unit["diff"], "cart.py", (9, 9), LINE_9, current, ws / "cart.py")
    assert "-        subtotal = quantity * RATE\n" in unit["diff"]
    assert "+        subtotal = quantity * RATE * 2\n" in unit["diff"]


async def test_a_multi_line_diff_has_file_line_numbers_in_its_hunk(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="c", firstLine=4, lastLine=10)
    (ws / "cart.py").write_text(
        "import os\n" + CART_PY.replace("        self.items = []\n", "        self.items = {}\n")
    )
    view = await fresh.view("c")
    unit = next(u for u in view["units"] if u.get("name") == "Cart.__init__")
    assert unit["status"] == "changed"
    observed = (unit["observed"]["firstLine"], unit["observed"]["lastLine"])
    current = (unit["current"]["firstLine"], unit["current"]["lastLine"])
    assert (observed, current) == ((5, 6), (6, 7))
    seen = "".join(CART_PY.splitlines(keepends=True)[4:6])
    check_diff(unit["diff"], "cart.py", observed, seen, current, ws / "cart.py")
    assert "@@ -5,2 +6,2 @@" in unit["diff"] or "@@ -6 +7 @@" in unit["diff"]


async def test_an_edit_outside_the_observed_lines_keeps_the_view_fresh(
    fresh: Lsp, ws: Path
) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await fresh.observe(path="cart.py", viewId="h", firstLine=13, lastLine=14)
    replace_in(ws / "cart.py", "    return 1\n", "    return 2\n")
    statuses = {v["viewId"]: v["status"] for v in (await fresh.stale())["views"]}
    assert statuses == {"t": "fresh", "h": "changed"}


async def test_an_edit_in_the_same_definition_outside_the_observed_lines_keeps_fresh(
    fresh: Lsp, ws: Path
) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    replace_in(ws / "cart.py", "        return subtotal\n", "        return round(subtotal)\n")
    view = await fresh.view("t")
    assert view["status"] == "fresh"
    assert view["units"][0]["current"] == {"firstLine": 9, "lastLine": 9}


async def test_a_deleted_file_makes_its_views_deleted(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    (ws / "util.py").unlink()
    view = await fresh.view("u")
    assert view["status"] == "deleted"
    assert [(u["status"], u["current"], u["diff"]) for u in view["units"]] == [
        ("deleted", None, None)
    ]


async def test_a_deleted_definition_makes_its_view_deleted(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="h", firstLine=13, lastLine=14)
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    (ws / "cart.py").write_text(CART_PY.replace("\n\ndef helper():\n    return 1\n", ""))
    statuses = {v["viewId"]: v["status"] for v in (await fresh.stale())["views"]}
    assert statuses == {"h": "deleted", "t": "fresh"}
    unit = (await fresh.view("h"))["units"][0]
    assert (unit["name"], unit["status"], unit["current"]) == ("helper", "deleted", None)


async def test_a_file_turned_binary_makes_its_views_unreadable(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    (ws / "util.py").write_bytes(b"\x00\x01\x02")
    view = await fresh.view("u")
    assert view["status"] == "unreadable"
    assert view["units"][0]["current"] is None


async def test_the_view_status_is_the_worst_of_its_units(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="c", firstLine=5, lastLine=14)
    (ws / "cart.py").write_text(
        "import os\n" + CART_PY.replace("def helper():\n    return 1\n", "")
    )
    view = await fresh.view("c")
    by_name = {u["name"]: u["status"] for u in view["units"] if u["kind"] == "symbol"}
    assert by_name == {
        "Cart.__init__": "moved",
        "Cart": "moved",
        "Cart.total": "moved",
        "helper": "deleted",
    }
    order = ["fresh", "moved", "changed", "ambiguous", "deleted", "unreadable"]
    assert view["status"] == max((u["status"] for u in view["units"]), key=order.index)
    assert view["status"] == "deleted"


async def test_view_ids_select_and_order_the_views(fresh: Lsp) -> None:
    for vid, line in (("a", 1), ("b", 9), ("c", 13)):
        await fresh.observe(path="cart.py", viewId=vid, firstLine=line, lastLine=line)
    views = (await fresh.stale(viewIds=["c", "a"]))["views"]
    assert [v["viewId"] for v in views] == ["c", "a"]
    assert [v["viewId"] for v in (await fresh.stale())["views"]] == ["a", "b", "c"]


async def test_sessions_are_separate(fresh: Lsp) -> None:
    await fresh.observe(session="one", path="cart.py", viewId="a", firstLine=9, lastLine=9)
    await fresh.observe(session="two", path="cart.py", viewId="a", firstLine=1, lastLine=1)
    one = (await fresh.stale("one"))["views"]
    two = (await fresh.stale("two"))["views"]
    assert [v["observed"]["firstLine"] for v in one] == [9]
    assert [v["observed"]["firstLine"] for v in two] == [1]


# -- editorDirty: an unsaved buffer never changes "current" --------------------------------


async def test_an_unsaved_editor_change_sets_editor_dirty_only(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await fresh.observe(path="util.py", viewId="u", firstLine=1, lastLine=2)
    fresh.did_open("cart.py", CART_PY)
    await fresh.sync_point()
    assert (await fresh.view("t"))["editorDirty"] is False
    # Line 14 ("    return 1"), far from the observed line 9: dirty anywhere counts.
    fresh.did_change("cart.py", 2, ((13, 11), (13, 12), "2"))
    view = await fresh.view("t")
    assert (view["status"], view["editorDirty"]) == ("fresh", True)
    assert (await fresh.view("u"))["editorDirty"] is False
    projection = await fresh.project(policy="all")
    entry = next(e for e in projection["entries"] if e["path"] == "cart.py")
    assert entry["editorDirty"] is True
    assert (
        entry["text"] == "    def total(self, quantity):\n" + LINE_9 + "        return subtotal\n"
    )
    assert (ws / "cart.py").read_text() == CART_PY


async def test_incremental_changes_are_applied_at_their_ranges(fresh: Lsp, ws: Path) -> None:
    """Edit the buffer, then write the text the edits must have produced to the disk:
    the buffer equals the disk again only if every range was applied exactly."""
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    fresh.did_open("cart.py", CART_PY)
    fresh.did_change(
        "cart.py",
        2,
        ((8, 30), (8, 34), "RATE * 2"),  # line 9: RATE -> RATE * 2
        ((0, 7), (0, 9), "12"),  # line 1: RATE = 10 -> RATE = 12
        ((12, 0), (13, 12), "def helper():\n    x = 1\n    return x"),  # multi-line
        ((1, 0), (2, 0), ""),  # drop one blank line
    )
    expected = (
        CART_PY.replace("RATE = 10\n\n\n", "RATE = 12\n\n", 1)
        .replace("quantity * RATE", "quantity * RATE * 2")
        .replace("def helper():\n    return 1\n", "def helper():\n    x = 1\n    return x\n")
    )
    assert (await fresh.view("t"))["editorDirty"] is True
    (ws / "cart.py").write_text(expected)
    view = await fresh.view("t")
    assert view["editorDirty"] is False
    assert view["status"] == "changed"


async def test_incremental_positions_count_utf16_code_units(fresh: Lsp, ws: Path) -> None:
    text = 'NAME = "🛒 cart"\nPRICE = "€5"\n'
    (ws / "shop.py").write_text(text)
    await fresh.observe(path="shop.py", viewId="v", firstLine=1, lastLine=2)
    fresh.did_open("shop.py", text)
    # "🛒" is two UTF-16 code units: "cart" starts at character 11 of line 0.
    fresh.did_change("shop.py", 2, ((0, 11), (0, 15), "basket"), ((1, 10), (1, 11), "6"))
    (ws / "shop.py").write_text('NAME = "🛒 basket"\nPRICE = "€6"\n')
    assert (await fresh.view("v"))["editorDirty"] is False


@pytest.mark.parametrize(
    "odd",
    ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"],
    ids=["form-feed", "vertical-tab", "file-separator", "next-line", "line-sep", "para-sep"],
)
async def test_incremental_positions_count_only_lsp_line_ends(
    fresh: Lsp, ws: Path, odd: str
) -> None:
    """LSP lines end at \\n, \\r\\n or \\r only: a form feed (Python's stdlib is full of
    them) or U+2028 in a string literal ends no line, so an edit below it lands where the
    editor meant it."""
    text = f'def a():\n    return "x{odd}y"\n{odd}\ndef b():\n    return 2\n'
    (ws / "odd.py").write_text(text, newline="")
    await fresh.observe(path="odd.py", viewId="v", firstLine=4, lastLine=5)
    fresh.did_open("odd.py", text)
    fresh.did_change("odd.py", 2, ((4, 11), (4, 12), "3"))  # line 5: "    return 2"
    (ws / "odd.py").write_text(text.replace("return 2", "return 3"), newline="")
    assert (await fresh.view("v"))["editorDirty"] is False


async def test_incremental_positions_in_a_negotiated_utf8_encoding(ws: Path, start) -> None:
    caps = lsp.ClientCapabilities(
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf8])
    )
    conn = await start(ws, "--no-watch", capabilities=caps)
    assert conn.initialize_result.capabilities.position_encoding == "utf-8"
    text = 'NAME = "🛒 cart"\nPRICE = "€5"\n'
    (ws / "shop.py").write_text(text)
    await conn.observe(path="shop.py", viewId="v", firstLine=1, lastLine=2)
    conn.did_open("shop.py", text)
    # In UTF-8 bytes: "cart" starts at 13 ("🛒" is 4 bytes), "5" at 12 ("€" is 3 bytes).
    conn.did_change("shop.py", 2, ((0, 13), (0, 17), "basket"), ((1, 12), (1, 13), "6"))
    (ws / "shop.py").write_text('NAME = "🛒 basket"\nPRICE = "€6"\n')
    assert (await conn.view("v"))["editorDirty"] is False


async def test_undoing_an_edit_in_the_buffer_clears_editor_dirty(fresh: Lsp) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    fresh.did_open("cart.py", CART_PY)
    fresh.did_change("cart.py", 2, ((8, 30), (8, 34), "RATE * 2"))
    assert (await fresh.view("t"))["editorDirty"] is True
    fresh.did_change("cart.py", 3, ((8, 30), (8, 38), "RATE"))
    assert (await fresh.view("t"))["editorDirty"] is False


async def test_closing_a_dirty_buffer_clears_editor_dirty(fresh: Lsp) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    fresh.did_open("cart.py", CART_PY.replace("RATE = 10", "RATE = 11"))
    assert (await fresh.view("t"))["editorDirty"] is True
    fresh.did_close("cart.py")
    assert (await fresh.view("t"))["editorDirty"] is False


# -- changedBy: who made the last change to those lines -------------------------------------


async def test_changed_by_self_for_this_sessions_did_write(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    fresh.did_write("cart.py", session="s")
    unit = (await fresh.view("t"))["units"][0]
    assert (unit["status"], unit["changedBy"]) == ("changed", "self")


async def test_changed_by_another_session(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    fresh.did_write("cart.py", session="agent-2")
    assert (await fresh.view("t"))["units"][0]["changedBy"] == "session:agent-2"


async def test_changed_by_editor_for_a_save(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    fresh.did_open("cart.py", CART_PY)
    fresh.did_change("cart.py", 2, ((8, 30), (8, 34), "RATE * 2"))
    (ws / "cart.py").write_text(CART_PY.replace("quantity * RATE", "quantity * RATE * 2"))
    fresh.did_save("cart.py")
    view = await fresh.view("t")
    assert (view["status"], view["editorDirty"]) == ("changed", False)
    assert view["units"][0]["changedBy"] == "editor"


async def test_changed_by_outside_for_an_unreported_write(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    assert (await fresh.view("t"))["units"][0]["changedBy"] == "outside"


async def test_changed_by_names_the_last_change_to_those_lines(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await fresh.observe(path="cart.py", viewId="h", firstLine=13, lastLine=14)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    fresh.did_write("cart.py", session="agent-2")
    await fresh.sync_point()
    replace_in(ws / "cart.py", "    return 1\n", "    return 2\n")
    fresh.did_write("cart.py", session="s")
    by = {v["viewId"]: v["units"][0]["changedBy"] for v in (await fresh.stale())["views"]}
    assert by == {"t": "session:agent-2", "h": "self"}


async def test_fresh_units_have_no_changed_by(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    replace_in(ws / "cart.py", "    return 1\n", "    return 2\n")
    fresh.did_write("cart.py", session="s")
    unit = (await fresh.view("t"))["units"][0]
    assert (unit["status"], unit["changedBy"]) == ("fresh", None)
