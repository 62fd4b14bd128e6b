"""Shared fixtures: the real agent runs under ../shared are optional."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared_fixtures() -> Path:
    path = SHARED / "fixtures"
    if not path.is_dir():
        pytest.skip(f"{path} is absent: the real agent runs are not available on this machine")
    return path
