"""What one Claude Code hook event asks of fresh-ls (pure: no I/O).

Claude Code runs the hook command once per event and writes the event as JSON on stdin
(``session_id``, ``cwd``, ``hook_event_name``; for tools ``tool_name``, ``tool_input``,
``tool_response``, ``tool_use_id``). Measured with the pinned 2.1.332: a ``Read``'s
``tool_response`` is ``{"type": "text", "file": {"filePath", "content", "numLines",
"startLine", "totalLines"}}``, ``content`` being the lines without their numbers, and
``numLines`` counting the empty piece after a final newline.

- ``PostToolUse`` of ``Read``: the view it showed (``Observe``), its id the tool call's id,
  so a proxy that sees the same result registers the same view, not a second one;
- ``PostToolUse`` of ``Edit`` / ``MultiEdit`` / ``Write`` / ``NotebookEdit``: a write by
  this session (``Wrote``), so the change is ``changedBy: self``;
- ``PostToolUse`` of ``Bash``: what the command wrote and showed, as the proxy reads it
  (``Shell``, read by ``fresh_ls.hooks.shell``);
- ``UserPromptSubmit``: the stale note for the session (``Note``).
Anything else is no action: the hook answers nothing and Claude Code goes on.

The actions are named tuples, not dataclasses: ``dataclasses`` (with ``inspect``) is a
measurable share of a hook call's start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, NamedTuple

#: The session name: the same one ``fresh-ls proxy`` derives from Claude Code's
#: ``x-claude-code-session-id`` header, so hooks and proxy share one session's views.
SESSION_PREFIX = "claude-code-session-id:"
WRITE_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
#: The PostToolUse matcher install writes: the tools this module reads.
TOOL_MATCHER = "|".join(("Read", *WRITE_TOOLS, "Bash"))


class Observe(NamedTuple):
    """``fresh/observe``: lines ``first_line..last_line`` of ``path`` showed ``text``."""

    session: str
    path: str
    view_id: str | None
    first_line: int | None
    last_line: int | None
    text: str | None


class Wrote(NamedTuple):
    """``fresh/didWrite`` of ``path`` for ``session``."""

    session: str
    path: str


class Shell(NamedTuple):
    """A ``Bash`` call: its writes and its view, read by ``fresh_ls.hooks.shell`` (whose
    parser only a Bash event pays for)."""

    session: str
    event: Mapping[str, Any]


class Note(NamedTuple):
    """The stale note of ``session``, as additional context of the prompt."""

    session: str


Action = Observe | Wrote | Shell | Note


def session_of(event: Mapping[str, Any]) -> str | None:
    sid = event.get("session_id")
    return SESSION_PREFIX + sid if isinstance(sid, str) and sid else None


def _path(event: Mapping[str, Any], *keys: str) -> str | None:
    args = event.get("tool_input")
    if not isinstance(args, Mapping):
        return None
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            cwd = event.get("cwd")
            if not os.path.isabs(value) and isinstance(cwd, str) and cwd:
                return os.path.join(cwd, value)
            return value
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _line_count(text: str) -> int:
    """Lines of ``text`` by the contract's rule (LF ends a line; a last line without one
    still counts)."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def read_view(event: Mapping[str, Any], session: str) -> Observe | None:
    """The view a ``Read`` showed, from its response (lines as shown, without numbers);
    None for what is no text view (an image, a notebook, a PDF, an error)."""
    path = _path(event, "file_path")
    response = event.get("tool_response")
    if path is None or path.endswith(".ipynb"):
        return None
    view_id = event.get("tool_use_id") if isinstance(event.get("tool_use_id"), str) else None
    if not isinstance(response, Mapping) or response.get("type") != "text":
        return None
    shown = response.get("file")
    if not isinstance(shown, Mapping) or not isinstance(shown.get("content"), str):
        return None
    content: str = shown["content"]
    first = _int(shown.get("startLine")) or 1
    pieces = _int(shown.get("numLines"))
    total = _int(shown.get("totalLines"))
    # ``content`` is the lines joined by LF, without the LF of the last one shown; the
    # pieces count the empty one after a file's final newline. A range that stops before
    # the file's last piece lost its last LF: put it back, so each line is as on disk.
    if pieces is not None and total is not None and first + pieces - 1 < total:
        text = content + "\n"
    else:
        text = content
    if not text:
        return Observe(session, path, view_id, None, None, text) if first == 1 else None
    last = first + _line_count(text) - 1
    return Observe(session, path, view_id, first, last, text)


def action_of(event: Mapping[str, Any]) -> Action | None:
    """What the event asks of fresh-ls, or None."""
    session = session_of(event)
    if session is None:
        return None
    name = event.get("hook_event_name")
    if name == "UserPromptSubmit":
        return Note(session)
    if name != "PostToolUse":
        return None
    tool = event.get("tool_name")
    if tool == "Read":
        return read_view(event, session)
    if tool in WRITE_TOOLS:
        path = _path(event, "file_path", "notebook_path")
        return Wrote(session, path) if path else None
    if tool == "Bash":
        return Shell(session, event)
    return None
