"""Conformance tests for the v1.3 rules of the wire contract, over a real stdio server.

Written from ../shared/design/PROTOCOL.md ("Changes since v1", v1.3): ``fresh/observe``
takes ``ranges`` (sparse views), a view that reached the end of the file goes stale when
lines are added after it, and an absolute path resolves through symlinks into the root.
Like ``test_contract.py``, nothing here imports fresh_ls.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rawclient import RawClient
from test_contract import (
    CART_PY,
    L_HELPER_BODY,
    L_TOTAL_BODY,
    L_TOTAL_RET,
    N_CART,
    agent_write,
    disk_text,
    error_of,
    observe,
    project,
    stale,
    view_of,
    write,
)
from test_contract import client as client
from test_contract import root as root

pytestmark = pytest.mark.timeout(60)


def rng(first: int, last: int) -> dict[str, int]:
    return {"firstLine": first, "lastLine": last}


# --------------------------------------------------------------------------- ranges


def test_ranges_view_fresh_then_changed_only_by_shown_lines(client: RawClient, root: Path) -> None:
    res = observe(
        client, path="src/cart.py", viewId="g1", ranges=[rng(4, 4), rng(L_TOTAL_BODY, L_TOTAL_BODY)]
    )
    assert res["status"] == "fresh"
    assert res["firstLine"] == 4 and res["lastLine"] == L_TOTAL_BODY
    # an unshown line of the same function changes: the view stays as it was
    lines = CART_PY.splitlines(keepends=True)
    lines[L_TOTAL_RET - 1] = "        return subtotal + 0\n"
    agent_write(client, root, "src/cart.py", "".join(lines), session="other")
    v = view_of(stale(client), "g1")
    assert v["status"] == "fresh", v
    # a shown line changes: changed, with a diff naming it
    lines[L_TOTAL_BODY - 1] = "        subtotal = quantity * RATE * 2\n"
    agent_write(client, root, "src/cart.py", "".join(lines), session="other")
    v = view_of(stale(client), "g1")
    assert v["status"] == "changed", v
    changed = [u for u in v["units"] if u["status"] == "changed"]
    assert changed and all(u["diff"] for u in changed)
    assert any("RATE * 2" in u["diff"] for u in changed)


def test_ranges_text_is_the_shown_lines_joined(client: RawClient, root: Path) -> None:
    shown = disk_text(root, "src/cart.py", 4, 4) + disk_text(
        root, "src/cart.py", L_HELPER_BODY, L_HELPER_BODY
    )
    res = observe(
        client,
        path="src/cart.py",
        viewId="g2",
        ranges=[rng(4, 4), rng(L_HELPER_BODY, L_HELPER_BODY)],
        text=shown,
    )
    assert res["status"] == "fresh"
    # text that differs in the second range: already changed
    res = observe(
        client,
        path="src/cart.py",
        viewId="g3",
        ranges=[rng(4, 4), rng(L_HELPER_BODY, L_HELPER_BODY)],
        text=disk_text(root, "src/cart.py", 4, 4) + "    return x + 2\n",
    )
    assert res["status"] == "changed"


@pytest.mark.parametrize(
    "ranges",
    [
        [],
        [{"firstLine": 0, "lastLine": 2}],
        [{"firstLine": 5, "lastLine": 3}],
        [{"firstLine": 3, "lastLine": 6}, {"firstLine": 5, "lastLine": 8}],  # overlap
        [{"firstLine": 8, "lastLine": 9}, {"firstLine": 2, "lastLine": 3}],  # not ascending
        [{"firstLine": 1}],
        [{"firstLine": "1", "lastLine": 2}],
        "1-3",
    ],
)
def test_ranges_invalid_are_32602(client: RawClient, ranges: object) -> None:
    err = error_of(
        client, "fresh/observe", {"session": "s", "path": "src/cart.py", "ranges": ranges}
    )
    assert err["code"] == -32602, err
    assert "ranges" in err["message"]


def test_ranges_and_first_line_never_both(client: RawClient) -> None:
    err = error_of(
        client,
        "fresh/observe",
        {"session": "s", "path": "src/cart.py", "firstLine": 1, "ranges": [rng(2, 3)]},
    )
    assert err["code"] == -32602 and "ranges" in err["message"]


def test_ranges_past_the_end(client: RawClient) -> None:
    err = error_of(
        client,
        "fresh/observe",
        {"session": "s", "path": "src/cart.py", "ranges": [rng(2, 2), rng(90, 91)]},
    )
    assert err["code"] == -32602
    res = observe(client, path="src/cart.py", viewId="clamp", ranges=[rng(2, 2), rng(16, 99)])
    assert res["lastLine"] == N_CART


def test_ranges_view_survives_a_restart(root: Path) -> None:
    c = RawClient(root)
    c.initialize()
    observe(
        c, path="src/cart.py", viewId="keep", ranges=[rng(4, 4), rng(L_HELPER_BODY, L_HELPER_BODY)]
    )
    c.close()
    lines = CART_PY.splitlines(keepends=True)
    lines[L_TOTAL_RET - 1] = "        return subtotal + 0\n"  # not shown
    write(root, "src/cart.py", "".join(lines))
    c = RawClient(root)
    try:
        c.initialize()
        v = view_of(stale(c), "keep")
        assert v["status"] == "fresh", v
        lines[3] = "RATE = 11\n"  # shown
        write(root, "src/cart.py", "".join(lines))
        assert view_of(stale(c), "keep")["status"] == "changed"
    finally:
        c.close()


def test_ranges_view_projected_with_current_code(client: RawClient, root: Path) -> None:
    observe(
        client,
        path="src/cart.py",
        viewId="g4",
        ranges=[rng(4, 4), rng(L_HELPER_BODY, L_HELPER_BODY)],
    )
    text = CART_PY.replace("return x + 1", "return x + 41")
    agent_write(client, root, "src/cart.py", text, session="other")
    res = project(client, root)
    assert "return x + 41" in res["rendered"]
    marker = [m for m in res["markers"] if m["viewId"] == "g4"]
    assert marker, res


# --------------------------------------------------------------------------- end of file


@pytest.mark.parametrize(
    "params",
    [
        {},  # a whole-file read
        {"firstLine": L_HELPER_BODY - 1, "lastLine": N_CART},  # view_range [N, N_CART]
        {"firstLine": L_HELPER_BODY, "lastLine": 500},  # view_range [N, -1]: clamped
    ],
    ids=["whole", "to-last-line", "past-the-end"],
)
def test_lines_added_after_a_view_that_reached_the_end(
    client: RawClient, root: Path, params: dict
) -> None:
    observe(client, path="src/cart.py", viewId="e1", **params)
    with open(root / "src/cart.py", "a", encoding="utf-8") as fh:
        fh.write("\n\ndef helper(x):\n    return x + 2\n")
    client.notify(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": (root / "src/cart.py").as_uri(), "type": 2}]},
    )
    v = view_of(stale(client), "e1")
    assert v["status"] == "changed", v
    diffs = "".join(u["diff"] or "" for u in v["units"])
    assert "+    return x + 2" in diffs, v
    gate = client.request("fresh/gate", {"session": "s", "viewIds": ["e1"]})
    assert gate["proceed"] is False, gate
    res = project(client, root)
    assert "return x + 2" in res["rendered"], res


def test_a_range_that_stopped_before_the_end_is_not_touched(client: RawClient, root: Path) -> None:
    observe(client, path="src/cart.py", viewId="e2", firstLine=1, lastLine=L_TOTAL_RET)
    with open(root / "src/cart.py", "a", encoding="utf-8") as fh:
        fh.write("\n\ndef more():\n    return 2\n")
    assert view_of(stale(client), "e2")["status"] == "fresh"


def test_sparse_view_whose_last_range_reached_the_end(client: RawClient, root: Path) -> None:
    observe(client, path="src/cart.py", viewId="e3", ranges=[rng(4, 4), rng(L_HELPER_BODY, N_CART)])
    with open(root / "src/cart.py", "a", encoding="utf-8") as fh:
        fh.write("HELPER_LIMIT = 3\n")
    v = view_of(stale(client), "e3")
    assert v["status"] == "changed"
    assert "HELPER_LIMIT" in "".join(u["diff"] or "" for u in v["units"])


# --------------------------------------------------------------------------- symlinks


def test_absolute_path_through_a_symlink_into_the_root(
    client: RawClient, root: Path, tmp_path: Path
) -> None:
    link = tmp_path / "testbed"
    os.symlink(root, link)
    res = observe(client, path=str(link / "src" / "cart.py"), viewId="s1")
    assert res["path"] == "src/cart.py", res
    v = view_of(stale(client), "s1")
    assert v["path"] == "src/cart.py"
    agent_write(client, root, "src/cart.py", CART_PY.replace("RATE = 10", "RATE = 12"), session="x")
    assert view_of(stale(client), "s1")["status"] == "changed"


def test_absolute_path_through_a_symlink_out_of_the_root(
    client: RawClient, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write(outside, "x.py", "x = 1\n")
    os.symlink(outside, root / "escape")
    for path in (str(root / "escape" / "x.py"), "escape/x.py", str(outside / "x.py")):
        err = error_of(client, "fresh/observe", {"session": "s", "path": path})
        assert err["code"] == -32010, (path, err)
