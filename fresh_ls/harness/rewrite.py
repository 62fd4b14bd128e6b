"""Rewrite one outgoing chat request so that it carries no stale view.

A harness keeps the conversation as the tools returned it; just before each model request it
hands that record to ``rewrite_request`` and sends what comes back instead:

1. the tool results in the request are found (OpenAI chat-completions: messages of role
   ``tool`` with ``tool_call_id``; Anthropic messages: ``tool_result`` blocks with
   ``tool_use_id`` in user messages) and mapped to view ids (the tool-call id by default);
2. views of the session whose tool result is no longer in the request (the harness compacted
   it away) are dropped with ``fresh/forget``;
3. ``fresh/project`` plans the projection over the views still in the request; the tool
   result of every view it replaces becomes that view's marker text, and the ``rendered``
   projection is appended once, at the end;
4. ``fresh/commit`` runs last. When it fails (a file changed after the plan was made), the
   request is planned and rebuilt once more from the untouched input; a second failure
   raises ``CommitFailed``. A half-rewritten request is never returned.

The input is never mutated: every attempt works on a deep copy (with ``shared=True``, on a
copy of only the containers on the way to each change, the rest shared with the input: for
a caller that never mutates either, such as the proxy, which then splices the changes into
the agent's bytes). Markers and ``rendered`` come
from the server byte for byte, and the one piece of text added here (``PROJECTION_HEADER``) is
a constant, so while nothing changes the rewritten request is byte-identical from one request
to the next except for what the conversation itself appended: prompt caches keep hitting.

Where the projection goes: OpenAI form, a final ``{"role": "user"}`` message; Anthropic
form, a text block appended to the last message when that is a user message (its
``tool_result`` blocks stay first, as the API requires), else a final user message. Either
way it is the last thing in the request, after every byte of history, so a prompt cache can
serve all that precedes it.

The protocol steps are written once, as a generator that yields the client calls it needs
(``_steps``); ``rewrite_request`` drives it with a ``SyncClient`` and ``arewrite_request``
with an ``AsyncClient``, through ``fresh_ls.steps``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Collection, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, Unpack

from fresh_ls import steps

Format = Literal["openai", "anthropic"]
ViewIds = Mapping[str, str] | Callable[[str], str | None] | None
ResultId = Callable[[Mapping[str, Any]], str | None]
#: (message index, message) -> the views held in parts of its string content: (id, start, end)
ResultSpans = Callable[[int, Mapping[str, Any]], list[tuple[str, int, int]]]

#: The line put before the rendered projection. Constant, so it never breaks a cache.
PROJECTION_HEADER = (
    "[fresh-ls] Current code for the tool results replaced above, read from the disk just "
    "before this request. Each entry is one header line, then exactly the bytes it states.\n"
)


class RewriteError(Exception):
    """The request could not be rewritten; nothing should be sent as it is."""


class CommitFailed(RewriteError):
    """``fresh/commit`` failed twice: files kept changing while the request was planned."""

    def __init__(self, changed: list[str], plan_id: str) -> None:
        super().__init__(
            f"fresh/commit failed twice (plan {plan_id}): {', '.join(changed) or 'files'} "
            "changed while the request was being planned; try again when they settle"
        )
        self.changed = changed
        self.plan_id = plan_id


@dataclass(frozen=True)
class ToolResult:
    """One tool result in a request: where it is and the tool-call id it answers."""

    message: int  # index in ``messages``
    block: int | None  # Anthropic: index of the ``tool_result`` block in that message
    call_id: str
    #: a part of the message's string content, ``content[start:end]`` (None: all of it)
    span: tuple[int, int] | None = None


@dataclass
class Rewritten:
    """What ``rewrite_request`` made: the request to send, and how."""

    request: Any  # the rewritten deep copy, the same shape as the input
    format: Format
    plan: dict[str, Any]  # the committed ``fresh/project`` result
    #: tool-call id -> view id, for each tool result that became a marker
    replaced: dict[str, str] = field(default_factory=dict)
    forgotten: list[str] = field(default_factory=list)  # view ids dropped with fresh/forget
    attempts: int = 1  # 2 when the first commit failed
    #: index of the message that holds the projection (None: nothing was appended)
    projection_message: int | None = None


# -- reading a request -----------------------------------------------------------------------


def messages_of(request: Any) -> list[Any]:
    """The message list of a request body (``{"messages": [...]}``) or of a bare list."""
    messages = request.get("messages") if isinstance(request, Mapping) else request
    if not isinstance(messages, list):
        raise RewriteError(
            "request: expected a list of messages or an object with a 'messages' list, got "
            f"{type(messages).__name__}"
        )
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise RewriteError(
                f"messages[{index}]: expected an object, got {type(message).__name__}"
            )
        if message.get("type") in ("function_call", "function_call_output"):
            raise RewriteError(
                f"messages[{index}]: an OpenAI Responses API item; only chat-completions and "
                "Anthropic messages requests can be rewritten"
            )
    return messages


def detect_format(request: Any) -> Format:
    """``anthropic`` when the request has ``tool_use``/``tool_result`` blocks or a top-level
    ``system``; ``openai`` otherwise (role ``tool`` messages, or no tool results at all)."""
    if isinstance(request, Mapping) and "system" in request:
        return "anthropic"
    for message in messages_of(request):
        if message.get("role") == "tool":
            return "openai"
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") in ("tool_result", "tool_use") for b in content
        ):
            return "anthropic"
    return "openai"


def find_tool_results(
    messages: list[Any],
    fmt: Format,
    result_id: ResultId | None = None,
    result_spans: ResultSpans | None = None,
) -> list[ToolResult]:
    """Every tool result of the request, in order.

    ``result_id`` names the result carried by a message that has no tool-call id of its own
    (a text-based agent puts each command's output in a plain user message): it returns that
    message's id, or None. ``result_spans`` names the results held in parts of a message's
    string content (aider's fenced file blocks): ``(id, start, end)`` each, in order.
    """
    found: list[ToolResult] = []
    for index, message in enumerate(messages):
        if fmt == "openai" and message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str):
                found.append(ToolResult(index, None, call_id))
                continue
        if fmt == "anthropic" and message.get("role") == "user":
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            for b, block in enumerate(blocks):
                if isinstance(block, Mapping) and block.get("type") == "tool_result":
                    call_id = block.get("tool_use_id")
                    if isinstance(call_id, str):
                        found.append(ToolResult(index, b, call_id))
        if result_id is not None:
            named = result_id(message)
            if named is not None:
                found.append(ToolResult(index, None, named))
        if result_spans is not None and isinstance(message.get("content"), str):
            for named, start, end in result_spans(index, message):
                found.append(ToolResult(index, None, named, (start, end)))
    return found


def _resolver(view_ids: ViewIds) -> Callable[[str], str | None]:
    if view_ids is None:
        return lambda call_id: call_id
    if isinstance(view_ids, Mapping):
        mapping = view_ids
        return lambda call_id: mapping.get(call_id, call_id)
    return view_ids


# -- writing the copy ------------------------------------------------------------------------


def _replaced_content(old: Any, text: str) -> Any:
    """The marker in the shape the content had: a string, or one text part."""
    if isinstance(old, list):
        return [{"type": "text", "text": text}]
    return text


#: Between a tool result and the refresh placed after it (``placement: anchored``).
REFRESH_SEPARATOR = "\n\n"


def _appended(content: Any, text: str) -> Any:
    """A tool result's content with a refresh after it, in the shape the content had."""
    if isinstance(content, list):
        return [*content, {"type": "text", "text": text}]
    return f"{content if isinstance(content, str) else ''}{REFRESH_SEPARATOR}{text}"


class _Copy:
    """The copy a rewrite writes into: deep, or (``shared``) the input's containers copied
    only on the way to what changes, each once (``shared=None``: ``request`` is a private
    copy already, written in place)."""

    def __init__(self, request: Any, shared: bool | None) -> None:
        self.shared = bool(shared)
        if shared is None:
            self.root = request
        else:
            self.root = copy.copy(request) if shared else copy.deepcopy(request)
        self._own = {id(self.root)}
        #: the path of the message list from the root
        self.messages: tuple[Any, ...] = ("messages",) if isinstance(request, Mapping) else ()

    def at(self, *path: Any) -> Any:
        """The container at ``path``, the copy's own (safe to change)."""
        node = self.root
        for step in path:
            child = node[step]
            if self.shared and id(child) not in self._own:
                child = copy.copy(child)
                node[step] = child
                self._own.add(id(child))
            node = child
        return node

    def message(self, index: int, *path: Any) -> Any:
        return self.at(*self.messages, index, *path)


def _apply(
    request: Any,
    fmt: Format,
    results: list[ToolResult],
    view_of: Callable[[str], str | None],
    plan: Mapping[str, Any],
    header: str,
    shared: bool = False,
) -> tuple[Any, dict[str, str], int | None, _Copy]:
    own = _Copy(request, shared)
    out = own.root
    messages = messages_of(out)
    markers = {m["viewId"]: m["text"] for m in plan.get("markers", [])}
    refreshes = {r["after"]: r["text"] for r in plan.get("refreshes") or []}
    # a refresh follows the last tool result of its tool call
    last_of = {r.call_id: r for r in results}
    replaced: dict[str, str] = {}
    # Spans are replaced last in a message first, so the offsets of the others still hold.
    for result in sorted(results, key=lambda r: (r.span is None, -(r.span or (0, 0))[0])):
        view_id = view_of(result.call_id)
        marker = markers.get(view_id) if view_id is not None else None
        refresh = refreshes.get(result.call_id) if last_of[result.call_id] is result else None
        if marker is None and refresh is None:
            continue
        message = own.message(result.message)
        if result.span is not None:
            start, end = result.span
            content = message["content"]
            middle = marker if marker is not None else content[start:end]
            if refresh is not None:
                middle = f"{middle}{REFRESH_SEPARATOR}{refresh}"
            message["content"] = content[:start] + middle + content[end:]
        else:
            holder = (
                message
                if result.block is None
                else own.message(result.message, "content", result.block)
            )
            content = holder.get("content")
            if marker is not None:
                content = _replaced_content(content, marker)
            if refresh is not None:
                content = _appended(content, refresh)
            holder["content"] = content
        if marker is not None and view_id is not None:
            replaced[result.call_id] = view_id
    rendered = plan.get("rendered") or ""
    if not rendered:
        return out, replaced, None, own
    text = header + rendered
    messages = own.at(*own.messages)
    if fmt == "openai":
        messages.append({"role": "user", "content": text})
    elif messages and messages[-1].get("role") == "user":
        last = own.message(len(messages) - 1)
        content = last.get("content")
        blocks = list(content) if isinstance(content, list) else []
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        last["content"] = [*blocks, {"type": "text", "text": text}]
    else:
        messages.append({"role": "user", "content": [{"type": "text", "text": text}]})
    return out, replaced, len(messages) - 1, own


#: Anthropic's limit on explicit cache breakpoints (``cache_control``) in one request.
MAX_BREAKPOINTS = 4


def _blocks_with_cache_control(request: Any) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    if not isinstance(request, Mapping):
        return found
    for key in ("tools", "system"):
        part = request.get(key)
        if isinstance(part, list):
            found += [b for b in part if isinstance(b, Mapping) and "cache_control" in b]
    for message in messages_of(request):
        content = message.get("content")
        if isinstance(content, list):
            found += [b for b in content if isinstance(b, Mapping) and "cache_control" in b]
    return found


def place_breakpoint(
    request: Any, results: list[ToolResult], after: str, own: _Copy | None = None
) -> None:
    """With explicit caching (any ``cache_control`` in the request), end a cached prefix
    right after the newest refresh: the next request carries everything up to there byte
    for byte, so a breakpoint there is where its cache hit can end. The oldest message
    breakpoint gives way when the request already has the most Anthropic allows. Requests
    without ``cache_control`` are left alone (automatic caching needs none). ``own``: the
    copy ``request`` is, when it shares containers with its input (None: all its own)."""
    marked = _blocks_with_cache_control(request)
    if not marked:
        return
    holder = next((r for r in reversed(results) if r.call_id == after), None)
    if holder is None or holder.block is None:
        return
    messages = messages_of(request)
    blocks = messages[holder.message]["content"]
    # a breakpoint on this block or a later block of the same message already covers it
    if any("cache_control" in b for b in blocks[holder.block :] if isinstance(b, Mapping)):
        return
    control = dict(next(iter(marked))["cache_control"])
    writable = own or _Copy(request, None)
    if len(marked) >= MAX_BREAKPOINTS:
        oldest = next(
            (
                (m, b)
                for m, message in enumerate(messages)
                if isinstance(message.get("content"), list)
                for b, block in enumerate(message["content"])
                if isinstance(block, dict) and "cache_control" in block
            ),
            None,
        )
        if oldest is None:
            return
        del writable.message(oldest[0], "content", oldest[1])["cache_control"]
    writable.message(holder.message, "content", holder.block)["cache_control"] = control


# -- the protocol steps ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Call:
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def on(self, client: Any) -> Any:
        """This call made on ``client`` (its result, or an awaitable of it)."""
        return getattr(client, self.method)(*self.args, **self.kwargs)


def _steps(
    session: str,
    request: Any,
    *,
    view_ids: ViewIds = None,
    fmt: Format | None = None,
    policy: str | None = None,
    budget_bytes: int | None = None,
    forget_missing: bool = True,
    result_id: ResultId | None = None,
    result_spans: ResultSpans | None = None,
    header: str = PROJECTION_HEADER,
    placement: str | None = None,
    views_held: Collection[str] | None = None,
    shared: bool = False,
) -> Generator[_Call, Any, Rewritten]:
    messages = messages_of(request)
    form: Format = fmt or detect_format(request)
    if form not in ("openai", "anthropic"):
        raise RewriteError(f"fmt: expected 'openai' or 'anthropic', got {form!r}")
    results = find_tool_results(messages, form, result_id, result_spans)
    view_of = _resolver(view_ids)
    in_request = {v for v in (view_of(r.call_id) for r in results) if v is not None}
    calls = [r.call_id for r in sorted(results, key=_position)]
    if views_held is None:
        known = yield _Call("stale", (session,), {})
        held = [v["viewId"] for v in known.get("views", [])]
    else:  # the caller asked the server just before: no second round trip
        held = list(views_held)
    present = sorted(v for v in held if v in in_request)
    gone = [v for v in held if v not in in_request] if forget_missing else []
    if gone:
        yield _Call("forget", (session, gone), {})
    changed: list[str] = []
    plan_id = ""
    for attempt in (1, 2):
        anchored: dict[str, Any] = {}
        if placement == "anchored":
            order = list(dict.fromkeys(calls))
            anchored = {
                "placement": placement,
                "results": order,
                "bytes_after": _bytes_after(messages, results, order),
            }
        plan = yield _Call(
            "project",
            (session,),
            {"budget_bytes": budget_bytes, "policy": policy, "view_ids": present, **anchored},
        )
        out, replaced, where, own = _apply(request, form, results, view_of, plan, header, shared)
        if form == "anthropic" and plan.get("refreshes"):
            place_breakpoint(out, results, plan["refreshes"][-1]["after"], own)
        plan_id = str(plan["planId"])
        verdict = yield _Call("commit", (plan_id,), {})
        if verdict.get("ok"):
            return Rewritten(out, form, dict(plan), replaced, gone, attempt, where)
        changed = list(verdict.get("changed") or [])
    raise CommitFailed(changed, plan_id)


#: The spelling message sizes are counted in (one encoder: ``json.dumps`` with keywords
#: builds one per call).
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _bytes_after(messages: list[Any], results: list[ToolResult], order: list[str]) -> list[int]:
    """Per tool-call id in ``order``: the bytes of the messages after the one holding its
    (last) result, as JSON. What a cache break at that result would send again."""
    sizes = [len(_COMPACT.encode(m).encode("utf-8")) for m in messages]
    behind = [0] * (len(sizes) + 1)
    for i in range(len(sizes) - 1, -1, -1):
        behind[i] = behind[i + 1] + sizes[i]
    at = {r.call_id: r.message for r in results}
    return [behind[at[c] + 1] for c in order]


def _position(r: ToolResult) -> tuple[int, int, int]:
    """Where a tool result stands in the request, for ordering them oldest first."""
    return (r.message, r.block if r.block is not None else -1, (r.span or (0, 0))[0])


class RewriteOptions(TypedDict, total=False):
    """The keywords of ``rewrite_request`` and ``arewrite_request``, each optional (the
    defaults are ``_steps``'s): ``view_ids`` (None), ``fmt`` (None: detected), ``policy``
    and ``budget_bytes`` (None: the connection's), ``forget_missing`` (True),
    ``result_id`` and ``result_spans`` (None), ``header`` (``PROJECTION_HEADER``) and
    ``placement`` (None: ``end``; ``"anchored"``: current code is sent once, after the
    newest tool result, and carried there while it holds; see ``fresh_ls.core.ledger``),
    ``views_held`` (None: asked with ``fresh/stale``; else the session's view ids as the
    caller just learned them, which spares that round trip), ``shared`` (False: the result
    is a deep copy; True: it shares with the input every container it does not change,
    which spares the deep copy of a long history to a caller that never mutates either)."""

    view_ids: ViewIds
    fmt: Format | None
    policy: str | None
    budget_bytes: int | None
    forget_missing: bool
    result_id: ResultId | None
    result_spans: ResultSpans | None
    header: str
    placement: str | None
    views_held: Collection[str] | None
    shared: bool


def rewrite_request(
    client: Any, session: str, request: Any, **options: Unpack[RewriteOptions]
) -> Rewritten:
    """Rewrite ``request`` (a request body with ``messages``, or the message list) for
    ``session`` through a ``SyncClient``; the input is left as it was.

    ``view_ids`` maps a tool-call id to its view id: None (the same id), a mapping (ids it
    lacks map to themselves) or a function (None: that result is no view). ``policy`` and
    ``budget_bytes`` go to ``fresh/project`` (None: the connection's defaults).
    ``forget_missing=False`` keeps views whose tool result is gone (they are then neither
    projected nor forgotten). Raises ``CommitFailed`` after two failed commits,
    ``RewriteError`` for a request it cannot read, and ``FreshClientError`` from the client.
    """
    return steps.run(_steps(session, request, **options), lambda call: call.on(client))


async def arewrite_request(
    client: Any, session: str, request: Any, **options: Unpack[RewriteOptions]
) -> Rewritten:
    """``rewrite_request`` through an ``AsyncClient``."""
    return await steps.arun(_steps(session, request, **options), lambda call: call.on(client))
