"""Which format a parsed transcript is in, from its content (and name as a hint)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from fresh_ls.audit.formats import (
    claude_code,
    codex,
    mini_swe_agent,
    openhands_completion,
    openhands_events,
    pi,
    swe_agent,
)
from fresh_ls.audit.steps import Transcript

Parser = Callable[[Any, str, str], Transcript]

PARSERS: dict[str, Parser] = {
    openhands_completion.FORMAT: openhands_completion.parse,
    openhands_events.FORMAT: openhands_events.parse,
    swe_agent.FORMAT: swe_agent.parse,
    mini_swe_agent.FORMAT: mini_swe_agent.parse,
    claude_code.FORMAT: claude_code.parse,
    codex.FORMAT: codex.parse,
    pi.FORMAT: pi.parse,
}


LOOKS_LIKE: dict[str, Callable[[Any], bool]] = {
    openhands_completion.FORMAT: openhands_completion.looks_like,
    openhands_events.FORMAT: openhands_events.looks_like,
    swe_agent.FORMAT: swe_agent.looks_like,
    mini_swe_agent.FORMAT: mini_swe_agent.looks_like,
    claude_code.FORMAT: claude_code.looks_like,
    codex.FORMAT: codex.looks_like,
    pi.FORMAT: pi.looks_like,
}


def detect_session(records: list[Any]) -> str | None:
    """The format of a JSON-lines file whose records together are one run (an agent's own
    session file), or None when its lines are separate records (event histories)."""
    return _first_match((codex, pi, claude_code), records)


def detect(data: Any, filename: str = "") -> str | None:
    """The format name, or None when the data is none of the supported transcripts.

    Order matters: mini-swe-agent files also hold ``messages``, so they are tried before
    OpenHands completion logs; the file name settles only what the content leaves open.
    """
    if mini_swe_agent.looks_like(data) and (
        filename.endswith(".traj.json") or "trajectory_format" in data
    ):
        return mini_swe_agent.FORMAT
    return _first_match((openhands_completion, swe_agent, openhands_events, mini_swe_agent), data)


def _first_match(formats: tuple[ModuleType, ...], data: Any) -> str | None:
    """The ``FORMAT`` of the first of ``formats`` whose ``looks_like`` takes ``data``."""
    for fmt in formats:
        if fmt.looks_like(data):
            return str(fmt.FORMAT)
    return None
