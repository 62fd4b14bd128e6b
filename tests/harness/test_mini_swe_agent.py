"""The mini-swe-agent bridge with the real package: its DefaultAgent, LocalEnvironment and
scripted test models (no network, no LLM). Someone else changes a file the agent read between
two steps; the next request must reach the model with the current code and no stale copy."""

from __future__ import annotations

import atexit
import copy
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

# mini-swe-agent prints a banner and writes a config dir on import; keep both out of the way.
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
if "MSWEA_GLOBAL_CONFIG_DIR" not in os.environ:
    _CONFIG_DIR = tempfile.mkdtemp(prefix="mswea-config-")
    atexit.register(shutil.rmtree, _CONFIG_DIR, True)
    os.environ["MSWEA_GLOBAL_CONFIG_DIR"] = _CONFIG_DIR

from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.test_models import (
    DeterministicModel,
    DeterministicToolcallModel,
    make_output,
    make_toolcall_output,
)

from fresh_ls.client import SyncClient
from fresh_ls.harness.mini_swe_agent import FreshModel, with_fresh
from fresh_ls.harness.rewrite import PROJECTION_HEADER, CommitFailed, Rewritten

from ._support import CART, edit

OLD_LINE = "        subtotal = quantity * RATE\n"
NEW_LINE = "        subtotal = quantity * RATE * 2\n"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def _tool_call(call_id: str, command: str) -> dict[str, Any]:
    return make_toolcall_output(
        None,
        [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})},
            }
        ],
        [{"command": command, "tool_call_id": call_id}],
    )


class Recording:
    """Keeps a deep copy of every message list the scripted model was asked with."""

    received: list[list[dict[str, Any]]]

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        self.received.append(copy.deepcopy(messages))
        return super().query(messages, **kwargs)  # type: ignore[misc]


class RecordingToolcallModel(Recording, DeterministicToolcallModel):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.received = []


class RecordingTextModel(Recording, DeterministicModel):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.received = []


class MeddledAgent(DefaultAgent):
    """Runs ``meddle`` just before the model call numbered ``at`` (someone else's write)."""

    def __init__(self, *args: Any, at: int, meddle: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.at, self.meddle = at, meddle

    def step(self) -> list[dict[str, Any]]:
        if self.n_calls == self.at:
            self.meddle()
        return super().step()


def _agent(model: Any, repo: Path, at: int, meddle: Any) -> MeddledAgent:
    return MeddledAgent(
        model,
        LocalEnvironment(cwd=str(repo)),
        at=at,
        meddle=meddle,
        system_template="You fix bugs with bash.",
        instance_template="Task: {{task}}",
        step_limit=10,
        cost_limit=0,
    )


def _sent(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What an API would get: mini-swe-agent's models drop ``extra`` before sending."""
    return [{k: v for k, v in m.items() if k != "extra"} for m in messages]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _has_stale_line(messages: Any) -> bool:
    """Does any text carry the line as it was before the change (``* RATE`` ending it)?"""
    return any(
        line.rstrip().endswith("subtotal = quantity * RATE")
        for text in _strings(messages)
        for line in text.splitlines()
    )


def test_toolcall_agent_sees_the_current_code_after_an_outside_write(repo: Path) -> None:
    cart = repo / "pkg" / "cart.py"
    read_total = "nl -ba pkg/cart.py | sed -n '8,10p'"
    outputs = [
        _tool_call("call_1", read_total),  # a numbered slice: Cart.total
        _tool_call("call_2", "head -n 3 notes.md"),  # a whole small file
        _tool_call("call_3", "ls pkg"),  # no view
        _tool_call("call_4", SUBMIT),
    ]
    model = RecordingToolcallModel(outputs=outputs)

    def someone_else() -> None:  # between the agent's 3rd and 4th model calls
        edit(cart, OLD_LINE, NEW_LINE)

    agent = _agent(model, repo, at=3, meddle=someone_else)
    with SyncClient.spawn(repo) as fresh:
        bridge = with_fresh(agent, fresh, session="mini")
        assert isinstance(agent.model, FreshModel)
        result = agent.run("double the rate")
        stale = fresh.stale("mini")
    assert result["exit_status"] == "Submitted"
    received = model.received
    assert len(received) == 4

    # Before the change: every tool result reached the model as the tool returned it.
    listing = "     8\t    def total(self, quantity):\n     9\t" + OLD_LINE[:-1] + "\n"
    assert listing in received[2][3]["content"]
    assert all(m["content"] != PROJECTION_HEADER for m in received[2])
    assert len(received[2]) == 6  # nothing was stale: nothing appended

    # The views the bridge registered: the slice and the whole notes file, not the ls.
    views = {v["viewId"]: v for v in stale["views"]}
    assert set(views) == {"call_1", "call_2"}
    assert views["call_1"]["status"] == "changed"
    assert views["call_1"]["units"][0]["changedBy"] == "outside"
    assert views["call_2"]["status"] == "fresh"

    # After the change: the exact messages the model got.
    last = received[3]
    plan = bridge.last.plan if bridge.last else {}
    marker = {m["viewId"]: m["text"] for m in plan["markers"]}["call_1"]
    [entry] = plan["entries"]
    current = "".join(cart.read_text().splitlines(keepends=True)[7:10])
    assert entry["text"] == current and NEW_LINE in current
    # The record (what the tools returned, untouched): system, task, then per step the
    # assistant's call and its tool result; request 3 carried messages 0-7.
    original = agent.messages
    expected = [
        *_sent(original[:3]),
        {"role": "tool", "tool_call_id": "call_1", "content": marker},
        *_sent(original[4:8]),
        {"role": "user", "content": PROJECTION_HEADER + entry["header"] + "\n" + current},
    ]
    assert _sent(last) == expected
    assert marker.startswith("[fresh-ls] call_1 showed pkg/cart.py lines 8-10;")
    # No stale copy anywhere in what the model got, ``extra`` included.
    assert not _has_stale_line(last)
    # The agent's own record still holds what the tool printed.
    assert _has_stale_line(original[3])


def test_the_agents_own_write_is_reported_and_its_stale_read_replaced(repo: Path) -> None:
    cart = repo / "pkg" / "cart.py"
    outputs = [
        _tool_call("call_1", "cat pkg/cart.py"),
        _tool_call("call_2", "sed -i 's/return 1/return 2/' pkg/cart.py"),
        _tool_call("call_3", SUBMIT),
    ]
    model = RecordingToolcallModel(outputs=outputs)
    agent = _agent(model, repo, at=-1, meddle=None)
    with SyncClient.spawn(repo) as fresh:
        with_fresh(agent, fresh, session="mini")
        agent.run("helper returns 2")
        stale = fresh.stale("mini")
    [view] = stale["views"]
    assert view["viewId"] == "call_1" and view["status"] == "changed"
    assert {u["changedBy"] for u in view["units"] if u["status"] != "fresh"} == {"self"}
    last = model.received[2]
    assert last[3]["content"].startswith("[fresh-ls] call_1 showed pkg/cart.py lines 1-14;")
    assert last[-1]["content"].startswith(PROJECTION_HEADER)
    assert last[-1]["content"].endswith(cart.read_text())
    assert "return 2\n" in last[-1]["content"]
    assert "return 1\n" not in json.dumps(last)


def test_text_based_agent_gets_the_same_treatment(repo: Path) -> None:
    cart = repo / "pkg" / "cart.py"

    def say(command: str) -> dict[str, Any]:
        return make_output(
            f"THOUGHT: go\n\n```mswea_bash_command\n{command}\n```", [{"command": command}]
        )

    outputs = [say("sed -n '8,10p' pkg/cart.py"), say("echo thinking"), say(SUBMIT)]
    model = RecordingTextModel(outputs=outputs)

    def someone_else() -> None:
        edit(cart, OLD_LINE, NEW_LINE)

    agent = _agent(model, repo, at=2, meddle=someone_else)
    with SyncClient.spawn(repo) as fresh:
        bridge = with_fresh(agent, fresh, session="mini-text")
        agent.run("double the rate")
    last = model.received[2]
    plan = bridge.last.plan if bridge.last else {}
    [marker] = plan["markers"]
    assert marker["viewId"] == "obs-1"
    assert last[3] == {
        "role": "user",
        "content": marker["text"],
        "extra": {k: v for k, v in agent.messages[3]["extra"].items() if k != "raw_output"},
    }
    assert last[-1]["role"] == "user" and last[-1]["content"].startswith(PROJECTION_HEADER)
    assert NEW_LINE in last[-1]["content"]
    assert not _has_stale_line(last)
    assert agent.messages[3]["extra"]["raw_output"] == "".join(CART.splitlines(True)[7:10])


class _FlakyBridge:
    """A bridge whose rewrite fails ``fails`` times with CommitFailed, then passes through."""

    def __init__(self, fails: int) -> None:
        self.fails = fails
        self.calls = 0

    def rewrite(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.fails:
            raise CommitFailed(["pkg/cart.py"], "p-x")
        return Rewritten(copy.deepcopy(messages), "openai", {"markers": []})


def test_a_failed_commit_is_retried_then_raised() -> None:
    inner = RecordingToolcallModel(outputs=[_tool_call("c1", "ls"), _tool_call("c2", "ls")])
    settled = FreshModel(inner, _FlakyBridge(fails=2))  # type: ignore[arg-type]
    settled.settle_seconds = 0.0
    settled.query([{"role": "user", "content": "hi"}])
    assert inner.received == [[{"role": "user", "content": "hi"}]]
    stuck = FreshModel(inner, _FlakyBridge(fails=3))  # type: ignore[arg-type]
    stuck.settle_seconds = 0.0
    with pytest.raises(CommitFailed):
        stuck.query([{"role": "user", "content": "again"}])
    assert len(inner.received) == 1  # nothing unrewritten reached the model
