"""``fresh-ls mcp --also DIR``: files of DIR are read and edited under the guard like the
root's; without it they stay outside."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcptools._support import call, mcp_client


@pytest.fixture
def dirs() -> Iterator[tuple[Path, Path]]:
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="fresh-ls-mcp-also-")))
    root, scratch = base / "repo", base / "workspace"
    root.mkdir()
    scratch.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    (scratch / "reproduce.py").write_text("def main():\n    print(1)\n")
    yield root, scratch
    shutil.rmtree(base, ignore_errors=True)


async def test_an_also_folder_is_read_and_edited_under_the_guard(dirs: tuple[Path, Path]) -> None:
    root, scratch = dirs
    target = str(scratch / "reproduce.py")
    async with mcp_client(root, "--session", "agent", "--also", str(scratch)) as session:
        is_error, text, _ = await call(session, "read", path=target)
        assert not is_error, text
        (scratch / "reproduce.py").write_text("def main():\n    print(2)\n")  # not seen
        is_error, text, _ = await call(
            session, "edit", path=target, old_text="print(2)", new_text="print(3)"
        )
        assert is_error and "print(2)" in text, text  # denied: a change the agent never saw
        await call(session, "read", path=target)
        is_error, text, _ = await call(
            session, "edit", path=target, old_text="print(2)", new_text="print(3)"
        )
        assert not is_error, text
    assert "print(3)" in (scratch / "reproduce.py").read_text()


async def test_without_also_it_is_outside(dirs: tuple[Path, Path]) -> None:
    root, scratch = dirs
    async with mcp_client(root, "--session", "agent") as session:
        is_error, text, _ = await call(session, "read", path=str(scratch / "reproduce.py"))
        assert is_error and "outside the root" in text, text
