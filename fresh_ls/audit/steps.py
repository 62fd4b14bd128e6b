"""The normalized form every transcript format is parsed into.

Every agent format describes the same things differently: a tool call, its arguments, what the
tool printed back, and when the model was called. Parsing each format into one list of
``Step`` plus a list of request positions lets a single interpreter apply the staleness rule,
so the rule cannot drift between formats. The fields mirror the ``steps.jsonl`` files that ship
with the real runs in ``../shared/fixtures``, which makes each parser checkable against them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Tool = Literal[
    "view",  # str_replace_editor view (a file or a directory)
    "create",  # str_replace_editor create / SWE-agent 0.x create
    "str_replace",
    "insert",  # insert new_str after insert_line
    "undo_edit",
    "window",  # SWE-agent 0.x open / goto / scroll_up / scroll_down
    "edit_lines",  # SWE-agent 0.x edit START:END (replace those lines)
    "bash",
    "opaque_edit",  # an edit tool whose changed lines the transcript does not say
    "seen",  # a file view read by ``fresh_ls.toolcalls.agents`` (start..end, text in file_text)
    "patch",  # an edit given as a unified diff in ``diff`` (``+++`` names each file)
    "grep_tool",  # a search tool given as arguments (``args``: Claude Code's Grep)
    "other",
]


@dataclass
class Step:
    """One tool call and what it returned.

    ``id`` is the 0-based index of the call among all tool calls of the run, in order; it is
    also the id of the view the call produced, if any (a call produces at most one view).
    """

    id: int
    tool: Tool
    path: str | None = None
    view_range: list[int] | None = None
    old_str: str | None = None
    new_str: str | None = None
    insert_line: int | None = None
    file_text: str | None = None
    start: int | None = None
    end: int | None = None
    command: str | None = None
    observation: str = ""
    exit_code: int | None = None
    # A unified diff of the edit when the format records one (OpenHands event histories).
    diff: str | None = None
    # Working directory after the call, when the format records it.
    cwd_after: str | None = None
    # SWE-agent 0.x: the file the windowed editor had open before the call.
    open_file: str | None = None
    # Working directory the call ran in, when the format says so (Codex ``workdir``).
    cwd: str | None = None
    # The tool reported an error (Claude Code ``is_error``): an edit or view that did nothing.
    failed: bool = False
    # "seen": the whole file was shown (its length is then known).
    whole: bool = False
    # The file as the tool found it before the call, when the format records it (Claude
    # Code's Edit/Write ``originalFile``): evidence of changes made outside the agent.
    before: str | None = None
    # The raw arguments of a tool the interpreter reads itself ("grep_tool").
    args: dict[str, object] | None = None


@dataclass
class Transcript:
    """One agent run: its steps and the points where the model was called.

    ``requests[i]`` is the number of steps that happened before model request ``i`` was sent:
    request ``i`` carried every observation of steps ``0 .. requests[i] - 1``. Request indices
    are 0-based and in the order the model was called.
    """

    run: str
    format: str
    source: str
    steps: list[Step] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    # Steps each request produced (its response's tool calls), parallel to ``requests``.
    request_steps: list[list[int]] = field(default_factory=list)
    # Absolute directories that stand for the repository root (``/testbed``, ``/workspace/x``).
    roots: list[str] = field(default_factory=list)
    cwd: str | None = None
    # True when ``cd`` in one shell call carries over to the next (a persistent shell).
    persistent_shell: bool = True
    notes: list[str] = field(default_factory=list)


class TranscriptError(ValueError):
    """The file is not a readable transcript; the message says what is wrong with it."""
