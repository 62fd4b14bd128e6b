"""Each API's walk of its tool calls (``proxy.apis``: one plain loop per API, each
``ToolCall`` made without its ``__init__``) gives what the straightforward reading gives: the
calls and results in order, each result paired with the call before it of the same id, on
well-formed bodies and on bodies with odd parts anywhere."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fresh_ls.proxy.apis import API, text_of
from fresh_ls.toolcalls.agents import ToolCall, arguments_of


def _reference_parts(shape: str, body: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """The tool calls (``("call", (id, name, args))``) and results (``("result", (id,
    output, is_error))``) of a body, read the plain way (the walk as it was first written)."""
    if shape == "anthropic":
        for message in _objects(body.get("messages")):
            for block in _objects(message.get("content")):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    yield "call", (block["id"], str(block.get("name", "")), block.get("input"))
                elif block.get("type") == "tool_result" and isinstance(
                    block.get("tool_use_id"), str
                ):
                    output = text_of(block.get("content"))
                    yield "result", (block["tool_use_id"], output, bool(block.get("is_error")))
    elif shape == "chat":
        for message in _objects(body.get("messages")):
            role = message.get("role")
            if role == "assistant":
                for call in message.get("tool_calls") or []:
                    if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                        function = call.get("function") or {}
                        name = str(function.get("name", ""))
                        args = arguments_of(function.get("arguments"))
                        yield "call", (call["id"], name, args)
            elif role == "tool" and isinstance(message.get("tool_call_id"), str):
                yield "result", (message["tool_call_id"], text_of(message.get("content")), False)
    else:
        for item in _objects(body.get("input")):
            kind, call_id = item.get("type"), item.get("call_id")
            if not isinstance(call_id, str):
                continue
            name = str(item.get("name", ""))
            if kind == "function_call":
                yield "call", (call_id, name, arguments_of(item.get("arguments")))
            elif kind == "custom_tool_call":
                yield "call", (call_id, name, item.get("input"))
            elif kind == "local_shell_call":
                yield "call", (call_id, "local_shell", item.get("action") or {})
            elif kind in OUTPUTS:
                yield "result", (call_id, text_of(item.get("output")), False)


OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _objects(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def reference(shape: str, body: Mapping[str, Any]) -> list[ToolCall]:
    calls: dict[str, tuple[str, Any]] = {}
    found = []
    for kind, part in _reference_parts(shape, body):
        if kind == "call":
            calls[part[0]] = (part[1], part[2])
        else:
            name, args = calls.get(part[0], ("", None))
            found.append(ToolCall(part[0], name, args, part[1], part[2]))
    return found


def check(shape: str, body: Mapping[str, Any]) -> None:
    got, expected = API[shape].tool_calls(body), reference(shape, body)  # type: ignore[index]
    assert got == expected
    for a, b in zip(got, expected, strict=True):
        assert type(a) is ToolCall
        assert vars(a) == vars(b)  # every field, in the dataclass's order
        with contextlib.suppress(TypeError):  # arguments that are a dict: no hash
            assert hash(a) == hash(b)
        assert repr(a) == repr(b)


IDS = st.sampled_from(["c1", "c2", "c3", 7, None])
CONTENT = st.one_of(
    st.text(max_size=5),
    st.lists(
        st.one_of(
            st.text(max_size=3),
            st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=3)}),
            st.fixed_dictionaries({"type": st.just("image")}),
            st.integers(),
        ),
        max_size=3,
    ),
    st.none(),
    st.integers(),
)
ODD = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2))
ARGS = st.one_of(
    st.just(json.dumps({"file_path": "a.py"})), st.just("{not json"), st.none(), st.integers()
)


def _anthropic_block() -> st.SearchStrategy[Any]:
    use = st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": IDS},
        optional={"name": st.one_of(st.just("Read"), st.integers()), "input": ODD},
    )
    result = st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": IDS},
        optional={"content": CONTENT, "is_error": st.one_of(st.booleans(), st.none(), ODD)},
    )
    text = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=3)})
    return st.one_of(use, result, text, ODD)


ANTHROPIC = st.fixed_dictionaries(
    {
        "messages": st.one_of(
            st.lists(
                st.one_of(
                    st.fixed_dictionaries(
                        {
                            "role": st.sampled_from(["user", "assistant"]),
                            "content": st.one_of(
                                st.lists(_anthropic_block(), max_size=4), st.text(max_size=3), ODD
                            ),
                        }
                    ),
                    ODD,
                ),
                max_size=8,
            ),
            ODD,
        )
    }
)

_CHAT_CALL = st.one_of(
    st.fixed_dictionaries(
        {"id": IDS},
        optional={
            "function": st.fixed_dictionaries(
                {}, optional={"name": st.one_of(st.just("read"), st.integers()), "arguments": ARGS}
            )
        },
    ),
    ODD,
)
CHAT = st.fixed_dictionaries(
    {
        "messages": st.lists(
            st.one_of(
                st.fixed_dictionaries(
                    {"role": st.just("assistant")},
                    optional={"tool_calls": st.one_of(st.lists(_CHAT_CALL, max_size=3), st.none())},
                ),
                st.fixed_dictionaries(
                    {"role": st.just("tool"), "tool_call_id": IDS}, optional={"content": CONTENT}
                ),
                st.fixed_dictionaries({"role": st.just("user"), "content": CONTENT}),
                ODD,
            ),
            max_size=8,
        )
    }
)

RESPONSES = st.fixed_dictionaries(
    {
        "input": st.one_of(
            st.lists(
                st.one_of(
                    st.fixed_dictionaries(
                        {
                            "type": st.sampled_from(
                                [
                                    "function_call",
                                    "custom_tool_call",
                                    "local_shell_call",
                                    "function_call_output",
                                    "custom_tool_call_output",
                                    "local_shell_call_output",
                                    "message",
                                ]
                            ),
                            "call_id": IDS,
                        },
                        optional={
                            "name": st.one_of(st.just("exec"), st.integers()),
                            "arguments": ARGS,
                            "input": ODD,
                            "action": st.one_of(st.none(), st.just({"command": ["ls"]})),
                            "output": CONTENT,
                        },
                    ),
                    ODD,
                ),
                max_size=8,
            ),
            st.text(max_size=3),
        )
    }
)


@settings(max_examples=300, deadline=None)
@given(ANTHROPIC)
def test_anthropic_walk_reads_as_the_plain_walk(body: dict[str, Any]) -> None:
    check("anthropic", body)


@settings(max_examples=300, deadline=None)
@given(CHAT)
def test_chat_walk_reads_as_the_plain_walk(body: dict[str, Any]) -> None:
    check("chat", body)


@settings(max_examples=300, deadline=None)
@given(RESPONSES)
def test_responses_walk_reads_as_the_plain_walk(body: dict[str, Any]) -> None:
    check("responses", body)


def test_a_result_takes_the_call_before_it() -> None:
    """A result pairs with the call of its id that stands before it (the latest one when
    an id repeats); a result before its call, or without one, has no name or arguments."""
    body = {
        "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Read"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Grep"}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "x", "is_error": 1}
                ],
            },
        ]
    }
    assert API["anthropic"].tool_calls(body) == [
        ToolCall("a", "", None, "", False),
        ToolCall("a", "Read", None, "", False),
        ToolCall("a", "Grep", None, "x", True),
    ]
    check("anthropic", body)
