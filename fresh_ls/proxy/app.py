"""``fresh-ls proxy``: an HTTP proxy between a coding agent and its model.

Every request under the proxy's base URL goes to the same path under the upstream URL, with
its headers (API keys included) and query as they came; the answer comes back as the
upstream sent it, chunk by chunk as it arrives (server-sent events are never buffered). Only
the bodies of model requests are changed (``shapes.shape_of``: Anthropic Messages, OpenAI Chat
Completions, OpenAI Responses; one class each in ``apis``, and each body parsed once):

1. the session is named (``shapes.session_of``);
2. each tool result not seen before in that session is read with the recognizers
   (``fresh_ls.toolcalls.agents``): a file view becomes ``fresh/observe`` (view id: the tool
   call's id; ``text``: what the tool showed, its line numbers stripped), a write
   ``fresh/didWrite``; aider's fenced file blocks (``shapes.block_views``) are views too
   (view id ``aider:<path>:<digest>``, ``text``: the block's content) and its SEARCH/REPLACE
   replies (``shapes.reply_writes``) writes;
3. when the request holds a tool result that is a view, it is rewritten with the harness
   rewriter (each API's ``rewrite``: ``arewrite_request``; Responses through
   ``responses.arewrite_responses``): markers for stale views, the current code after the
   newest result, ``fresh/commit`` last; the values that changed are spliced into the
   agent's own bytes (``splice``), so every other byte goes upstream as the agent wrote it.

When the request cannot be made current (the commit failed twice, the server is gone or
does not answer in time) the agent gets an error in its API's own format saying why and
nothing is sent upstream; with ``fail_open`` the original goes upstream instead and a
warning goes to stderr.

Only the agent may use it (``access``: the secret in the base URL's path, a loopback
``Host``, no browser), and every wait and size is bounded (``limits``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sys
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, DummyCookieJar, web
from yarl import URL

from fresh_ls.client import (
    ConnectionClosedError,
    FileUnreadableError,
    FreshClientError,
    InvalidParamsError,
    PathOutsideRootError,
    UnknownIdError,
)
from fresh_ls.core.jsonload import loads, loads_utf8
from fresh_ls.harness.rewrite import RewriteError
from fresh_ls.proxy.access import Access
from fresh_ls.proxy.apis import API, openai_error
from fresh_ls.proxy.limits import ConnectionGuard, Limits
from fresh_ls.proxy.searches import Renderer, SearchResult, outside_note
from fresh_ls.proxy.shapes import (
    BlockView,
    Shape,
    block_views,
    edit_result,
    reply_writes,
    session_of,
    shape_of,
    tool_calls,
)
from fresh_ls.proxy.splice import SpliceError, dumps, spliced
from fresh_ls.toolcalls.agents import Searched, Seen, ToolCall, Wrote, recognize
from fresh_ls.toolcalls.roots import AgentRoots
from fresh_ls.toolcalls.searches import line_ranges, search_view_id, shown_text

#: Headers that belong to one hop, never forwarded (RFC 9110 section 7.6.1), and those
#: aiohttp sets itself from the body it sends.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
#: Observe errors that mean "this tool result is no view" (file gone, binary, outside).
_NOT_A_VIEW = (FileUnreadableError, InvalidParamsError, PathOutsideRootError)
#: The largest request body accepted (Claude Code re-sends whole histories).
MAX_BODY = 256 * 1024 * 1024

ClientFactory = Callable[[], Awaitable[Any]]


@dataclass
class SessionState:
    seen: set[str] = field(default_factory=set)  # tool-call ids already read
    views: set[str] = field(default_factory=set)  # those that became views
    #: search results (``proxy.searches``) by tool-call id
    searches: dict[str, SearchResult] = field(default_factory=dict)
    #: tool results that show a file outside every root: the line added to each
    outside: dict[str, str] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    requests: int = 0
    rewritten: int = 0


@dataclass(frozen=True)
class _Turn:
    """One model request being made current: the steps of ``Proxy._rewrite`` share it."""

    client: Any
    shape: Shape
    session: str
    state: SessionState
    #: the request's body as parsed (never changed: a rewrite is a copy)
    body: dict[str, Any]
    #: its file blocks (aider) and its tool calls, read once
    blocks: list[BlockView]
    calls: list[ToolCall]


class CannotRewrite(Exception):
    """The request cannot be made current; ``str()`` says why, ``status`` the HTTP status
    of the error the agent gets."""

    def __init__(self, message: str, status: int = 503) -> None:
        super().__init__(message)
        self.status = status


class Proxy:
    """The proxy's state: the fresh-ls client, the sessions, the upstream session."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        upstream: str,
        connect: ClientFactory,
        *,
        fail_open: bool = False,
        policy: str | None = None,
        budget_bytes: int | None = None,
        placement: str | None = "anchored",
        agent_cwd: str | None = None,
        log_requests: str | os.PathLike[str] | None = None,
        also: tuple[Path, ...] = (),
        agent_roots: list[str] | tuple[str, ...] = (),
        access: Access | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        spellings = [str(self.root)]
        if os.path.abspath(root) != str(self.root):
            spellings.append(os.path.abspath(root))
        spellings += [r for r in agent_roots if r not in spellings]  # the agent's own names
        self.also = tuple(Path(a).resolve() for a in also)
        self.paths = AgentRoots(self.root, spellings, agent_cwd or str(self.root), self.also)
        self.renderer = Renderer(self.paths)
        self.upstream = upstream.rstrip("/")
        self.connect = connect
        self.fail_open = fail_open
        self.policy = policy
        self.budget_bytes = budget_bytes
        #: "anchored" (the default: current code sent once, cached after) or "end" (v1.1)
        self.placement = None if placement == "end" else placement
        self.client: Any = None
        self.sessions: dict[str, SessionState] = {}
        self.http: ClientSession | None = None
        self.requests = 0
        self.rewritten = 0
        self._connecting = asyncio.Lock()
        self.log_dir = Path(log_requests) if log_requests else None
        self._logged = 0
        #: who may use the proxy (the secret of its base URL; its port once bound)
        self.access = access or Access()
        self.limits = limits or Limits()
        self.guard = ConnectionGuard(self.limits.max_connections)

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        limits = self.limits
        self.http = ClientSession(
            timeout=ClientTimeout(
                total=None,
                connect=limits.upstream_connect_timeout,
                sock_connect=limits.upstream_connect_timeout,
                sock_read=limits.upstream_read_timeout,
            ),
            auto_decompress=False,
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Accept", "Content-Type"),
            # Not a browser: an upstream's Set-Cookie goes back to the client that asked and
            # is never replayed (a jar would hand one agent's cookie to every other and
            # replace the cookie a client sends with its own).
            cookie_jar=DummyCookieJar(),
        )
        await self._client()

    async def close(self) -> None:
        if self.http is not None:
            await self.http.close()
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()

    async def _client(self, renew: bool = False) -> Any:
        async with self._connecting:
            if renew and self.client is not None:
                old, self.client = self.client, None
                with contextlib.suppress(Exception):
                    await old.close()
            if self.client is None:
                self.client = await self.connect()
            return self.client

    def runner(self) -> web.AppRunner:
        """The proxy's app runner. Request bodies are read as they came (no automatic
        decompression): an unchanged body is forwarded byte for byte, encoding and all.
        A client that goes away cancels its handler (and so the upstream call); the idle
        timeout also bounds the wait for a request's headers (aiohttp closes a connection
        that has not sent a whole request line and headers by then)."""
        return web.AppRunner(
            self.app(),
            access_log=None,
            handle_signals=False,
            auto_decompress=False,
            handler_cancellation=True,
            keepalive_timeout=self.limits.header_timeout,
            shutdown_timeout=self.limits.shutdown_timeout,
        )

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app

    # -- one request ----------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        why, path = self.access.refusal(
            request.method,
            request.raw_path,
            request.headers.get("Host"),
            request.headers.get("Origin"),
        )
        if path is None:  # decided before a byte of the body is read
            return error_response(shape_of(request.method, request.path), why, 403)
        shape = shape_of(request.method, request.path[len(self.access.prefix) :] or "/")
        try:
            async with asyncio.timeout(self.limits.body_timeout):
                raw = await request.read()
        except TimeoutError:
            return error_response(
                shape,
                f"the request body did not arrive within {self.limits.body_timeout:g} s",
                408,
            )
        with self.guard.serving(request.protocol):
            return await self._serve(request, path, shape, raw)

    async def _serve(
        self, request: web.Request, path: str, shape: Shape | None, raw: bytes
    ) -> web.StreamResponse:
        if shape is None or not raw:
            return await self.forward(request, path, shape, raw)
        try:
            plain, decoded = _decoded(request.headers.get("Content-Encoding"), raw)
            parsed = Parsed.of(plain)
            # Shielded: a client that goes away does not cut a rewrite (and the session's
            # record of what it registered) in half; the sidecar deadline bounds it.
            sent = await asyncio.shield(self.make_current(shape, request, path, parsed))
        except CannotRewrite as exc:
            if not self.fail_open:
                return error_response(shape, str(exc), exc.status)
            print(
                f"fresh-ls proxy: warning: forwarding {_loggable(path)} unrewritten "
                f"(--fail-open): {exc}",
                file=sys.stderr,
                flush=True,
            )
            return await self.forward(request, path, shape, raw)
        if sent is plain:
            return await self.forward(request, path, shape, raw)  # unchanged: as they came
        # Rewritten: sent uncompressed (the upstream sees no Content-Encoding).
        drop = ("content-encoding",) if decoded else ()
        return await self.forward(request, path, shape, sent, drop=drop)

    async def make_current(
        self, shape: Shape, request: web.Request, path: str, parsed: Parsed
    ) -> bytes:
        """The body to send upstream: the client's bytes themselves unless a view in it
        had to change, and then the client's bytes with only the changed values spliced in
        (``proxy.splice``)."""
        body, raw = parsed.body, parsed.raw
        session = session_of(shape, request.headers, body)
        state = self.sessions.setdefault(session, SessionState())
        self.requests += 1
        state.requests += 1
        deadline = self.limits.sidecar_timeout
        try:
            async with asyncio.timeout(deadline) as bound, state.lock:
                for attempt in (1, 2):
                    if attempt == 2:  # the server is gone: starting a new one has more time
                        deadline = self.limits.sidecar_start_timeout
                        bound.reschedule(asyncio.get_running_loop().time() + deadline)
                    client = await self._client(renew=attempt == 2)
                    try:
                        out = await self._rewrite(client, shape, session, state, body)
                        break
                    except ConnectionClosedError as exc:
                        if attempt == 2:
                            raise CannotRewrite(
                                f"the fresh-ls server is gone: {exc.message}"
                            ) from None
                    except FreshClientError as exc:
                        raise CannotRewrite(f"fresh-ls answered an error: {exc}") from None
                    except RewriteError as exc:
                        raise CannotRewrite(str(exc)) from None
        except TimeoutError:
            raise CannotRewrite(
                f"the fresh-ls server did not answer within {deadline:g} s (is it stopped or "
                "overloaded?); the request was not sent"
            ) from None
        sent = raw if out is None else parsed.with_body(out)
        if out is not None:
            self.rewritten += 1
            state.rewritten += 1
        if self.log_dir is not None:
            self._log(request, path, session, body, out)
        return sent

    def _log(
        self,
        request: web.Request,
        path: str,
        session: str,
        original: dict[str, Any],
        out: dict[str, Any] | None,
    ) -> None:
        """``--log-requests DIR``: the original and the sent body of one model request, and
        its headers without credentials."""
        self._logged += 1
        assert self.log_dir is not None
        self.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        headers = {k: ("<removed>" if _secret(k) else v) for k, v in request.headers.items()}
        entry = {
            "method": request.method,
            "path": _loggable(path),
            "session": session,
            "headers": headers,
            "rewritten": out is not None,
            "original": original,  # the objects as parsed and rewritten: no parse again
            "sent": original if out is None else out,
        }
        where = self.log_dir / f"{os.getpid()}-{self._logged:05d}.json"
        fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(entry, handle, ensure_ascii=False)

    async def _register_aider(self, turn: _Turn) -> list[str]:
        """aider's replies' writes (each reply once), then its file blocks as whole-file
        views; the view ids the request holds."""
        client, session, state, blocks, body = (
            turn.client, turn.session, turn.state, turn.blocks, turn.body
        )  # fmt: skip
        for reply_id, paths in reply_writes("chat", body):
            if reply_id in state.seen:
                continue
            state.seen.add(reply_id)
            for path in paths:
                rel = self.paths.rel(path)
                if rel is not None and self.paths.text_of(path, None) is not None:
                    await client.did_write(rel, session=session)
        held: list[str] = []
        for block in blocks:
            if block.view_id not in state.seen:
                state.seen.add(block.view_id)
                rel = self.paths.rel(block.path)
                if rel is None:
                    continue
                try:
                    await client.observe(session, rel, view_id=block.view_id, text=block.text)
                except _NOT_A_VIEW:
                    continue
                state.views.add(block.view_id)
            if block.view_id in state.views:
                held.append(block.view_id)
        return held

    async def _register(self, turn: _Turn) -> list[str]:
        """Observe the new views and report the writes; the view ids the request holds."""
        client, session, state = turn.client, turn.session, turn.state
        held: list[str] = []
        if turn.shape == "chat":
            held += await self._register_aider(turn)
        for call in turn.calls:
            if call.call_id in state.seen:
                if call.call_id in state.views:
                    held.append(call.call_id)
                continue
            # off the event loop: recognizing reads files (bounded, but a disk can be slow)
            effects = await asyncio.to_thread(recognize, call, self.paths.cwd, self.paths.text_of)
            # the tool result as the model sees it, for a patch in place (anchored): only
            # when the result is one view's
            result = call.output if sum(isinstance(e, Seen) for e in effects) == 1 else None
            search = SearchResult(call, self.paths.cwd)
            for effect in effects:
                rel = self.paths.rel(effect.path, effect.cwd)
                if rel is None:
                    if not isinstance(effect, Wrote) and call.call_id not in state.outside:
                        state.outside[call.call_id] = outside_note(
                            self.paths.absolute(effect.path, effect.cwd), self._root_names()
                        )
                    continue
                if isinstance(effect, Wrote):
                    await client.did_write(rel, session=session)
                    continue
                if isinstance(effect, Searched):
                    await self._observe_search(client, session, search, rel, effect)
                    continue
                assert isinstance(effect, Seen)
                try:
                    await client.observe(
                        session,
                        rel,
                        view_id=call.call_id,
                        first_line=effect.first,
                        last_line=effect.last,
                        text=effect.text,
                        kind=None if effect.kind == "read" else effect.kind,
                        result=result if self.placement == "anchored" else None,
                    )
                except _NOT_A_VIEW:
                    continue
                state.views.add(call.call_id)
                held.append(call.call_id)
            if search.views:
                state.searches[call.call_id] = search
            state.seen.add(call.call_id)
        return held

    async def _observe_search(
        self, client: Any, session: str, search: SearchResult, rel: str, found: Searched
    ) -> None:
        """One file's printed lines of a search result as a sparse view."""
        view_id = search_view_id(search.call.call_id, len(search.views))
        try:
            await client.observe(
                session, rel, view_id=view_id, ranges=line_ranges(found), text=shown_text(found)
            )
        except _NOT_A_VIEW:
            return
        search.views.append((view_id, rel, found))

    def _root_names(self) -> list[str]:
        return [str(self.root), *(str(a) for a in self.also)]

    async def _forgotten(self, turn: _Turn) -> dict[str, str] | None:
        """Ask the server which of the session's views it holds (``fresh/statuses``: the
        status of each, without the units and diffs of ``fresh/stale``; ``fresh/forget``, a
        forgotten session or a reset state dir drop views behind the proxy's back): a tool
        result whose view is gone is read again, so it is registered anew rather than sent
        unmarked. The status of each view held, by id (None: nothing to ask yet)."""
        state = turn.state
        if not state.views and not state.searches:
            return None
        got = await turn.client.statuses(turn.session)
        known = {v["viewId"]: v["status"] for v in got["views"]}
        for view_id in [v for v in state.views if v not in known]:
            state.views.discard(view_id)
            state.seen.discard(view_id)
        for call_id, found in list(state.searches.items()):
            if any(v not in known for v in found.view_ids):
                del state.searches[call_id]
                state.seen.discard(call_id)
        return known

    async def _searches_and_outside(
        self, turn: _Turn, known: dict[str, str]
    ) -> dict[str, Any] | None:
        """Stale search results printed again in place, and the line added to results
        outside every root (``proxy.searches``): the changed body (``body`` itself is left
        as it was), or None."""
        shape, state, body = turn.shape, turn.state, turn.body
        present = {c.call_id for c in turn.calls}
        edited: dict[str, Any] | None = None
        searches = [f for c, f in state.searches.items() if c in present]
        unknown = [v for f in searches for v in f.view_ids if v not in known]
        if unknown:
            got = await turn.client.statuses(turn.session, view_ids=unknown)
            known = {**known, **{v["viewId"]: v["status"] for v in got["views"]}}
        for found in searches:
            if all(known.get(v) == "fresh" for v in found.view_ids):
                continue
            text = await self.renderer.render(found)
            if text is not None:
                edited = (
                    edit_result(shape, edited or body, found.call.call_id, _replaced_by(text))
                    or edited
                )
        for call_id, note in state.outside.items():
            if call_id in present:
                edited = edit_result(shape, edited or body, call_id, _with_line(note)) or edited
        return edited

    async def _all_fresh(self, turn: _Turn, held: list[str]) -> bool:
        """Whether every view this request holds (``held``, its searches' included) is
        ``fresh`` now: ``fresh/statuses``, asked last, right before the request goes (the
        re-check ``fresh/commit`` makes on the full path). False for a view the server
        forgot, any other status, or a line to add to a result outside the roots."""
        state = turn.state
        present = {c.call_id for c in turn.calls}
        if any(c in present for c in state.outside):
            return False
        ids = held + [v for c, f in state.searches.items() if c in present for v in f.view_ids]
        if not ids:
            return False
        try:
            got = await turn.client.statuses(turn.session, view_ids=ids)
        except UnknownIdError:
            return False  # forgotten behind our back: the full way registers them again
        return all(v["status"] == "fresh" for v in got["views"])

    async def _rewrite(
        self, client: Any, shape: Shape, session: str, state: SessionState, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        blocks = block_views(shape, body)
        # the tool calls, read once: registration and refreshes share them
        turn = _Turn(client, shape, session, state, body, blocks, tool_calls(shape, body))
        # Never rewritten, so no marker or refresh of an earlier request has to be carried
        # again: when every view it holds is fresh, the request goes as the agent sent it,
        # after one round trip (``_all_fresh``).
        never_rewritten = state.views and not state.rewritten
        if never_rewritten and await self._all_fresh(turn, await self._register(turn)):
            return None
        known = await self._forgotten(turn)
        held = await self._register(turn)
        touched = await self._searches_and_outside(turn, known or {})
        if not held:
            return touched
        body = touched or body
        # What the server holds, as asked above plus what this request registered: the
        # rewriter need not ask again (one fresh/stale per request, not two).
        views_held = None if known is None else {*known, *held}
        out, done = await API[shape].rewrite(
            client,
            session,
            body,
            policy=self.policy,
            budget_bytes=self.budget_bytes,
            forget_missing=False,
            result_spans=_spans_of(blocks) if blocks else None,
            placement=self.placement,
            views_held=views_held,
            shared=True,  # never mutated: spliced into the agent's bytes
        )
        if not done.replaced and done.projection_message is None and not done.plan.get("refreshes"):
            return touched
        return out

    # -- upstream -------------------------------------------------------------------------

    async def forward(
        self,
        request: web.Request,
        path: str,
        shape: Shape | None,
        body: bytes,
        drop: tuple[str, ...] = (),
    ) -> web.StreamResponse:
        """``body`` to ``path`` (with its query, still encoded, the secret removed) under the
        upstream; its answer streamed back. An upstream that cannot be reached, drops the
        connection or answers no HTTP becomes a 502 (a timeout a 504) in the API's format
        and one line on stderr."""
        assert self.http is not None
        url = URL(self.upstream + path, encoded=True)
        headers = [
            (k, v)
            for k, v in request.headers.items()
            if k.lower() not in HOP_BY_HOP and k.lower() not in drop
        ]
        try:
            upstream = await self.http.request(
                request.method,
                url,
                headers=headers,
                data=body if body or request.method not in ("GET", "HEAD") else None,
                allow_redirects=False,
            )
        except (TimeoutError, OSError, ClientError) as exc:
            what = _failure(exc, self.limits)
            _warn(f"upstream {self.upstream} failed on {request.method} {_loggable(path)}: {what}")
            status = 504 if isinstance(exc, TimeoutError) else 502
            return error_response(shape, f"the upstream {self.upstream} failed: {what}", status)
        async with upstream:
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for name, value in upstream.headers.items():
                if name.lower() not in HOP_BY_HOP:
                    response.headers.add(name, value)
            if upstream.content_length is not None and request.method != "HEAD":
                response.content_length = upstream.content_length
            await response.prepare(request)
            if request.method != "HEAD":
                try:
                    async for chunk in upstream.content.iter_any():
                        await response.write(chunk)
                except (TimeoutError, ClientError) as exc:
                    # Too late for a status: the answer is cut, and the client must see it
                    # cut (no clean end that would pass for a whole answer).
                    what = _failure(exc, self.limits)
                    _warn(f"upstream {self.upstream} broke off {_loggable(path)}: {what}")
                    if request.transport is not None:
                        request.transport.abort()
                    return response
            await response.write_eof()
        return response


@dataclass(frozen=True)
class Parsed:
    """A model request's body, parsed once: the client's bytes, their encoding and the
    object they hold. A rewrite is written back into their text (``splice.spliced``), so
    the bytes sent differ from the client's only inside the values the rewrite changed."""

    raw: bytes
    encoding: str
    body: dict[str, Any]

    @classmethod
    def of(cls, raw: bytes) -> Parsed:
        """``raw`` read as JSON (UTF-8, or the UTF-16/32 JSON allows); ``CannotRewrite``
        when it is none or no object. UTF-8 (what agents send) is read from the bytes
        themselves (``jsonload.loads_utf8``): most requests are forwarded unchanged, so
        their text is decoded only when a rewrite needs it (``text``)."""
        try:
            encoding = json.detect_encoding(raw)
            body = loads_utf8(raw) if encoding == "utf-8" else loads(raw.decode(encoding))
        except ValueError:  # UnicodeDecodeError included
            raise CannotRewrite("the request body is not JSON; cannot tell what it shows") from None
        if not isinstance(body, dict):
            raise CannotRewrite("the request body is not a JSON object")
        return cls(raw, encoding, body)

    @functools.cached_property
    def text(self) -> str:
        """The body's text (it decodes: ``of`` read it)."""
        return self.raw.decode(self.encoding)

    def with_body(self, new: dict[str, Any]) -> bytes:
        """The client's bytes changed to hold ``new``: only the values that differ are
        written anew."""
        try:
            return spliced(self.text, self.body, new).encode(self.encoding)
        except (SpliceError, UnicodeEncodeError):  # never expected: spelled anew, whole
            return dumps(new).encode("utf-8")


def _replaced_by(text: str) -> Callable[[str], str]:
    return lambda _old: text


def _with_line(line: str) -> Callable[[str], str]:
    """The result with ``line`` after it, once (a retried rewrite adds nothing more)."""
    return lambda old: old if old.endswith(line) else f"{old.rstrip(chr(10))}\n{line}"


def _spans_of(blocks: list[BlockView]) -> Any:
    """``result_spans`` for the rewriter: the blocks of each message (the rewriter works on a
    copy of the same body, so the indices and offsets hold)."""
    by_message: dict[int, list[tuple[str, int, int]]] = {}
    for block in blocks:
        by_message.setdefault(block.message, []).append((block.view_id, block.start, block.end))
    return lambda index, message: by_message.get(index, [])


def _decoded(encoding: str | None, raw: bytes, limit: int = MAX_BODY) -> tuple[bytes, bool]:
    """The request body without its ``Content-Encoding`` (gzip, deflate), and whether one
    was removed; an encoding the proxy cannot read cannot be made current. The output is
    capped while it is produced: a small body that expands past ``limit`` is refused (413)
    without ever being held whole."""
    name = (encoding or "").strip().lower()
    if name in ("", "identity"):
        return raw, False
    import zlib

    if name in ("gzip", "x-gzip"):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif name == "deflate":
        inflater = zlib.decompressobj()
    else:
        raise CannotRewrite(
            f"the request body is {name}-encoded, which fresh-ls proxy cannot read; turn "
            "request compression off in the agent"
        )
    chunks: list[bytes] = []
    size = 0
    pending = raw
    try:
        while not inflater.eof:
            # In pieces: zlib grows one output buffer by copying, which would cost twice
            # the limit; pieces cost the limit at most.
            chunk = inflater.decompress(pending, _INFLATE_STEP)
            pending = inflater.unconsumed_tail
            if not chunk and not pending:
                break  # all input read, no end of stream: cut short
            size += len(chunk)
            if size > limit:
                raise CannotRewrite(
                    f"the request body expands past {limit} bytes once {name}-decoded",
                    status=413,
                )
            chunks.append(chunk)
    except zlib.error as exc:
        raise CannotRewrite(f"the request body is not valid {name}: {exc}") from None
    if not inflater.eof:
        raise CannotRewrite(f"the request body is not valid {name}: it is cut short")
    return b"".join(chunks), True


#: How much of a compressed body is expanded at a time.
_INFLATE_STEP = 1 << 20


#: Parts of a header or query parameter name that mark a credential (never logged).
_SECRET_WORDS = ("key", "token", "secret", "auth", "credential", "password", "signature")


def _secret(header: str) -> bool:
    """A header (or query parameter) that can carry a credential (never logged)."""
    name = header.lower()
    return name in ("authorization", "cookie", "proxy-authorization") or any(
        word in name for word in _SECRET_WORDS
    )


def _loggable(path: str) -> str:
    """A path and query as a log may show it: query parameters that carry a credential
    (``?key=``, ``access_token=``) have their value removed."""
    base, sep, query = path.partition("?")
    if not sep:
        return path
    parts = []
    for part in query.split("&"):
        name = urllib.parse.unquote_plus(part.partition("=")[0])
        parts.append(f"{part.partition('=')[0]}=<removed>" if _secret(name) else part)
    return f"{base}?{'&'.join(parts)}"


def _failure(exc: BaseException, limits: Limits) -> str:
    """What went wrong with the upstream, in a few words."""
    if isinstance(exc, TimeoutError):
        return (
            f"no answer within {limits.upstream_read_timeout:g} s (or no connection within "
            f"{limits.upstream_connect_timeout:g} s)"
        )
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _warn(message: str) -> None:
    print(f"fresh-ls proxy: {message}", file=sys.stderr, flush=True)


def error_response(shape: Shape | None, message: str, status: int = 503) -> web.Response:
    """An error in the API's own format (Anthropic's or OpenAI's), naming fresh-ls."""
    text = f"fresh-ls proxy: {message}"
    payload = openai_error(text, status) if shape is None else API[shape].error(text, status)
    return web.json_response(payload, status=status)


def status_of(proxy: Proxy) -> dict[str, Any]:
    """Counters for ``proxy.json`` and ``fresh-ls status``."""
    return {
        "requests": proxy.requests,
        "rewritten": proxy.rewritten,
        "sessions": [
            {
                "session": name,
                "requests": s.requests,
                "rewritten": s.rewritten,
                "views": len(s.views),
                "searches": len(s.searches),
                "outside": len(s.outside),
            }
            for name, s in sorted(proxy.sessions.items())
        ],
    }
