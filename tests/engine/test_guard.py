"""The checkEdit guard in the engine (real files, real store, a fake clock), and its two
promises as hypothesis properties: never ``allow`` when a unit of the region differs from
what the session knew; never ``deny`` with reason ``changed`` when only other units changed.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fresh_ls.core import guard
from fresh_ls.core.sources import Source
from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import CheckEditParams, ForgetParams, unstructure

from ._support import MOD, FakeClock, edit, observe


async def check(engine: Engine, session: str, path: str, **kw: object) -> dict[str, object]:
    params = CheckEditParams(session=session, path=path, **kw)  # type: ignore[arg-type]
    return dict(unstructure(await engine.check_edit(params)))


async def test_a_change_to_the_other_function_allows(engine: Engine, root: Path) -> None:
    (root / "m.py").write_text(MOD)
    await observe(engine, "s", "m.py", "all")
    edit(root / "m.py", "return 2", "return 22")
    allowed = await check(engine, "s", "m.py", old_text="return 1")
    assert allowed["verdict"] == "allow"
    denied = await check(engine, "s", "m.py", old_text="return 22")
    assert (denied["verdict"], denied["reason"]) == ("deny", "changed")


async def test_own_write_after_a_claim_that_came_late(
    engine: Engine, root: Path, clock: FakeClock
) -> None:
    """The watcher saw the write first (as outside); the didWrite that follows within the
    claim window makes it the session's own, and its lines known."""
    (root / "m.py").write_text(MOD)
    await observe(engine, "s", "m.py", "one", 1, 2)
    edit(root / "m.py", "return 1", "return 10")
    engine.sync(["m.py"])
    clock.advance(1)
    engine.did_write("s", "m.py")
    result = await check(engine, "s", "m.py", old_text="return 10")
    assert result["verdict"] == "allow"


async def test_forget_drops_what_a_session_wrote(engine: Engine, root: Path) -> None:
    (root / "m.py").write_text(MOD)
    await observe(engine, "s", "m.py", "one", 1, 2)
    edit(root / "m.py", "return 1", "return 10")
    engine.did_write("s", "m.py")
    await engine.forget(ForgetParams(session="s"))
    assert (await check(engine, "s", "m.py", old_text="return 10"))["reason"] == "unseen"


def test_carry_over_keeps_known_lines_at_their_new_numbers() -> None:
    before = Source.from_text("a.txt", "1\n2\n3\n4\n5\n")
    after = Source.from_text("a.txt", "1\n2\nX\nY\n4\n5\n")
    assert guard.carry_over({1, 5}, before, after) == {1, 3, 4, 6}
    assert guard.runs({1, 3, 4, 6}) == [(1, 1), (3, 4), (6, 6)]


def test_carry_over_credits_only_the_lines_the_writer_says_it_wrote() -> None:
    """Lines 2 and 5 changed in one span, the writer says it wrote line 5 only: line 2 is
    someone else's change (not known), line 5 is known, line 1 (known before) stays."""
    before = Source.from_text("a.txt", "1\n2\n3\n4\n5\n")
    after = Source.from_text("a.txt", "1\nB\n3\n4\nE\n")
    assert guard.carry_over({1}, before, after) == {1, 2, 3, 4, 5}
    assert guard.carry_over({1}, before, after, wrote=(5, 5)) == {1, 5}
    assert guard.carry_over(set(), None, after, wrote=(2, 3)) == {2, 3}  # a creation


def test_locate_text_spans_lines() -> None:
    text = "a\nbb\nccc\n"
    assert guard.locate_text(text, "b\nc") == (2, 3)
    assert guard.locate_text(text, "ccc\n") == (3, 3)
    assert guard.locate_text(text, "zz") == "missing"
    assert guard.locate_text("x x", "x") == "ambiguous"


# -- properties --------------------------------------------------------------------------------

BODY = st.lists(st.sampled_from(["x = 1", "y = 2", "return x", "pass", "z = x + y"]), min_size=1,
                max_size=4)  # fmt: skip
#: How another writer may change one function: a body line replaced, added or removed.
CHANGE = st.sampled_from(["replace", "append", "remove"])


def render(funcs: list[list[str]]) -> str:
    return "\n\n".join(
        f"def f{i}():\n" + "".join(f"    {line}\n" for line in body) for i, body in enumerate(funcs)
    )


def changed(body: list[str], how: str, seed: int) -> list[str]:
    at = seed % len(body)
    if how == "replace":
        return [*body[:at], f"w = {seed}", *body[at + 1 :]]
    if how == "append":
        return [*body, f"v = {seed}"]
    return [*body[:at], *body[at + 1 :]] if len(body) > 1 else [f"u = {seed}"]


def extent(funcs: list[list[str]], i: int, offset: int) -> tuple[int, int]:
    first = 1 + offset + sum(len(b) + 3 for b in funcs[:i])
    return first, first + len(funcs[i])


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, object]:
    funcs = draw(st.lists(BODY, min_size=2, max_size=5))
    target = draw(st.integers(0, len(funcs) - 1))
    touched = draw(st.sets(st.integers(0, len(funcs) - 1)))
    changes = {i: (draw(CHANGE), draw(st.integers(0, 99))) for i in sorted(touched)}
    read = draw(st.sampled_from(["whole", "target", "each"]))
    header = draw(st.integers(0, 2))  # a formatter's lines at the top
    by_lines = draw(st.booleans())
    return {
        "funcs": funcs, "target": target, "changes": changes, "read": read,
        "header": header, "by_lines": by_lines,
    }  # fmt: skip


def run_scenario(sc: dict[str, object]) -> tuple[dict[str, object], bool]:
    """(the checkEdit result for the target function, whether its code differs from what
    the session read)."""
    funcs: list[list[str]] = sc["funcs"]  # type: ignore[assignment]
    target: int = sc["target"]  # type: ignore[assignment]
    changes: dict[int, tuple[str, int]] = sc["changes"]  # type: ignore[assignment]
    after = [changed(b, *changes[i]) if i in changes else b for i, b in enumerate(funcs)]
    differs = after[target] != funcs[target]

    async def go() -> dict[str, object]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "repo"
            root.mkdir()
            (root / "m.py").write_text(render(funcs))
            engine = await Engine.open(root, Path(tmp) / "state", clock=FakeClock())
            try:
                if sc["read"] == "whole":
                    await observe(engine, "s", "m.py", "all")
                elif sc["read"] == "target":
                    first, last = extent(funcs, target, 0)
                    await observe(engine, "s", "m.py", "t", first, last)
                else:
                    for i in range(len(funcs)):
                        first, last = extent(funcs, i, 0)
                        await observe(engine, "s", "m.py", f"f{i}", first, last)
                text = "# formatted\n" * int(sc["header"]) + render(after)  # type: ignore[call-overload]
                (root / "m.py").write_text(text)
                if sc["by_lines"]:
                    first, last = extent(after, target, int(sc["header"]))  # type: ignore[call-overload]
                    return await check(engine, "s", "m.py", first_line=first, last_line=last)
                return await check(engine, "s", "m.py", old_text=f"def f{target}():\n")
            finally:
                await engine.close()

    return asyncio.run(go()), differs


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_never_allow_a_region_that_differs_from_what_the_session_knew(
    sc: dict[str, object],
) -> None:
    result, differs = run_scenario(sc)
    if differs:
        assert result["verdict"] == "deny", (sc, result)
        assert result["reason"] == "changed", (sc, result)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_never_deny_changed_when_only_other_units_changed(sc: dict[str, object]) -> None:
    result, differs = run_scenario(sc)
    if not differs:
        assert result["reason"] != "changed", (sc, result)
        # Every read here covered the target whole: it is known.
        assert result["verdict"] == "allow", (sc, result)
