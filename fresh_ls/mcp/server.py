"""``fresh-ls mcp --root DIR [--session NAME]``: an MCP server (stdio, the official ``mcp``
SDK) whose ``read`` registers views and whose ``edit`` and ``write`` apply only what
``fresh/checkEdit`` allows, for any MCP client (Claude Code, Codex, Cursor, Claude Desktop).

It is a client of the root's fresh-ls server, as ``fresh-ls proxy`` is: it attaches to the
running one through ``endpoint.json``, and when none runs it starts one (listening, so
``fresh-ls status`` and a second MCP server find it). When that connection drops (the server
it started went away with another MCP server), it attaches or starts again: views live in
the server's database, so nothing acknowledged is lost.

One session per MCP connection (one stdio process), named ``mcp-<random>``, unless
``--session`` names one (to share a session with hooks or a harness of the same agent).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent

from fresh_ls import protocol as proto
from fresh_ls import statedir
from fresh_ls.client import AsyncClient, ConnectionClosedError, FreshClientError
from fresh_ls.core.paths import PathOutsideRoot, resolve_in_roots
from fresh_ls.core.text import split_lines
from fresh_ls.mcp import endings, render
from fresh_ls.mcp.files import (
    Busy,
    FileRefused,
    TooLarge,
    read_bytes,
    read_line_range,
    replace_if_unchanged,
    write_lock,
)
from fresh_ls.mcp.outcome import (
    OUTCOMES,
    EditOutcome,
    GateOutcome,
    Outcome,
    ReadOutcome,
    StaleOutcome,
    ToolReason,
    ToolVerdict,
    WriteOutcome,
    output_schema,
    parse,
    structured,
    units_of,
)
from fresh_ls.mcp.protect import state_refusal, write_refusal

#: The most lines one ``read`` shows (the rest is named, with how to read it).
MAX_READ_LINES = 2000
#: How often an edit is checked again when the file changed between check and write.
WRITE_ATTEMPTS = 3
#: What one tool call may wait for the fresh-ls server (issue 21, finding 11): a server
#: alive but not answering (stopped, swapping) makes the call fail closed, nothing
#: written, instead of hanging the agent.
SIDECAR_TIMEOUT_S = float(os.environ.get("FRESH_LS_MCP_SIDECAR_TIMEOUT_S", "10"))

READ_DESCRIPTION = """Read a text file (path absolute or relative to the project root), \
shown with line numbers ("     9\\tcode"). Optional first_line / last_line (1-based, \
inclusive) read a part. What you read is registered: the edit and write tools later check \
that the code you change is still the code you read. Copy old_text for edit from this \
output without the line numbers."""

EDIT_DESCRIPTION = """Replace old_text with new_text in a file. old_text must occur exactly \
once, copied exactly from the file. The edit is applied only if the code it changes (the \
whole function or block around old_text) is still what you last read or wrote: a change \
elsewhere in the file by someone else does not stop it. If it is DENIED, nothing was \
written: the result says who changed the code, shows the diff from what you saw to what is \
there now and the current code. Then re-decide your change against the current code and \
call edit again with old_text taken from that current code (you need not read the file \
again). Never write over the other change blindly."""

WRITE_DESCRIPTION = """Create a file with content, or overwrite a whole file. Creating a new \
file is always allowed. Overwriting an existing file is allowed only if you have read (or \
written) all of it as it is now; if it is DENIED, nothing was written and the result shows \
what changed, who changed it, and the current content, which now counts as read: merge \
your change into it and call write (or edit) again."""

STALE_DESCRIPTION = """List the files you read in this session that changed since, with \
who changed them and the diff from what you saw to what is there now. Use it before \
relying on earlier reads; read again what it lists."""

GATE_DESCRIPTION = """Before an irreversible step (a commit, a deploy, a message sent on), \
check that the reads your decision rests on still hold. view_ids: the view ids the read \
tool printed (default: every read of this session). proceed: true means go ahead; \
proceed: false lists what changed: read it again (or call stale) before the step."""


class Retryable(ToolError):
    """A failure the same call may get past later (the server slow, the file moving)."""


class Backend:
    """The connection to the root's fresh-ls server, made on first use and made again
    once when it drops."""

    def __init__(self, root: Path, state_dir: Path | None, also: tuple[Path, ...] = ()) -> None:
        self.also = also
        self.root = root
        self.state_dir = state_dir
        self._client: AsyncClient | None = None
        self._lock = asyncio.Lock()

    async def _connect(self) -> AsyncClient:
        """The root's shared server (``AsyncClient.shared``): the live one, else one started
        detached that every client of the root shares, so it outlives this MCP process
        while a run, an editor or another agent still uses it, and a server that goes away
        is reconnected (or restarted) by the client itself."""
        return await AsyncClient.shared(self.root, state_dir=self.state_dir, also=self.also)

    async def client(self) -> AsyncClient:
        async with self._lock:
            if self._client is None:
                self._client = await self._connect()
            return self._client

    async def call(self, fn: Callable[[AsyncClient], Awaitable[Any]]) -> Any:
        """``fn`` on the server's client, within ``SIDECAR_TIMEOUT_S`` (else ToolError)."""
        try:
            async with asyncio.timeout(SIDECAR_TIMEOUT_S):
                return await self._call(fn)
        except TimeoutError:
            raise Retryable(
                f"the fresh-ls server of {self.root} did not answer within "
                f"{SIDECAR_TIMEOUT_S:g} s (is it stopped?), so the call did not complete; "
                "read the file again and retry, or check the server with `fresh-ls status`"
            ) from None

    async def _call(self, fn: Callable[[AsyncClient], Awaitable[Any]]) -> Any:
        client = await self.client()
        try:
            return await fn(client)
        except ConnectionClosedError:
            async with self._lock:
                if self._client is client:
                    self._client = None
                    with contextlib.suppress(Exception):
                        await client.close()
            return await fn(await self.client())

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


async def _connected(_: AsyncClient) -> None:
    """Nothing: calling it makes (or re-makes) the connection to the fresh-ls server."""


async def _check_text(client: AsyncClient, session: str, rel: str, old: str) -> Any:
    return await client.check_edit(session, rel, old_text=old)


#: The ``_meta`` key of a deny's verdict, for programs that read no structured content.
META_KEY = "fresh-ls"


def _result(outcome: Outcome) -> CallToolResult:
    """The tool result of ``outcome``: its text as the content block, all of it as the
    structured content (``fresh_ls.mcp.outcome``). A deny or an error is flagged as an
    error result, not a protocol error, so the model and the client's log see that nothing
    was written; a deny also carries its verdict under ``_meta`` (as before there was
    structured content): ``reason`` (``fresh/checkEdit``'s, or ``protected``, ``busy``)
    and ``retryable`` (whether the same call can succeed now, or in a moment for
    ``busy``)."""
    meta = None
    if outcome.verdict == ToolVerdict.DENY:
        reason = outcome.reason.value if outcome.reason else None
        meta = {META_KEY: {"verdict": "deny", "reason": reason, "retryable": outcome.retryable}}
    return CallToolResult(
        content=[TextContent(type="text", text=outcome.text)],
        structured_content=structured(outcome),
        is_error=outcome.verdict != ToolVerdict.ALLOW,
        _meta=meta,
    )


def _check_denied(
    cls: type[EditOutcome] | type[WriteOutcome], action: str, rel: str, check: dict[str, Any]
) -> Outcome:
    """``fresh/checkEdit``'s deny as the tool's outcome: the units, the view recorded."""
    return cls(
        text=render.deny_text(action, rel, check),
        verdict=ToolVerdict.DENY,
        reason=ToolReason(check["reason"]),
        retryable=bool(check.get("retryable")),
        path=rel,
        units=units_of(check["units"]),
        view_id=check.get("viewId"),
    )


class _OutcomeTool(Tool):
    """A tool every failure of which is an ``error`` outcome (text and structured content)
    rather than the SDK's text only result: a ``ToolError`` the tool raises, and arguments
    the SDK rejects before it runs (a missing ``path``). A crash (a bug:
    ``UnexpectedToolError``) is left to the SDK, which logs it and answers a generic
    error."""

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        try:
            return await super().run(arguments, context, convert_result)
        except UnexpectedToolError:
            raise
        except ToolError as exc:  # "Error executing tool NAME: ...", as the SDK words it
            retry = isinstance(exc.__cause__, Retryable)
            outcome = OUTCOMES[self.name](text=str(exc), verdict=ToolVerdict.ERROR, retryable=retry)
            return _result(outcome)


def _as_tool(name: str, description: str, fn: Callable[..., Awaitable[Outcome]]) -> Tool:
    """``fn`` as an MCP tool whose results carry their outcome as structured content and
    which declares the outcome's ``outputSchema``."""

    @functools.wraps(fn)
    async def tool(*args: Any, **kwargs: Any) -> CallToolResult:
        return _result(await fn(*args, **kwargs))

    made = _OutcomeTool.from_function(
        tool, name=name, description=description, structured_output=False
    )
    # Published, not validated by the SDK (there is no pydantic model): the outcome's own
    # converter makes the shape, tests/mcptools/test_mcp_structured.py validates it.
    made.fn_metadata.output_schema = output_schema(name)
    return made


def build_server(
    root: Path, session: str, state_dir: Path | None = None, also: tuple[Path, ...] = ()
) -> MCPServer[Any]:
    root = root.resolve()
    also = tuple(a.resolve() for a in also)
    backend = Backend(root, state_dir, also)
    state = state_dir or statedir.default_state_dir(root)

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await backend.close()

    def resolve(path: str) -> tuple[str, Path]:
        try:
            return resolve_in_roots(root, also, path)
        except PathOutsideRoot as exc:
            where = ", ".join(str(r) for r in (root, *also))
            raise ToolError(f"{exc}; only files under {where} can be used") from None

    def load(rel: str, real: Path) -> bytes | None:
        """The file's bytes for an edit or a write (None: it does not exist)."""
        try:
            return read_bytes(real)
        except FileRefused as exc:
            raise ToolError(f"{rel} {exc}") from None

    def refused(
        cls: type[EditOutcome] | type[WriteOutcome], action: str, rel: str, real: Path
    ) -> Outcome | None:
        why = write_refusal(rel, real, state)
        if why is None:
            return None
        text = render.refused_text(action, rel, why)
        return cls(text=text, verdict=ToolVerdict.DENY, reason=ToolReason.PROTECTED, path=rel)

    def busy(
        cls: type[EditOutcome] | type[WriteOutcome], action: str, rel: str, b: Busy
    ) -> Outcome:
        text = render.busy_text(action, b.rel, b.holder)
        return cls(
            text=text, verdict=ToolVerdict.DENY, reason=ToolReason.BUSY, retryable=True, path=rel
        )

    def decode(rel: str, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{rel} is not UTF-8 text") from None

    async def call(fn: Callable[[AsyncClient], Awaitable[Any]]) -> Any:
        try:
            return await backend.call(fn)
        except FreshClientError as exc:
            raise ToolError(f"fresh-ls: {exc}") from None

    async def report_write(rel: str) -> None:
        """Tell fresh-ls this session wrote ``rel`` (so its lines count as seen), and wait
        until it has taken effect: a request after a notification on one connection sees
        it, so the next check of any agent names this session as the author."""
        await call(lambda c: c.did_write(rel, session=session))
        await call(lambda c: c.gate(session, []))

    def shown(
        rel: str, first: int, last: int, total: int, text: str, view_id: str | None
    ) -> ReadOutcome:
        return ReadOutcome(
            text=render.read_text(rel, first, last, total, text, view_id),
            verdict=ToolVerdict.ALLOW,
            path=rel,
            first_line=first if last >= first else None,
            last_line=last if last >= first else None,
            total_lines=total,
            view_id=view_id,
        )

    async def read(
        path: str, first_line: int | None = None, last_line: int | None = None
    ) -> ReadOutcome:
        rel, real = resolve(path)
        why = state_refusal(rel, real, state)
        if why is not None:
            raise ToolError(why)
        try:
            data = await asyncio.to_thread(read_bytes, real)
        except TooLarge:
            return await read_large(rel, real, first_line, last_line)
        except FileRefused as exc:
            raise ToolError(f"{rel} {exc}") from None
        if data is None:
            raise ToolError(f"{rel} does not exist (use write to create it)")
        lines = split_lines(decode(rel, data))
        n = len(lines)
        view_id = f"mcp-read-{uuid.uuid4().hex[:10]}"
        if n == 0:
            await call(lambda c: c.observe(session, rel, view_id=view_id))
            return shown(rel, 1, 0, 0, "", view_id)
        first = first_line or 1
        if first > n:
            raise ToolError(f"first_line {first} is past the end of {rel} ({n} lines)")
        last = min(last_line or n, n, first + MAX_READ_LINES - 1)
        if last < first:
            raise ToolError(f"last_line {last_line} is before first_line {first}")
        text = "".join(lines[first - 1 : last])
        await call(
            lambda c: c.observe(
                session, rel, view_id=view_id, first_line=first, last_line=last, text=text
            )
        )
        return shown(rel, first, last, n, text, view_id)

    async def read_large(
        rel: str, real: Path, first_line: int | None, last_line: int | None
    ) -> ReadOutcome:
        """A range of a file too large for fresh-ls to track: read in chunks off the event
        loop, shown, not registered."""
        first = first_line or 1
        last = min(last_line or first + MAX_READ_LINES - 1, first + MAX_READ_LINES - 1)
        if last < first:
            raise ToolError(f"last_line {last_line} is before first_line {first}")
        try:
            got = await asyncio.to_thread(read_line_range, real, first, last)
        except FileRefused as exc:
            raise ToolError(f"{rel} {exc}") from None
        if got is None:
            raise ToolError(f"{rel} does not exist (use write to create it)")
        lines, n = got
        if first > n:
            raise ToolError(f"first_line {first} is past the end of {rel} ({n} lines)")
        text = decode(rel, b"".join(lines))
        return shown(rel, first, first + len(lines) - 1, n, text, None)

    async def edit(path: str, old_text: str, new_text: str) -> Outcome:
        rel, real = resolve(path)
        if (deny := refused(EditOutcome, "edit", rel, real)) is not None:
            return deny
        if not old_text:
            raise ToolError("old_text is empty: to create or overwrite a whole file use write")
        if old_text == new_text:
            raise ToolError("old_text and new_text are the same: nothing to change")
        await call(_connected)  # a server start is never inside a file's lock
        try:
            return await locked_edit(rel, real, old_text, new_text)
        except Busy as b:
            return busy(EditOutcome, "edit", rel, b)

    async def locked_edit(rel: str, real: Path, old_text: str, new_text: str) -> Outcome:
        async with write_lock(state, rel, session):
            for _ in range(WRITE_ATTEMPTS):
                before = load(rel, real)
                if before is None:
                    raise ToolError(f"{rel} does not exist (use write to create it)")
                text = decode(rel, before)
                # The text as the file holds it (by lines, whatever the line ending).
                asked = endings.locate(text, old_text) or old_text
                check = await call(
                    functools.partial(_check_text, session=session, rel=rel, old=asked)
                )
                if check["verdict"] == "deny":
                    return _check_denied(EditOutcome, "edit", rel, check)
                if text.count(asked) != 1:
                    continue  # the disk moved between this read and the check's
                at = text.index(asked)
                piece = endings.replacement(text, asked, new_text)
                new = text[:at] + piece + text[at + len(asked) :]
                if not replace_if_unchanged(real, new.encode("utf-8"), before):
                    continue  # changed between the check and the write: check again
                await report_write(rel)
                return await edited(rel, new, at, len(piece), check)
        raise Retryable(f"{rel} kept changing while the edit was checked; read it again")

    async def edited(rel: str, new: str, at: int, size: int, check: dict[str, Any]) -> EditOutcome:
        """The lines the new text now spans, shown with numbers and registered as an edit
        result (the snippet is in the model's context now, like a read)."""
        first = new.count("\n", 0, at) + 1
        last = new.count("\n", 0, at + size - 1) + 1 if size else first - 1
        snippet = "".join(split_lines(new)[first - 1 : last])
        view_id = None
        if snippet:
            observed = await call(
                lambda c: c.observe(
                    session,
                    rel,
                    first_line=first,
                    last_line=last,
                    text=snippet,
                    kind="editResult",
                )
            )
            view_id = observed["viewId"]
        return EditOutcome(
            text=render.edited_text(rel, first, last, snippet),
            verdict=ToolVerdict.ALLOW,
            reason=ToolReason.KNOWN,
            path=rel,
            units=units_of(check["units"]),
            view_id=view_id,
            first_line=first if snippet else None,
            last_line=last if snippet else None,
        )

    async def write(path: str, content: str) -> Outcome:
        rel, real = resolve(path)
        if (deny := refused(WriteOutcome, "write", rel, real)) is not None:
            return deny
        await call(_connected)
        try:
            return await locked_write(rel, real, content)
        except Busy as b:
            return busy(WriteOutcome, "write", rel, b)

    async def locked_write(rel: str, real: Path, content: str) -> Outcome:
        async with write_lock(state, rel, session):
            for _ in range(WRITE_ATTEMPTS):
                before = load(rel, real)
                check = await call(lambda c: c.check_edit(session, rel, whole_file=True))
                if check["verdict"] == "deny":
                    return _check_denied(WriteOutcome, "write", rel, check)
                data = content.encode("utf-8")
                if not replace_if_unchanged(real, data, before):
                    continue
                await report_write(rel)
                verb = "Created" if before is None else "Wrote"
                n = len(split_lines(content))
                lines = "line" if n == 1 else "lines"
                return WriteOutcome(
                    text=f"{verb} {rel} ({n} {lines}, {len(data)} bytes).\n",
                    verdict=ToolVerdict.ALLOW,
                    reason=ToolReason.KNOWN,
                    path=rel,
                    units=units_of(check["units"]),
                    created=before is None,
                    lines=n,
                    bytes=len(data),
                )
        raise Retryable(f"{rel} kept changing while the write was checked; read it again")

    async def stale() -> StaleOutcome:
        result = await call(lambda c: c.stale(session))
        views = [v for v in result["views"] if v["status"] != "fresh"]
        return StaleOutcome(
            text=render.stale_text(result),
            verdict=ToolVerdict.ALLOW,
            views=tuple(parse(proto.StaleView, v) for v in views),
        )

    async def gate(view_ids: list[str] | None = None) -> GateOutcome:
        result = await call(lambda c: c.gate(session, view_ids))
        return GateOutcome(
            text=render.gate_text(result),
            verdict=ToolVerdict.ALLOW,
            proceed=result["proceed"],
            stale=tuple(parse(proto.GateStaleView, v) for v in result["stale"]),
        )

    tools = [
        _as_tool(fn.__name__, description, fn)
        for fn, description in (
            (read, READ_DESCRIPTION),
            (edit, EDIT_DESCRIPTION),
            (write, WRITE_DESCRIPTION),
            (stale, STALE_DESCRIPTION),
            (gate, GATE_DESCRIPTION),
        )
    ]
    return MCPServer(
        name="fresh-ls",
        instructions=(
            "Read files with read and change them with edit or write: an edit is applied "
            "only if the code it changes is still the code you read, so you never write "
            "over a change you did not see. A DENIED result shows the current code; decide "
            "again on it and retry."
        ),
        log_level="WARNING",
        lifespan=lifespan,
        tools=tools,
    )


def new_session() -> str:
    return f"mcp-{uuid.uuid4().hex[:10]}"


def run(
    root: Path,
    session: str | None = None,
    state_dir: Path | None = None,
    also: tuple[Path, ...] = (),
) -> int:
    server = build_server(root, session or new_session(), state_dir, also)
    asyncio.run(server.run_stdio_async())
    return 0
