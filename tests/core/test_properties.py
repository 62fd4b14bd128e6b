"""Property tests: random edit sequences on generated Python modules.

Two promises must hold whatever happens to the files:
- every projected entry is exactly the current lines of the file, byte for byte;
- no view (and no unit) is called ``fresh`` once its observed lines changed, and a
  ``moved`` unit's text is where the server says it is now.
The core is checked on strings with many examples; the engine on real files (the disk is
what "current" means) with fewer.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fresh_ls.core.anchors import anchor_view
from fresh_ls.core.model import View
from fresh_ls.core.projection import plan
from fresh_ls.core.sources import Source
from fresh_ls.core.staleness import assess_view
from fresh_ls.core.text import split_lines
from fresh_ls.engine import wire
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import (
    CommitParams,
    ObserveParams,
    Policy,
    ProjectParams,
    StaleParams,
)

NAMES = ["alpha", "beta", "gamma", "delta", "total", "add"]
BODY = ["x = 1", "return x", "y = x + 1", "pass", "print(x)", "return None", ""]


@st.composite
def modules(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["assign", "def", "class", "blank"]))
        name = draw(st.sampled_from(NAMES))
        if kind == "assign":
            parts.append(f"{name.upper()} = {draw(st.integers(0, 9))}")
        elif kind == "blank":
            parts.append("")
        elif kind == "def":
            parts.append(f"def {name}(x):")
            parts += [
                "    " + b
                for b in draw(st.lists(st.sampled_from(BODY[:-1]), min_size=1, max_size=4))
            ]
        else:
            parts.append(f"class {name.title()}:")
            for _ in range(draw(st.integers(1, 3))):
                method = draw(st.sampled_from(NAMES))
                parts.append(f"    def {method}(self, x):")
                body = draw(st.lists(st.sampled_from(BODY[:-1]), min_size=1, max_size=3))
                parts += ["        " + b for b in body]
    return "\n".join(parts) + "\n"


@st.composite
def edits(draw: st.DrawFn, text: str) -> str:
    lines = split_lines(text)
    op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate", "rename", "none"]))
    if not lines:
        return "x = 0\n"
    i = draw(st.integers(0, len(lines) - 1))
    new_line = draw(
        st.sampled_from(["    " + b for b in BODY] + ["Z = 3", "", "def extra(x):", "    return 0"])
    )
    if op == "insert":
        lines.insert(i, new_line + "\n")
    elif op == "delete":
        del lines[i]
    elif op == "replace":
        lines[i] = new_line + "\n"
    elif op == "duplicate":
        j = draw(st.integers(i, min(len(lines), i + 4)))
        lines[j:j] = lines[i:j]
    elif op == "rename":
        old, new = draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES))
        return "".join(lines).replace(f"def {old}(", f"def {new}(", 1)
    return "".join(lines)


def check(views: list[View], text: str, budget: int) -> None:
    source = Source.from_text("m.py", text)
    assessments = [assess_view(v, source) for v in views]
    for a in assessments:
        v = a.view
        at_place = "".join(source.lines[v.first_line - 1 : v.last_line])
        if at_place != v.observed_text:
            assert a.status != "fresh", (v, text)
        for ua in a.units:
            u = ua.unit
            if ua.status == "fresh":
                assert "".join(source.lines[u.obs_first - 1 : u.obs_last]) == u.obs_text
            if ua.status == "moved":
                assert ua.current is not None
                assert "".join(source.lines[ua.current.first - 1 : ua.current.last]) == u.obs_text
    for policy in ("stale", "all"):
        p = plan(assessments, {"m.py": source}, budget, policy)
        assert p.used_bytes == len(p.rendered.encode()) <= budget
        for e in p.entries:
            assert e.text == "".join(source.lines[e.first_line - 1 : e.last_line])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=modules(), budget=st.integers(0, 4000))
def test_core_edit_sequences(data: st.DataObject, text: str, budget: int) -> None:
    views: list[View] = []
    for step in range(data.draw(st.integers(1, 6))):
        source = Source.from_text("m.py", text)
        n = source.line_count
        if n:
            first = data.draw(st.integers(1, n))
            last = data.draw(st.integers(first, n))
            observed = source.lines[first - 1 : last]
            units = anchor_view("m.py", source, first, last, observed, first == 1 and last == n)
            views.append(
                View(
                    "s", f"v{step}", "m.py", first, last, "read", step, "".join(observed), "", units
                )
            )
        text = data.draw(edits(text))
        check(views, text, budget)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=modules())
def test_engine_edit_sequences_on_disk(data: st.DataObject, text: str) -> None:
    """Through the engine on a real file: writes land on disk, nobody reports them."""

    async def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            path = root / "m.py"
            path.write_text(text)
            engine = await Engine.open(root, root / ".fresh-ls")
            try:
                current = text
                observed: dict[str, tuple[int, int, str]] = {}
                for step in range(data.draw(st.integers(1, 5))):
                    n = len(split_lines(current))
                    if n:
                        first = data.draw(st.integers(1, n))
                        last = data.draw(st.integers(first, n))
                        r = await engine.observe(
                            ObserveParams(
                                session="s",
                                path="m.py",
                                view_id=f"v{step}",
                                first_line=first,
                                last_line=last,
                            )
                        )
                        lines = split_lines(current)
                        observed[r.view_id] = (first, last, "".join(lines[first - 1 : last]))
                    current = data.draw(edits(current))
                    path.write_text(current)
                    lines = split_lines(current)
                    for v in engine.stale(StaleParams(session="s")).views:
                        first, last, seen = observed[v.view_id]
                        if "".join(lines[first - 1 : last]) != seen:
                            assert v.status != "fresh"
                    asked = ProjectParams(session="s", budget_bytes=131072, policy=Policy.ALL)
                    p = wire.read_project(await engine.project(asked))
                    for e in p.entries:
                        assert e.text == "".join(lines[e.first_line - 1 : e.last_line])
                    assert engine.commit(CommitParams(plan_id=p.plan_id)).ok is True
            finally:
                await engine.close()

    asyncio.run(run())
