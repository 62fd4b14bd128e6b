"""The request rewriter against a real server: both message forms, commits that fail,
compacted views, and an input that is never touched."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from fresh_ls.client import AsyncClient, SyncClient
from fresh_ls.harness.rewrite import (
    PROJECTION_HEADER,
    CommitFailed,
    RewriteError,
    arewrite_request,
    detect_format,
    rewrite_request,
)

from ._support import edit

OLD_LINE = "subtotal = quantity * RATE\n"
NEW_LINE = "subtotal = quantity * RATE * 2\n"


def _openai(total_text: str, helper_text: str) -> dict[str, Any]:
    """A chat-completions request: two reads (lines 8-10 and 13-14 of pkg/cart.py)."""

    def call(call_id: str, command: str) -> dict[str, Any]:
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})},
        }

    return {
        "model": "some-model",
        "messages": [
            {"role": "system", "content": "You fix bugs."},
            {"role": "user", "content": "The total is wrong."},
            {"role": "assistant", "content": None, "tool_calls": [call("call_1", "sed -n 8,10p")]},
            {"role": "tool", "tool_call_id": "call_1", "content": total_text},
            {
                "role": "assistant",
                "content": "And the helper:",
                "tool_calls": [call("call_2", "x")],
            },
            {
                "role": "tool",
                "tool_call_id": "call_2",
                "content": [{"type": "text", "text": helper_text}],
            },
        ],
    }


def _anthropic(total_text: str, helper_text: str) -> dict[str, Any]:
    """An Anthropic messages request: the same two reads as tool_result blocks."""
    return {
        "model": "claude",
        "system": "You fix bugs.",
        "messages": [
            {"role": "user", "content": "The total is wrong."},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "toolu_1", "name": "view", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": total_text}
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_2", "name": "view", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": [{"type": "text", "text": helper_text}],
                    },
                    {"type": "text", "text": "Go on."},
                ],
            },
        ],
    }


def _cart_lines(repo: Path, first: int, last: int) -> str:
    lines = (repo / "pkg" / "cart.py").read_text().splitlines(keepends=True)
    return "".join(lines[first - 1 : last])


def _observe_two(fresh: SyncClient, repo: Path, ids: tuple[str, str]) -> tuple[str, str]:
    total, helper = _cart_lines(repo, 8, 10), _cart_lines(repo, 13, 14)
    fresh.observe("s", "pkg/cart.py", view_id=ids[0], first_line=8, last_line=10, text=total)
    fresh.observe("s", "pkg/cart.py", view_id=ids[1], first_line=13, last_line=14, text=helper)
    return total, helper


def _bytes(request: Any) -> bytes:
    return json.dumps(request, ensure_ascii=False, sort_keys=True).encode("utf-8")


def test_openai_replaces_the_stale_result_and_appends_the_current_code(
    fresh: SyncClient, repo: Path
) -> None:
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    request = _openai(total, helper)
    before = copy.deepcopy(request)
    edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)

    out = rewrite_request(fresh, "s", request)

    assert request == before  # the record keeps what the tools returned
    assert out.format == "openai" and out.attempts == 1 and out.forgotten == []
    assert out.replaced == {"call_1": "call_1"}
    markers = {m["viewId"]: m["text"] for m in out.plan["markers"]}
    messages = out.request["messages"]
    assert messages[:3] == before["messages"][:3]
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": markers["call_1"]}
    assert messages[4:6] == before["messages"][4:6]  # the fresh view stays as it was
    assert out.projection_message == 6 and len(messages) == 7
    entry = out.plan["entries"][0]
    assert messages[6] == {
        "role": "user",
        "content": PROJECTION_HEADER + entry["header"] + "\n" + _cart_lines(repo, 8, 10),
    }
    assert NEW_LINE in messages[6]["content"]
    assert OLD_LINE not in json.dumps(out.request)
    assert out.request["model"] == "some-model"
    # commit ran last and held: the plan is the one the request was built from
    assert fresh.commit(out.plan["planId"]) == {"ok": True, "changed": []}


def test_anthropic_form_keeps_tool_results_first_and_appends_a_text_block(
    fresh: SyncClient, repo: Path
) -> None:
    total, helper = _observe_two(fresh, repo, ("toolu_1", "toolu_2"))
    request = _anthropic(total, helper)
    before = copy.deepcopy(request)
    edit(repo / "pkg" / "cart.py", "return 1\n", "return 2\n")  # helper changes

    out = rewrite_request(fresh, "s", request)

    assert request == before
    assert out.format == "anthropic" and out.replaced == {"toolu_2": "toolu_2"}
    markers = {m["viewId"]: m["text"] for m in out.plan["markers"]}
    messages = out.request["messages"]
    assert out.request["system"] == "You fix bugs."
    assert messages[:4] == before["messages"][:4]  # toolu_1 is fresh: untouched
    last = messages[4]
    assert last["role"] == "user" and len(messages) == 5
    assert last["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_2",
        "content": [{"type": "text", "text": markers["toolu_2"]}],
    }
    assert last["content"][1] == {"type": "text", "text": "Go on."}
    entry = out.plan["entries"][0]
    assert last["content"][2] == {
        "type": "text",
        "text": PROJECTION_HEADER + entry["header"] + "\n" + _cart_lines(repo, 13, 14),
    }
    assert "return 1\n" not in json.dumps(out.request)
    assert out.projection_message == 4


def test_anthropic_string_content_and_a_trailing_assistant_message(
    fresh: SyncClient, repo: Path
) -> None:
    total, _ = _observe_two(fresh, repo, ("toolu_1", "unused"))
    request = _anthropic(total, "")
    request["messages"] = [*request["messages"][:3], {"role": "assistant", "content": "Hm."}]
    edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)
    out = rewrite_request(fresh, "s", request)
    messages = out.request["messages"]
    assert messages[2]["content"][0]["content"].startswith("[fresh-ls] toolu_1 showed")
    assert messages[-1]["role"] == "user" and len(messages) == 5
    assert messages[-1]["content"][0]["text"].startswith(PROJECTION_HEADER)
    assert out.forgotten == ["unused"]  # its tool result is not in this request


def test_nothing_stale_sends_the_request_as_it_was(fresh: SyncClient, repo: Path) -> None:
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    request = _openai(total, helper)
    out = rewrite_request(fresh, "s", request)
    assert out.request == request and out.request is not request
    assert out.replaced == {} and out.projection_message is None
    assert out.plan["rendered"] == ""


def test_byte_identical_while_nothing_changes(fresh: SyncClient, repo: Path) -> None:
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    request = _openai(total, helper)
    edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)
    for policy in ("all", "stale"):
        first = rewrite_request(fresh, "s", request, policy=policy)
        second = rewrite_request(fresh, "s", request, policy=policy)
        assert _bytes(first.request) == _bytes(second.request)
        assert first.plan["planId"] != second.plan["planId"]
    # The conversation grows: the old part of the rewritten request stays byte-identical.
    grown = copy.deepcopy(request)
    grown["messages"].append({"role": "assistant", "content": "Thinking."})
    third = rewrite_request(fresh, "s", grown)
    old_part = json.dumps(first.request["messages"][:6])
    assert json.dumps(third.request["messages"][:6]) == old_part


class Meddler:
    """A client that lets someone write pkg/cart.py between project and commit."""

    def __init__(self, client: SyncClient, repo: Path, times: int) -> None:
        self.client = client
        self.path = repo / "pkg" / "cart.py"
        self.times = times
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            result = getattr(self.client, name)(*args, **kwargs)
            if name == "project" and self.times > 0:
                self.times -= 1
                edit(self.path, "quantity * RATE", "quantity * RATE + 1")
            return result

        return call


def test_a_failed_commit_plans_again_once(fresh: SyncClient, repo: Path) -> None:
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    request = _openai(total, helper)
    before = copy.deepcopy(request)
    edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)
    meddler = Meddler(fresh, repo, times=1)

    out = rewrite_request(meddler, "s", request)

    assert meddler.calls == ["stale", "project", "commit", "project", "commit"]
    assert out.attempts == 2
    assert request == before
    final = out.request["messages"][-1]["content"]
    assert "subtotal = quantity * RATE + 1 * 2\n" in final  # the code after the meddling
    assert NEW_LINE not in final
    assert fresh.commit(out.plan["planId"])["ok"] is True


def test_a_view_left_in_place_that_changes_before_the_send_is_replaced_on_retry(
    fresh: SyncClient, repo: Path
) -> None:
    """Contract v1.1: nothing was stale at plan time, so the plan left call_1 in place; a
    write to its lines before the commit fails it, and the retry replaces call_1."""
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    request = _openai(total, helper)
    meddler = Meddler(fresh, repo, times=1)

    out = rewrite_request(meddler, "s", request)

    assert meddler.calls == ["stale", "project", "commit", "project", "commit"]
    assert out.attempts == 2
    assert list(out.replaced) == ["call_1"]
    messages = out.request["messages"]
    assert messages[3]["content"] != total and "[fresh-ls]" in messages[3]["content"]
    assert "subtotal = quantity * RATE + 1\n" in messages[-1]["content"]
    assert messages[5] == request["messages"][5]  # call_2's lines did not change


def test_a_commit_that_fails_twice_raises_and_sends_nothing(fresh: SyncClient, repo: Path) -> None:
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    request = _openai(total, helper)
    before = copy.deepcopy(request)
    edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)
    meddler = Meddler(fresh, repo, times=2)

    with pytest.raises(CommitFailed) as failed:
        rewrite_request(meddler, "s", request)

    assert failed.value.changed == ["pkg/cart.py"]
    assert meddler.calls == ["stale", "project", "commit", "project", "commit"]
    assert request == before


def test_a_compacted_view_is_forgotten(fresh: SyncClient, repo: Path) -> None:
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    request = _openai(total, helper)
    # The harness compacted the first exchange away: call_1's result is gone.
    request["messages"] = request["messages"][:2] + request["messages"][4:]
    before = copy.deepcopy(request)
    edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)

    out = rewrite_request(fresh, "s", request)

    assert out.forgotten == ["call_1"]
    assert [v["viewId"] for v in fresh.stale("s")["views"]] == ["call_2"]
    assert out.request == before  # call_2 is fresh; call_1's code is not projected
    assert out.plan["entries"] == [] and out.plan["markers"] == []
    assert request == before


def test_forget_missing_false_keeps_the_view_but_does_not_project_it(
    fresh: SyncClient, repo: Path
) -> None:
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    request = _openai(total, helper)
    request["messages"] = request["messages"][:2] + request["messages"][4:]
    edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)
    out = rewrite_request(fresh, "s", request, forget_missing=False)
    assert out.forgotten == [] and out.plan["entries"] == []
    assert {v["viewId"] for v in fresh.stale("s")["views"]} == {"call_1", "call_2"}


def test_view_ids_map_tool_calls_to_views(fresh: SyncClient, repo: Path) -> None:
    total, helper = _observe_two(fresh, repo, ("view-a", "view-b"))
    request = _openai(total, helper)
    edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)
    mapping = {"call_1": "view-a", "call_2": "view-b"}
    out = rewrite_request(fresh, "s", request, view_ids=mapping)
    assert out.replaced == {"call_1": "view-a"} and out.forgotten == []
    by_function = rewrite_request(fresh, "s", request, view_ids=mapping.get)
    assert _bytes(by_function.request) == _bytes(out.request)


def test_policy_all_replaces_every_view(fresh: SyncClient, repo: Path) -> None:
    total, helper = _observe_two(fresh, repo, ("call_1", "call_2"))
    out = rewrite_request(fresh, "s", _openai(total, helper), policy="all")
    assert out.replaced == {"call_1": "call_1", "call_2": "call_2"}
    assert out.request["messages"][-1]["content"].count("[E-") == 2


def test_a_request_it_cannot_read_raises(fresh: SyncClient) -> None:
    with pytest.raises(RewriteError, match="messages"):
        rewrite_request(fresh, "s", {"messages": "hello"})
    with pytest.raises(RewriteError, match="Responses API"):
        rewrite_request(fresh, "s", [{"type": "function_call_output", "call_id": "c"}])


def test_detect_format() -> None:
    assert detect_format([{"role": "tool", "tool_call_id": "a", "content": ""}]) == "openai"
    assert detect_format({"system": "x", "messages": []}) == "anthropic"
    assert detect_format([{"role": "user", "content": "hi"}]) == "openai"
    blocks = [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]
    assert detect_format([{"role": "user", "content": blocks}]) == "anthropic"


async def test_async_rewrite(repo: Path) -> None:
    client = await AsyncClient.spawn(repo)
    async with client:
        total = _cart_lines(repo, 8, 10)
        await client.observe("s", "pkg/cart.py", view_id="call_1", first_line=8, last_line=10)
        request = _openai(total, "unused")
        request["messages"] = request["messages"][:4]
        before = copy.deepcopy(request)
        edit(repo / "pkg" / "cart.py", OLD_LINE, NEW_LINE)
        out = await arewrite_request(client, "s", request)
        assert request == before
        assert out.replaced == {"call_1": "call_1"}
        assert NEW_LINE in out.request["messages"][-1]["content"]
        assert OLD_LINE not in json.dumps(out.request)


@pytest.mark.parametrize("form", ["openai", "anthropic"])
def test_a_shared_copy_is_the_same_request_and_leaves_the_input_alone(
    fresh: SyncClient, repo: Path, form: str
) -> None:
    """``shared=True`` (the proxy's): the same rewritten request as the deep copy, the input
    untouched, and only what changed is new (the untouched messages are the input's)."""
    ids = ("call_1", "call_2") if form == "openai" else ("toolu_1", "toolu_2")
    total, helper = _observe_two(fresh, repo, ids)
    request = (_openai if form == "openai" else _anthropic)(total, helper)
    before = copy.deepcopy(request)
    edit(repo / "pkg" / "cart.py", "return 1\n", "return 2\n")  # the helper changes

    deep = rewrite_request(fresh, "s", request)
    shared = rewrite_request(fresh, "s", request, shared=True)

    assert request == before
    assert shared.request == deep.request and shared.replaced == deep.replaced
    sent, given = shared.request["messages"], request["messages"]
    assert sent is not given and sent[0] is given[0]  # untouched: shared
    changed = next(i for i, m in enumerate(given) if m != sent[i])
    assert sent[changed] is not given[changed]
