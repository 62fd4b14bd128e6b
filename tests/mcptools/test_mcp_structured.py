"""Every ``fresh-ls mcp`` result carries structured content that a program can act on,
validated against the ``outputSchema`` its tool declares, through the ``mcp`` SDK's own
stdio client: allow, each deny reason the tools give (``changed``, ``unseen``,
``missing``, ``ambiguous``, ``protected``, ``busy``) and errors (the tools' own, and
arguments the SDK rejects before a tool runs).

The SDK's client validates a successful result against the declared schema itself (and
fails the call when it does not conform); it skips error results, so every result here is
also validated explicitly with ``jsonschema``."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp.client.session import ClientSession

from fresh_ls.mcp.files import write_lock
from fresh_ls.mcp.outcome import OUTCOMES, output_schema
from tests.e2e._support import make_workspace, replace_in
from tests.mcptools._support import mcp_client, text_of

pytestmark = pytest.mark.timeout(120)

#: The keys every result has, in this order (``text`` first: see fresh_ls/mcp/outcome.py).
COMMON = ["text", "verdict", "reason", "retryable", "path"]


@pytest.fixture
def ws() -> Iterator[Path]:
    scratch = Path(tempfile.mkdtemp(prefix="fls-mcps-"))
    try:
        yield make_workspace(scratch / "ws")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class Tools:
    """One MCP session, with each tool's declared output schema."""

    def __init__(self, session: ClientSession, schemas: dict[str, dict[str, Any]]) -> None:
        self.session = session
        self.schemas = schemas

    async def __call__(self, tool: str, **arguments: Any) -> tuple[dict[str, Any], Any]:
        """(structured content, the whole result) of one call, the content validated
        against ``tool``'s declared schema and its ``text`` the result's text."""
        result = await self.session.call_tool(tool, arguments)
        got = result.structured_content
        assert isinstance(got, dict), result
        jsonschema.Draft202012Validator(self.schemas[tool]).validate(got)
        assert list(got)[: len(COMMON)] == COMMON, list(got)
        assert got["text"] == text_of(result)
        assert bool(result.is_error) == (got["verdict"] != "allow"), got
        meta = (result.meta or {}).get("fresh-ls")
        if got["verdict"] == "deny":  # kept for clients that read _meta
            assert meta == {k: got[k] for k in ("verdict", "reason", "retryable")}, meta
        return got, result


@contextlib.asynccontextmanager
async def connect(ws: Path) -> AsyncIterator[Tools]:
    async with mcp_client(ws, "--session", "agent") as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        schemas = {name: dict(t.output_schema or {}) for name, t in listed.items()}
        yield Tools(session, schemas)


async def test_every_tool_declares_the_schema_of_its_outcome(ws: Path) -> None:
    async with connect(ws) as tools:
        assert set(tools.schemas) == set(OUTCOMES)
        for name, schema in tools.schemas.items():
            assert schema == output_schema(name), name
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object" and schema["required"][:5] == COMMON
        # The schema is no formality: a result of another shape fails it.
        validator = jsonschema.Draft202012Validator(tools.schemas["edit"])
        good, _ = await tools("read", path="util.py")
        assert not validator.is_valid(good)  # a read's fields are not an edit's
        assert not validator.is_valid({**good, "verdict": "maybe"})


async def test_read_stale_and_gate(ws: Path) -> None:
    async with connect(ws) as tools:
        read, _ = await tools("read", path="util.py", first_line=1, last_line=3)
        assert (read["verdict"], read["path"], read["firstLine"], read["lastLine"]) == (
            "allow", "util.py", 1, 3,
        )  # fmt: skip
        assert read["totalLines"] == 6 and f"[view {read['viewId']}]" in read["text"]
        stale, _ = await tools("stale")
        assert (stale["verdict"], stale["views"]) == ("allow", [])
        gate, _ = await tools("gate")
        assert (gate["proceed"], gate["stale"]) == (True, [])
        replace_in(ws / "util.py", "a + b", "a + b + 0")
        stale, _ = await tools("stale")
        (view,) = stale["views"]
        assert (view["viewId"], view["status"]) == (read["viewId"], "changed")
        (unit,) = [u for u in view["units"] if u["status"] != "fresh"]
        assert unit["changedBy"] == "outside" and "+    return a + b + 0" in unit["diff"]
        gate, _ = await tools("gate", view_ids=[read["viewId"]])
        assert gate["proceed"] is False
        assert [(v["viewId"], v["status"], v["changedBy"]) for v in gate["stale"]] == [
            (read["viewId"], "changed", "outside"),
        ]


async def test_edit_allow_and_each_deny_of_the_guard(ws: Path) -> None:
    async with connect(ws) as tools:
        await tools("read", path="cart.py")
        done, _ = await tools(
            "edit", path="cart.py", old_text="quantity * RATE", new_text="quantity * RATE * 3"
        )
        assert (done["verdict"], done["reason"], done["retryable"]) == ("allow", "known", False)
        assert (done["firstLine"], done["lastLine"]) == (9, 9) and done["viewId"]
        assert [(u["name"], u["status"], u["known"]) for u in done["units"]] == [
            ("Cart.total", "fresh", True),
        ]
        replace_in(ws / "cart.py", "return subtotal", "return subtotal - 5")
        changed, _ = await tools(
            "edit", path="cart.py", old_text="return subtotal", new_text="return subtotal + 1"
        )
        assert (changed["verdict"], changed["reason"], changed["retryable"]) == (
            "deny", "changed", True,
        )  # fmt: skip
        (unit,) = changed["units"]
        assert (unit["name"], unit["symbolKind"], unit["status"], unit["changedBy"]) == (
            "Cart.total", "method", "changed", "outside",
        )  # fmt: skip
        assert "+        return subtotal - 5\n" in unit["diff"]
        assert changed["viewId"] and changed["viewId"] in changed["text"]
        unseen, _ = await tools("edit", path="util.py", old_text="a + b", new_text="b + a")
        assert (unseen["reason"], unseen["retryable"]) == ("unseen", True)
        assert [u["known"] for u in unseen["units"]] == [False] and unseen["viewId"]
        missing, _ = await tools("edit", path="cart.py", old_text="nowhere", new_text="x")
        assert (missing["reason"], missing["retryable"], missing["units"]) == ("missing", False, [])
        assert missing["viewId"] is None
        ambiguous, _ = await tools("edit", path="cart.py", old_text="return", new_text="yield")
        assert (ambiguous["reason"], ambiguous["retryable"]) == ("ambiguous", False)


async def test_protected_busy_and_errors(ws: Path) -> None:
    async with connect(ws) as tools:
        (ws / ".git").mkdir()
        protected, _ = await tools("write", path=".git/config", content="x\n")
        assert (protected["verdict"], protected["reason"], protected["retryable"]) == (
            "deny", "protected", False,
        )  # fmt: skip
        assert protected["path"] == ".git/config"
        await tools("read", path="cart.py")
        async with write_lock(ws / ".fresh-ls", "cart.py", "another-writer"):
            busy, _ = await tools("edit", path="cart.py", old_text="return 1", new_text="return 2")
        assert (busy["verdict"], busy["reason"], busy["retryable"]) == ("deny", "busy", True)
        assert "another-writer" in busy["text"]
        for tool, arguments, says in (
            ("read", {"path": "../outside.py"}, "outside the root"),
            ("read", {"path": "nothing.py"}, "does not exist"),
            ("edit", {"path": "cart.py", "old_text": "", "new_text": "x"}, "old_text is empty"),
            ("gate", {"view_ids": ["no-such-view"]}, "no-such-view"),
            ("read", {"first_line": 1}, "path"),  # rejected by the SDK before the tool runs
            ("edit", {"path": "cart.py", "old_text": 3, "new_text": "x"}, "old_text"),
        ):
            failed, result = await tools(tool, **arguments)
            assert result.is_error and failed["verdict"] == "error", failed
            assert (failed["reason"], failed["retryable"]) == (None, False)
            assert says in failed["text"], failed
            assert result.meta is None or "fresh-ls" not in result.meta


async def test_write_allow_and_deny(ws: Path) -> None:
    async with connect(ws) as tools:
        created, _ = await tools("write", path="pkg/new.py", content="X = 1\nY = 2\n")
        assert (created["verdict"], created["reason"], created["created"]) == (
            "allow",
            "known",
            True,
        )
        assert (created["lines"], created["bytes"], created["path"]) == (2, 12, "pkg/new.py")
        again, _ = await tools("write", path="pkg/new.py", content="X = 3\n")
        assert (again["created"], again["lines"]) == (False, 1)
        denied, _ = await tools("write", path="util.py", content="gone\n")
        assert (denied["verdict"], denied["reason"], denied["retryable"]) == (
            "deny",
            "unseen",
            True,
        )
        assert denied["units"] and denied["viewId"] and "def add(a, b):" in denied["text"]
        assert (denied["created"], denied["lines"]) == (None, None)
