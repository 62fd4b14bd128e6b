"""Hypothesis properties of sparse views (``fresh/observe`` ``ranges``, PROTOCOL.md v1.3),
over one real stdio server:

- a view is never ``fresh`` once a line it showed changed;
- a view is never ``changed`` when only lines it did not show changed.

Each example writes a new file of functions and top-level lines, observes random ascending
ranges of it, replaces random lines in place (same line count, so nothing moves and nothing
is added after the end) and asks ``fresh/stale``. Like ``test_contract.py``, nothing here
imports fresh_ls.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rawclient import RawClient

pytestmark = pytest.mark.timeout(300)

_COUNTER = itertools.count()


@st.composite
def files(draw: st.DrawFn) -> list[str]:
    """Lines of a Python module: functions (a def line, body lines) and top-level lines;
    a body line is ``    <name> = <n>``, a top-level line ``<NAME> = <n>``."""
    lines: list[str] = []
    for i in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            lines.append(f"def f{i}(x):\n")
            for k in range(draw(st.integers(1, 4))):
                lines.append(f"    v{k} = {draw(st.integers(0, 99))}\n")
        else:
            lines.append(f"TOP{i} = {draw(st.integers(0, 99))}\n")
        if draw(st.booleans()):
            lines.append("\n")
    return lines


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[str], list[tuple[int, int]], set[int]]:
    """A file, ascending non-overlapping ranges of it, and the lines to replace."""
    lines = draw(files())
    n = len(lines)
    cuts = sorted(draw(st.sets(st.integers(1, n), min_size=1, max_size=min(n, 6))))
    ranges: list[tuple[int, int]] = []
    for a in cuts:
        if ranges and a <= ranges[-1][1] + 1:
            continue
        b = draw(st.integers(a, min(n, a + 2)))
        if ranges and a <= ranges[-1][1]:
            continue
        ranges.append((a, b))
    # only lines that stay what they are kinds of (a body line stays a body line, a
    # top-level line a top-level line): definitions keep their extents
    editable = [i + 1 for i, t in enumerate(lines) if "=" in t]
    changed = draw(st.sets(st.sampled_from(editable), max_size=3)) if editable else set()
    return lines, ranges, changed


def _replaced(line: str, k: int) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}changed_{k} = {k}\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ranges-props")
    c = RawClient(root)
    c.initialize()
    try:
        yield c, root
    finally:
        c.close()


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=cases())
def test_sparse_view_status_follows_shown_lines_only(server, case) -> None:
    client, root = server
    lines, ranges, changed = case
    k = next(_COUNTER)
    rel = f"m{k}.py"
    (root / rel).write_text("".join(lines), encoding="utf-8")
    view_id = f"v{k}"
    res = client.request(
        "fresh/observe",
        {
            "session": "props",
            "path": rel,
            "viewId": view_id,
            "ranges": [{"firstLine": a, "lastLine": b} for a, b in ranges],
        },
    )
    assert res["status"] == "fresh", res
    new = list(lines)
    for line in changed:
        new[line - 1] = _replaced(lines[line - 1], line)
    (root / rel).write_text("".join(new), encoding="utf-8")
    got = client.request("fresh/stale", {"session": "props", "viewIds": [view_id]})
    (view,) = got["views"]
    shown = {line for a, b in ranges for line in range(a, b + 1)}
    if changed & shown:
        assert view["status"] != "fresh", (lines, ranges, changed, view)
    else:
        assert view["status"] != "changed", (lines, ranges, changed, view)
        if not changed:
            assert view["status"] == "fresh", view
