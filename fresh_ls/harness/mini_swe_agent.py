"""fresh-ls for mini-swe-agent (PyPI ``mini-swe-agent``, 2.x).

mini-swe-agent's agent loop asks its model for one thing at a time: ``query(messages)``
before each step, and ``format_observation_messages(message, outputs)`` after the step's
commands ran. ``FreshModel`` wraps any of its models and hooks both:

- after a step, each command and its output go to ``ShellBridge.record``: reads become views
  named by the tool call's id, writes become ``fresh/didWrite``;
- before a request, the messages go through ``ShellBridge.rewrite``: tool results of replaced
  views become markers, the current code is appended at the end, ``fresh/commit`` runs, and
  the inner model gets the rewritten copy. ``agent.messages`` (the saved trajectory) keeps
  what the tools returned.

Tool-calling models (the default ``litellm`` model, ``DeterministicToolcallModel``) answer each
command with a ``tool`` message carrying its ``tool_call_id``; text-based models answer with a
plain user message, which ``FreshModel`` names by an id of its own kept in the message's
``extra`` (mini-swe-agent never sends ``extra`` to the model). Responses-API models are not
supported (their request items are another format).

This module imports nothing from mini-swe-agent: it works by the package's duck-typed
``Model`` protocol, so fresh-ls does not depend on it at run time.

    agent = DefaultAgent(model, LocalEnvironment(cwd=repo), **config["agent"])
    with SyncClient.attach(repo) as fresh:
        with_fresh(agent, fresh)
        agent.run(task)
"""

from __future__ import annotations

import itertools
import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fresh_ls.harness.rewrite import CommitFailed
from fresh_ls.harness.shell import ShellBridge

#: Where a text-based observation keeps its view id (inside mini-swe-agent's ``extra``).
VIEW_ID_KEY = "fresh_view_id"


def text_result_id(message: Mapping[str, Any]) -> str | None:
    """The view id ``FreshModel`` gave a text-based observation message (or None)."""
    if message.get("role") != "user":
        return None
    extra = message.get("extra")
    value = extra.get(VIEW_ID_KEY) if isinstance(extra, Mapping) else None
    return value if isinstance(value, str) else None


def _mark_cache(entry: dict[str, Any]) -> None:
    """An Anthropic cache breakpoint on one message, the way mini-swe-agent sets it."""
    content = entry.get("content")
    if entry.get("role") == "tool" or content is None:
        entry["cache_control"] = {"type": "ephemeral"}
    elif isinstance(content, str):
        entry["content"] = [
            {"type": "text", "text": content, "cache_control": {"type": "ephemeral"}}
        ]
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        content[-1]["cache_control"] = {"type": "ephemeral"}


class FreshModel:
    """A mini-swe-agent model that sees the current code instead of stale tool results."""

    #: ``rewrite_request`` already plans twice; a ``CommitFailed`` is retried this many
    #: times in all, ``settle_seconds`` apart, before it stops the agent.
    rewrite_tries = 3
    settle_seconds = 0.5

    def __init__(self, model: Any, bridge: ShellBridge) -> None:
        self.model = model
        self.bridge = bridge
        self._ids = itertools.count(1)
        # mini-swe-agent marks only the last message for Anthropic's prompt cache; that is
        # the projection here, which moves every turn, so nothing would ever be read back
        # from the cache. Mark the end of the history too (a second breakpoint).
        config = getattr(model, "config", None)
        self._cache_marks = getattr(config, "set_cache_control", None) == "default_end"
        if self._cache_marks:
            config.set_cache_control = None  # type: ignore[union-attr]

    @property
    def config(self) -> Any:
        return self.model.config

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        for attempt in range(self.rewrite_tries):
            try:
                rewritten = self.bridge.rewrite(messages, fmt="openai", result_id=text_result_id)
                break
            except CommitFailed:
                # Files kept changing while the request was planned (a build, a formatter):
                # wait for them to settle; never send the request unrewritten.
                if attempt + 1 == self.rewrite_tries:
                    raise
                time.sleep(self.settle_seconds)
        out: list[dict[str, Any]] = rewritten.request
        for message in out:
            call_id = message.get("tool_call_id") or text_result_id(message)
            extra = message.get("extra")
            if call_id in rewritten.replaced and isinstance(extra, dict):
                # The raw output rides along in ``extra``; the replaced copy must not.
                message["extra"] = {k: v for k, v in extra.items() if k != "raw_output"}
        if self._cache_marks and out:
            if rewritten.projection_message is not None and rewritten.projection_message > 0:
                _mark_cache(out[rewritten.projection_message - 1])
            _mark_cache(out[-1])
        result: dict[str, Any] = self.model.query(out, **kwargs)
        return result

    def format_message(self, **kwargs: Any) -> dict[str, Any]:
        message: dict[str, Any] = self.model.format_message(**kwargs)
        return message

    def format_observation_messages(
        self,
        message: dict[str, Any],
        outputs: list[dict[str, Any]],
        template_vars: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        observations: list[dict[str, Any]] = self.model.format_observation_messages(
            message, outputs, template_vars
        )
        actions = (message.get("extra") or {}).get("actions") or []
        for action, output, observation in zip(actions, outputs, observations, strict=False):
            call_id = action.get("tool_call_id")
            if not call_id:
                call_id = f"obs-{next(self._ids)}"
                observation.setdefault("extra", {})[VIEW_ID_KEY] = call_id
            self.bridge.record(
                str(call_id),
                str(action.get("command", "")),
                str(output.get("output", "")),
                output.get("returncode"),
            )
        return observations

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.model.get_template_vars(**kwargs)
        return result

    def serialize(self) -> dict[str, Any]:
        result: dict[str, Any] = self.model.serialize()
        return result

    def __getattr__(self, name: str) -> Any:
        if name == "model":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.model, name)


def with_fresh(
    agent: Any,
    client: Any,
    *,
    root: str | Path | None = None,
    session: str | None = None,
    agent_root: str | None = None,
    policy: str | None = None,
    budget_bytes: int | None = None,
) -> ShellBridge:
    """Wrap ``agent.model`` in a ``FreshModel``; returns the bridge.

    ``root``: the repository on this machine (default: the environment's ``cwd``, else the
    current directory). ``agent_root``: the same directory as the agent's commands name it,
    when they run elsewhere (a container's ``/testbed``). ``session``: default, a new id.
    """
    env_cwd = str(getattr(getattr(agent.env, "config", None), "cwd", "") or "")
    # Where the commands run: the environment's cwd, else (a local environment) ours.
    cwd = env_cwd or agent_root or os.getcwd()
    bridge = ShellBridge(
        client,
        root or env_cwd or os.getcwd(),
        session or f"mini-swe-agent-{uuid.uuid4().hex[:8]}",
        agent_root=agent_root,
        cwd=cwd,
        policy=policy,
        budget_bytes=budget_bytes,
    )
    agent.model = FreshModel(agent.model, bridge)
    return bridge
