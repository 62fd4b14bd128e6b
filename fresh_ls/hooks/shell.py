"""What a ``Bash`` call showed and wrote, as hook actions (pure: no I/O).

Without this, a file the agent changes through ``Bash`` (``sed -i``, a formatter it runs,
a heredoc) would reach the note as changed "outside the agent", and a ``cat -n`` it ran
would be no view. The proxy's own recognizer reads the command
(``fresh_ls.toolcalls.agents.recognize``, the same one ``fresh-ls proxy`` uses), imported
here only for a ``Bash`` event: its parsers cost about 25 ms of imports that a Read or an
Edit hook must not pay (benchmarks/bench_hooks.py measures the Bash case; it imports neither
the audit package nor the harness's client, tests/hooks/test_hook_e2e.py checks). Claude
Code sends ``PostToolUse`` only for a call that succeeded (a failure is
``PostToolUseFailure``), and its ``tool_response.stdout`` is the output without its final
newline.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from fresh_ls.hooks.claude_code import Observe, Wrote


def _absolute(path: str, cwd: str | None) -> str:
    return path if os.path.isabs(path) or not cwd else os.path.join(cwd, path)


def bash_actions(event: Mapping[str, Any], session: str) -> list[Observe | Wrote]:
    """The writes of a ``Bash`` call, and the view when the whole call was one read."""
    args = event.get("tool_input")
    command = args.get("command") if isinstance(args, Mapping) else None
    if not isinstance(command, str) or not command.strip():
        return []
    response = event.get("tool_response")
    stdout = response.get("stdout") if isinstance(response, Mapping) else None
    output = stdout + "\n" if isinstance(stdout, str) and stdout else ""
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    view_id = event.get("tool_use_id") if isinstance(event.get("tool_use_id"), str) else None
    from fresh_ls.toolcalls.agents import Searched, Seen, ToolCall, recognize

    call = ToolCall(view_id or "", "Bash", {"command": command}, output)
    actions: list[Observe | Wrote] = []
    for effect in recognize(call, cwd):
        if isinstance(effect, Searched):
            continue  # not a Wrote: a search changed nothing (its lines are not observed here yet)
        path = _absolute(effect.path, effect.cwd or cwd)
        if isinstance(effect, Seen):
            actions.append(Observe(session, path, view_id, effect.first, effect.last, effect.text))
        else:
            actions.append(Wrote(session, path))
    return actions
