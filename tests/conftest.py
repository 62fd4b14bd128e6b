"""Shared fixtures: the real agent runs under ../shared are optional."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The server `run`, `proxy` and the proxies' client start is shared and idles out
# (fresh_ls.autostart): in tests it goes 2 s after its last client left, not a minute after,
# so a suite of short runs leaves no crowd of idle servers behind.
os.environ.setdefault("FRESH_LS_SERVER_IDLE_S", "2")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared_fixtures() -> Path:
    path = SHARED / "fixtures"
    if not path.is_dir():
        pytest.skip(f"{path} is absent: the real agent runs are not available on this machine")
    return path
