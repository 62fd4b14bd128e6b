"""``fresh-ls serve --also DIR``: folders beside the root whose files are views too (an
addition to the contract, docs/protocol.md). Files there are named by absolute path in
results; anything outside the root and every such folder is still -32010."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rawclient import RawClient

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "repo"
    scratch = tmp_path / "workspace"
    elsewhere = tmp_path / "elsewhere"
    for d in (root, scratch, elsewhere):
        d.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    (scratch / "reproduce.py").write_text("import a\nprint(a.a())\n", encoding="utf-8")
    (elsewhere / "x.py").write_text("x = 1\n", encoding="utf-8")
    return Path(os.path.realpath(root)), Path(os.path.realpath(scratch)), elsewhere


def test_files_of_an_also_folder_are_views(roots: tuple[Path, Path, Path]) -> None:
    root, scratch, elsewhere = roots
    c = RawClient(root, extra_args=["--also", str(scratch)])
    try:
        c.initialize()
        res = c.request(
            "fresh/observe",
            {"session": "s", "path": str(scratch / "reproduce.py"), "viewId": "r"},
        )
        assert res["path"] == str(scratch / "reproduce.py")
        assert res["status"] == "fresh"
        (scratch / "reproduce.py").write_text("import a\nprint(a.a() + 1)\n", encoding="utf-8")
        deadline = time.monotonic() + 20
        while True:
            (view,) = c.request("fresh/stale", {"session": "s"})["views"]
            if view["status"] == "changed" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert view["status"] == "changed", view
        assert view["path"] == str(scratch / "reproduce.py")
        projected = c.request("fresh/project", {"session": "s"})
        assert "print(a.a() + 1)" in projected["rendered"]
        # root files keep their relative names; other folders stay outside
        assert c.request("fresh/observe", {"session": "s", "path": "a.py"})["path"] == "a.py"
        err = c.request_raw("fresh/observe", {"session": "s", "path": str(elsewhere / "x.py")})
        assert err["error"]["code"] == -32010, err
        # a relative path whose real location is in the folder names the same file
        res = c.request("fresh/observe", {"session": "s", "path": "../workspace/reproduce.py"})
        assert res["path"] == str(scratch / "reproduce.py")
    finally:
        c.close()


def test_without_also_the_folder_is_outside(roots: tuple[Path, Path, Path]) -> None:
    root, scratch, _ = roots
    c = RawClient(root)
    try:
        c.initialize()
        err = c.request_raw(
            "fresh/observe", {"session": "s", "path": str(scratch / "reproduce.py")}
        )
        assert err["error"]["code"] == -32010, err
    finally:
        c.close()
