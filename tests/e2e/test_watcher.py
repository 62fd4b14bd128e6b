"""The watcher: writes nobody reports (git checkout, formatters, other processes) are seen
and pushed as fresh/didInvalidate; and "current" is the disk even before the watcher fires."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ._support import CART_PY, Lsp, replace_in, watcher_ready

pytestmark = pytest.mark.timeout(90)


def _is(session: str, path: str):
    return lambda p: p["session"] == session and p["path"] == path


async def test_an_unreported_write_is_pushed_as_did_invalidate(fresh: Lsp, ws: Path) -> None:
    await watcher_ready(fresh, ws)
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await fresh.observe(path="cart.py", viewId="h", firstLine=13, lastLine=14)
    await fresh.settle()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    payload = await fresh.wait_invalidation(_is("s", "cart.py"))
    assert payload == {"session": "s", "viewIds": ["t"], "path": "cart.py"}
    unit = (await fresh.view("t"))["units"][0]
    assert (unit["status"], unit["changedBy"]) == ("changed", "outside")


async def test_a_simulated_git_checkout_is_reflected(fresh: Lsp, ws: Path) -> None:
    """Checkout replaces files (new inode), deletes some and creates others."""
    await watcher_ready(fresh, ws)
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await fresh.observe(path="util.py", viewId="u", firstLine=4, lastLine=6)
    await fresh.observe(path="web/price.ts", viewId="p", firstLine=6, lastLine=6)
    await fresh.settle()
    tmp = ws / ".cart.py.lock"
    tmp.write_text(CART_PY.replace("quantity * RATE", "quantity * RATE * 2"))
    os.replace(tmp, ws / "cart.py")
    (ws / "util.py").unlink()
    (ws / "new_module.py").write_text("def new():\n    pass\n")
    assert (await fresh.wait_invalidation(_is("s", "cart.py")))["viewIds"] == ["t"]
    assert (await fresh.wait_invalidation(_is("s", "util.py")))["viewIds"] == ["u"]
    views = {v["viewId"]: v for v in (await fresh.stale())["views"]}
    assert {k: v["status"] for k, v in views.items()} == {
        "t": "changed",
        "u": "deleted",
        "p": "fresh",
    }
    assert views["t"]["units"][0]["changedBy"] == "outside"
    assert views["u"]["units"][0]["changedBy"] == "outside"


async def test_writes_under_ignored_dirs_and_the_state_dir_push_nothing(
    fresh: Lsp, ws: Path
) -> None:
    await watcher_ready(fresh, ws)
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await fresh.settle()
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "x.js").write_text("x\n")
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    await fresh.wait_invalidation(_is("s", "cart.py"))
    assert [p["path"] for p in fresh.invalidations] == ["cart.py"]


async def test_a_request_right_after_a_write_sees_it_without_the_watcher(
    quiet: Lsp, ws: Path
) -> None:
    await quiet.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    await quiet.settle()
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    view = await quiet.view("t")
    assert view["status"] == "changed"
    projection = await quiet.project()
    assert "quantity * RATE * 2" in projection["entries"][0]["text"]
    assert quiet.invalidations == []


async def test_a_request_right_after_a_write_sees_it_with_the_watcher(fresh: Lsp, ws: Path) -> None:
    await fresh.observe(path="cart.py", viewId="t", firstLine=9, lastLine=9)
    replace_in(ws / "cart.py", "quantity * RATE", "quantity * RATE * 2")
    assert (await fresh.view("t"))["status"] == "changed"


async def test_same_size_rewrites_in_one_clock_tick_are_told_apart(quiet: Lsp, ws: Path) -> None:
    """Two writes of the same size within the file system's timestamp granularity: the
    stat looks the same, the bytes differ ("racy git")."""
    path = ws / "cart.py"
    await quiet.observe(path="cart.py", viewId="t", firstLine=1, lastLine=1)
    st = path.stat()
    path.write_text(CART_PY.replace("RATE = 10", "RATE = 12"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert (await quiet.view("t"))["status"] == "changed"
    path.write_text(CART_PY)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (await quiet.view("t"))["status"] == "fresh"
