"""Bounds on what one request may cost: path length, and fuzzy relocation of huge text."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fresh_ls.core.paths import MAX_PATH_BYTES, PathTooLong, path_too_long, resolve_in_root
from fresh_ls.errors import InvalidParams
from fresh_ls.server.params import DidWriteParams, ObserveParams, parse

# -- path length ---------------------------------------------------------------------------


def test_a_path_at_the_limit_is_resolved(tmp_path: Path) -> None:
    root = Path(tmp_path).resolve()
    name = "d/" * ((MAX_PATH_BYTES - 10) // 2) + "x.py"
    assert len(name.encode()) <= MAX_PATH_BYTES
    rel, _ = resolve_in_root(root, name)
    assert rel == name


def test_a_path_over_the_limit_is_refused_without_resolving_it(tmp_path: Path) -> None:
    root = Path(tmp_path).resolve()
    long_path = "a/" * 200_000 + "cart.py"
    t0 = time.monotonic()
    with pytest.raises(PathTooLong, match="4096 bytes"):
        resolve_in_root(root, long_path)
    assert time.monotonic() - t0 < 1.0  # realpath would take seconds (sanity bound)


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    assert path_too_long("é" * (MAX_PATH_BYTES // 2)) is None
    message = path_too_long("é" * (MAX_PATH_BYTES // 2 + 1))
    assert message is not None and f"{MAX_PATH_BYTES + 2} bytes" in message


@pytest.mark.parametrize("cls", [ObserveParams, DidWriteParams])
def test_params_refuse_a_long_path_naming_the_field_and_the_limit(cls: type) -> None:
    with pytest.raises(InvalidParams) as info:
        parse(cls, {"session": "s", "path": "x" * (MAX_PATH_BYTES + 1)})
    assert "path" in str(info.value) and f"{MAX_PATH_BYTES} bytes" in str(info.value)
    assert parse(cls, {"session": "s", "path": "x" * MAX_PATH_BYTES}).path
