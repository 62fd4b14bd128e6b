"""The projection the server sends as pre-encoded JSON (``Engine.project``) is a typed
``ProjectResult`` unstructured by the protocol's converter, byte for byte: the same keys,
values and order, whichever policy, budget or cache state made it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fresh_ls.engine.wire import Encoded
from fresh_ls.protocol import (
    Policy,
    ProjectParams,
    ProjectResult,
    parse,
    unstructure,
)
from tests.server._support import engine_with_views


@pytest.mark.parametrize("policy", ["stale", "all"])
@pytest.mark.parametrize("budget", [64, 600, 128 * 1024])
async def test_encoded_projection_is_the_project_result(
    tmp_path: Path, policy: str, budget: int
) -> None:
    engine = await engine_with_views(tmp_path, "# Ünïcode\n\nline \u2028 two\n", "n")
    try:
        asked = ProjectParams(session="s", budget_bytes=budget, policy=Policy(policy))
        for _ in range(2):  # planned, then served from the cache
            before = json.loads(await engine.project(asked))
            encoded = await engine.project(asked)
            assert isinstance(encoded, Encoded)
            decoded = json.loads(encoded)
            assert decoded["planId"] != before["planId"]
            # byte for byte what the one converter makes of the typed result
            typed = parse(ProjectResult, decoded, "result")
            assert encoded == json.dumps(unstructure(typed))
            before.pop("planId")
            decoded.pop("planId")
            assert decoded == before
            assert list(decoded) == [
                "entries",
                "omitted",
                "markers",
                "usedBytes",
                "budgetBytes",
                "rendered",
            ]
    finally:
        await engine.close()
