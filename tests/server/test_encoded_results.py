"""The projection the server sends as pre-encoded JSON (``Engine.project``) is a typed
``ProjectResult`` unstructured by the protocol's converter, byte for byte: the same keys,
values and order, whichever policy, budget or cache state made it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fresh_ls.engine.engine import Engine
from fresh_ls.engine.wire import Encoded
from fresh_ls.protocol import (
    ObserveParams,
    Policy,
    ProjectParams,
    ProjectResult,
    parse,
    unstructure,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "code"


@pytest.mark.parametrize("policy", ["stale", "all"])
@pytest.mark.parametrize("budget", [64, 600, 128 * 1024])
async def test_encoded_projection_is_the_project_result(
    tmp_path: Path, policy: str, budget: int
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    cart = (FIXTURES / "cart.py").read_text()
    (root / "cart.py").write_text(cart)
    (root / "notes é.md").write_text("# Ünïcode\n\nline \u2028 two\n")
    engine = await Engine.open(root, tmp_path / "state")
    try:
        for path, view_id, first, last in [
            ("cart.py", "whole", None, None),
            ("cart.py", "line9", 9, 9),
            ("notes é.md", "n", 1, 3),
        ]:
            await engine.observe(
                ObserveParams(
                    session="s", path=path, view_id=view_id, first_line=first, last_line=last
                )
            )
        (root / "cart.py").write_text(cart.replace("return", "return  ", 1))
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
