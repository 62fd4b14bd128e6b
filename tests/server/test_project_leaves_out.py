"""A client that said it does not read some keys of a ``fresh/project`` answer
(``capabilities.experimental.freshLs.projectLeavesOut``) gets the same answer without them,
and loses nothing: ``rendered`` is rebuilt from the entries exactly as the contract frames
it. A client that said nothing gets the contract's whole shape."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from fresh_ls.engine.engine import ProjectDefaults
from fresh_ls.engine.wire import LEAVABLE
from fresh_ls.protocol import Policy, ProjectParams
from fresh_ls.server.connection import leaves_out
from tests.server._support import engine_with_views


def rebuild_rendered(entries: list[dict[str, Any]]) -> str:
    """The contract's framing: each entry's header, a line feed, its text (and a line feed
    when the text does not end with one), in the answer's order."""
    return "".join(
        e["header"] + "\n" + e["text"] + ("" if e["text"].endswith("\n") else "\n") for e in entries
    )


@pytest.mark.parametrize("policy", ["stale", "all"])
@pytest.mark.parametrize("budget", [64, 600, 128 * 1024])
async def test_an_answer_without_some_keys_is_the_rest_of_the_whole_one(
    tmp_path: Path, policy: str, budget: int
) -> None:
    engine = await engine_with_views(
        tmp_path, '# Ünïcode "omitted": [\n\nline \u2028 , "rendered": x\n', ', "markers": '
    )
    try:
        for _ in range(2):  # planned, then served from the cache
            asked = ProjectParams(session="s", budget_bytes=budget, policy=Policy(policy))
            whole = json.loads(await engine.project(asked))
            assert whole["rendered"] == rebuild_rendered(whole["entries"])
            for n in range(1, len(LEAVABLE) + 1):
                for keys in itertools.combinations(LEAVABLE, n):
                    text = await engine.project(asked, ProjectDefaults(leave_out=frozenset(keys)))
                    lean = json.loads(text)
                    assert lean.pop("planId") != whole["planId"]
                    assert lean == {
                        k: v for k, v in whole.items() if k not in keys and k != "planId"
                    }
                    assert list(lean) == [k for k in whole if k not in keys and k != "planId"]
            # Without a key to leave out, the answer is the whole one.
            plain = json.loads(await engine.project(asked, ProjectDefaults()))
            assert set(plain) == set(whole)
    finally:
        await engine.close()


@pytest.mark.parametrize(
    ("experimental", "expected"),
    [
        (None, set()),
        ({}, set()),
        ({"freshLs": {"projectLeavesOut": ["rendered"]}}, {"rendered"}),
        ({"freshLs": {"projectLeavesOut": ["entries", "omitted"]}}, {"entries", "omitted"}),
        # names it cannot have meant, or the wrong shape: nothing left out
        ({"freshLs": {"projectLeavesOut": ["markers", "planId", 3]}}, set()),
        ({"freshLs": {"projectLeavesOut": "rendered"}}, set()),
        ({"freshLs": ["rendered"]}, set()),
        ("rendered", set()),
    ],
)
def test_the_capability_names_only_keys_that_may_go(experimental: Any, expected: set[str]) -> None:
    assert leaves_out(experimental) == expected
