"""``SourceTable.batch``: within one request an unchanged file costs one ``fstatat``, and
that shortcut is never a way around the no-follow containment of ``open_in_root``.

The dangerous case for a stat shortcut is a directory moved out of the root and replaced
by a symlink to where it went: every file in it keeps its inode, size, mtime and ctime, so
a stat that follows the symlink matches the cached one exactly. The batch opens each
directory without following symlinks, so the shortcut fails there and the full read says
``unreadable`` (outside the root), as it says without a batch.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from fresh_ls.core.sources import SourceError, SourceTable

TEXT = "def f():\n    return 1\n"


def settled(path: Path, text: str = TEXT) -> None:
    """Write ``text`` dated a minute back, outside the racy window: its stat is trusted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    t = time.time() - 60
    os.utime(path, (t, t))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    settled(r / "pkg" / "a.py")
    settled(r / "top.py")
    return r


def opens(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every ``os.open`` from here on, by name."""
    seen: list[object] = []
    real = os.open

    def counting(path: object, *args: object, **kwargs: object) -> int:
        seen.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting)
    return seen


@pytest.mark.parametrize("how", ["moved", "chmod", "rewritten"])
def test_a_batch_serves_unchanged_files_without_opening_them(
    root: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    table = SourceTable(root)
    first = table.get("pkg/a.py"), table.get("top.py")
    seen = opens(monkeypatch)
    with table.batch():
        again = table.get("pkg/a.py"), table.get("top.py")
    assert again[0] is first[0] and again[1] is first[1]
    # the root and pkg/, once each for the whole batch; no file opened
    assert seen == [root, "pkg"]
    seen.clear()
    # Any change of the stat goes the full way (and is read when it must be).
    target = root / "pkg" / "a.py"
    if how == "moved":  # a new inode at the same path, same text
        target.rename(root / "pkg" / "b.py")
        settled(target)
    elif how == "chmod":  # ctime moves
        target.chmod(0o600)
    else:
        settled(target, TEXT.replace("1", "2"))
    with table.batch():
        now = table.get("pkg/a.py")
    assert "a.py" in seen
    assert now.text == target.read_text("utf-8")


def test_a_directory_moved_out_and_symlinked_back_is_unreadable_in_a_batch(
    root: Path, tmp_path: Path
) -> None:
    table = SourceTable(root)
    table.get("pkg/a.py")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "pkg").rename(outside / "pkg")  # a.py keeps its inode, size, mtime, ctime
    os.symlink(outside / "pkg", root / "pkg")
    st = os.stat(root / "pkg" / "a.py")  # following the link: the very stat cached
    assert st.st_ino == os.stat(outside / "pkg" / "a.py").st_ino
    for batched in (True, False):
        with pytest.raises(SourceError) as err:
            if batched:
                with table.batch():
                    table.get("pkg/a.py")
            else:
                table.get("pkg/a.py")
        assert err.value.reason == "unreadable"
        assert "outside the root" in err.value.message


def test_a_file_swapped_for_a_symlink_is_not_served_from_the_batch(
    root: Path, tmp_path: Path
) -> None:
    table = SourceTable(root)
    table.get("top.py")
    outside = tmp_path / "secret.py"
    (root / "top.py").rename(outside)  # same inode and stat, now outside
    os.symlink(outside, root / "top.py")
    with table.batch(), pytest.raises(SourceError) as err:
        table.get("top.py")
    assert err.value.reason == "unreadable"


def test_batches_nest_and_close_their_directories(root: Path) -> None:
    table = SourceTable(root)
    table.get("pkg/a.py")
    before = len(os.listdir("/proc/self/fd"))
    with table.batch():
        table.get("pkg/a.py")
        with table.batch():
            table.get("pkg/a.py")
        assert len(os.listdir("/proc/self/fd")) == before + 2  # root, pkg/: still open
    assert len(os.listdir("/proc/self/fd")) == before


def test_stat_keys_follow_no_symlink(root: Path, tmp_path: Path) -> None:
    table = SourceTable(root)
    outside = tmp_path / "elsewhere.py"
    settled(outside)
    os.symlink(outside, root / "link.py")
    keys = table.stat_keys(["pkg/a.py", "top.py", "link.py", "gone.py"])
    assert set(keys) == {"pkg/a.py", "top.py"}
    st = os.stat(root / "top.py")
    assert keys["top.py"] == (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
