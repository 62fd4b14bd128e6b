"""The record of what earlier notes announced (``fresh_ls.hooks.announced``): one file per
session in the state dir, written atomically, unreadable means empty."""

from __future__ import annotations

import stat
from pathlib import Path

from fresh_ls.hooks import announced


def test_round_trip_per_session(tmp_path: Path) -> None:
    a = announced.record_path(tmp_path, "claude-code-session-id:a")
    b = announced.record_path(tmp_path, "claude-code-session-id:b")
    assert a != b and a.parent == tmp_path / "hooks"
    assert announced.load(a) == {}
    announced.save(a, "claude-code-session-id:a", {"toolu_1": "f1"})
    assert announced.load(a) == {"toolu_1": "f1"}
    assert announced.load(b) == {}
    assert stat.S_IMODE(a.stat().st_mode) == 0o600
    assert [p.name for p in a.parent.iterdir()] == [a.name]  # no temp file left


def test_an_unreadable_record_counts_as_empty(tmp_path: Path) -> None:
    path = announced.record_path(tmp_path, "s")
    path.parent.mkdir()
    for junk in ("{not json", "[1, 2]", '{"announced": 3}'):
        path.write_text(junk)
        assert announced.load(path) == {}
