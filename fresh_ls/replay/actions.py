"""Apply one recorded agent step to the scratch copy of its repository.

The steps come normalized (``steps.jsonl``): editor views and edits with their arguments
and what the tool printed. Edits are applied exactly as the tool would (an edit whose
output reports a failure changed nothing); views and edit-result snippets are read back
out of the printed listing, so the view registered is what the agent was shown. Shell
commands are run only in the two forms that are safe to emulate (``sed -i`` with a line
address and a plain ``s`` command, ``rm`` of one file); any other shell write is reported,
by step and command, as not reproduced.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fresh_ls.audit.interpret import edit_failed
from fresh_ls.audit.paths import PathResolver
from fresh_ls.core.text import split_lines
from fresh_ls.toolcalls.numbered import Listing, cat_n_header, parse_cat_n, parse_window
from fresh_ls.toolcalls.searches import line_ranges, searched, shell_search, shown_text
from fresh_ls.toolcalls.shell_effects import analyze
from fresh_ls.toolcalls.shell_envelope import openhands_envelope

EDIT_TOOLS = frozenset({"create", "str_replace", "insert", "edit_lines", "undo_edit"})


@dataclass
class ViewSpec:
    """A view to register: the lines the agent was shown, as numbered by the tool."""

    path: str
    first: int
    last: int
    text: str | None  # what was shown, or None: exactly the disk's lines
    kind: str  # "read" | "editResult"
    #: a search result's lines of this file (a sparse view): ``first..last`` spans them
    ranges: tuple[tuple[int, int], ...] | None = None


@dataclass
class StepOutcome:
    wrote: list[str] = field(default_factory=list)
    views: list[ViewSpec] = field(default_factory=list)
    not_reproduced: str | None = None  # why, when the step changed files we could not


CLIPPED = "<response clipped>"


def listing_of(observation: str) -> tuple[Listing | None, str | None]:
    """The numbered lines a tool printed, and the path its header names (if any).

    A clipped listing ends inside a line, followed by the clip note: that last line was not
    shown whole, so it is not part of the view.
    """
    window = parse_window(observation)
    if window is not None:
        return window.listing, window.path
    header = cat_n_header(observation)
    listing = parse_cat_n(observation, header[2] if header else None)
    if listing is not None and CLIPPED in listing.lines.get(listing.last, ""):
        del listing.lines[listing.last]
        listing.last -= 1
    return listing, header[0] if header else None


def _view_from_listing(
    path: str, listing: Listing | None, kind: str, disk: str | None
) -> ViewSpec | None:
    """The view a listing shows. When it is the disk's lines as the editor renders them
    (tabs expanded), the server takes the disk's own bytes (``text`` None)."""
    if listing is None or listing.last < listing.first:
        return None
    shown = [listing.lines[n] for n in range(listing.first, listing.last + 1)]
    last = listing.last
    disk_lines = split_lines(disk) if disk is not None else None
    # Editors number the empty string after a snippet's final newline: a phantom line.
    phantom = shown and shown[-1] == "" and disk_lines is not None
    if phantom and (last > len(disk_lines or []) or (disk_lines or [])[last - 1].strip()):
        shown.pop()
        last -= 1
    if last < listing.first:
        return None
    text: str | None = "".join(line + "\n" for line in shown)
    if disk_lines is not None:
        lines = disk_lines[listing.first - 1 : last]
        if [line.rstrip("\n").expandtabs() for line in lines] == shown:
            text = None
    return ViewSpec(path, listing.first, last, text, kind)


class Workspace:
    """The scratch root and what the agent's editor would remember (for ``undo_edit``)."""

    def __init__(self, root: Path, prefixes: list[str], openhands: bool = False) -> None:
        #: OpenHands' editor expands tabs in the whole file on str_replace and insert, and
        #: its shell is typed into a terminal, where a literal TAB is eaten by completion.
        self.expand_tabs = openhands
        self.shell_drops_tabs = openhands
        self.root = root
        self.paths = PathResolver(prefixes)
        self.history: dict[str, list[str | None]] = {}
        self.home: str | None = prefixes[0] if prefixes else None
        self.cwd: str | None = self.home

    def rel(self, path: str | None, cwd: str | None = None) -> str | None:
        """The repository-relative path, or None for a path outside the repository."""
        if not path:
            return None
        key = self.paths.key(path, cwd or self.cwd)
        if key.startswith("/") or key.startswith("..") or key == ".":
            return None
        return key

    def read(self, rel: str) -> str | None:
        try:
            return (self.root / rel).read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
            return None

    def write(self, rel: str, text: str | None) -> None:
        self.history.setdefault(rel, []).append(self.read(rel))
        target = self.root / rel
        if text is None:
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    # -- steps --------------------------------------------------------------------------

    def apply(self, step: dict[str, Any]) -> StepOutcome:
        tool = step.get("tool")
        observation = step.get("observation") or ""
        if tool == "bash":
            return self._bash(step.get("command") or "", observation)
        # Normalized steps give in-repository paths relative to the root, whatever the cwd.
        rel = self.rel(step.get("path"), self.home) if step.get("inRepo", True) else None
        if rel is None:
            return StepOutcome()
        if tool == "view":
            if (self.root / rel).is_dir():
                return StepOutcome()
            listing, _ = listing_of(observation)
            view = _view_from_listing(rel, listing, "read", self.read(rel))
            return StepOutcome(views=[view] if view else [])
        if tool not in EDIT_TOOLS or edit_failed(observation):
            return StepOutcome()
        current = self.read(rel)
        new_text, why = _edited(tool, step, current, self.history.get(rel), self.expand_tabs)
        if why is not None:
            return StepOutcome(not_reproduced=why)
        if tool == "undo_edit":
            previous = self.history[rel].pop()
            target = self.root / rel
            if previous is None:
                target.unlink(missing_ok=True)
            else:
                target.write_text(previous, encoding="utf-8")
        else:
            self.write(rel, new_text)
        outcome = StepOutcome(wrote=[rel])
        listing, _ = listing_of(observation)
        snippet = _view_from_listing(rel, listing, "editResult", self.read(rel))
        if snippet is not None:
            outcome.views.append(snippet)
        return outcome

    def _text_of(self, path: str, cwd: str | None) -> str | None:
        rel = self.rel(path, cwd)
        return self.read(rel) if rel is not None else None

    def _total_of(self, path: str, cwd: str | None) -> int | None:
        text = self._text_of(path, cwd)
        return len(split_lines(text)) if text is not None else None

    def _bash(self, command: str, observation: str) -> StepOutcome:
        if self.shell_drops_tabs:
            command = command.replace("\t", "")
        effects = analyze(command, observation, None, self.cwd, self._text_of, self._total_of)
        if effects.cwd_after:
            self.cwd = effects.cwd_after
        outcome = StepOutcome()
        for removed in _removed_files(command, self):
            self.write(removed, None)
            outcome.wrote.append(removed)
        for write in effects.writes:
            rel = self.rel(write.path, write.cwd)
            if rel is None or not (self.root / rel).exists():
                continue  # outside the repository, or a scratch file of the agent's
            if write.kind == "sed":
                text = self.read(rel)
                edited = run_sed_inplace(command, text) if text is not None else None
                if edited is not None:
                    self.write(rel, edited)
                    outcome.wrote.append(rel)
                    continue
            outcome.not_reproduced = f"shell write to {rel} ({write.kind}): {command[:120]}"
        if effects.unattributed and outcome.not_reproduced is None:
            outcome.not_reproduced = f"shell write ({effects.unattributed[0]}): {command[:120]}"
        outcome.views += self._searched(command, observation)
        return outcome

    def _searched(self, command: str, observation: str) -> list[ViewSpec]:
        """A search's printed lines, per file of the repository, as sparse views (the lines
        that held when it ran; ``toolcalls.searches``)."""
        search = shell_search(command, self.cwd)
        if search is None:
            return []
        body = openhands_envelope(command, observation)[1] if self.expand_tabs else observation
        views = []
        for found in searched(search, body, self._text_of):
            rel = self.rel(found.path, found.cwd)
            if rel is None or self.read(rel) is None:
                continue  # outside the repository, or a file the run's base/ does not hold
            ranges = line_ranges(found)
            views.append(
                ViewSpec(rel, ranges[0][0], ranges[-1][1], shown_text(found), "read", tuple(ranges))
            )
        return views


def _edited(
    tool: str,
    step: dict[str, Any],
    current: str | None,
    history: list[str | None] | None,
    expand_tabs: bool,
) -> tuple[str | None, str | None]:
    """The file's new text after an editor edit, or a reason it cannot be reproduced.

    Mirrors the editors the runs used: OpenHands' ``str_replace``/``insert`` work on the
    file with tabs expanded and split lines on LF (an inserted text ending in a newline
    adds an empty line); SWE-agent's ``edit N:M`` replaces lines N..M as given.
    """
    if tool == "create":
        return step.get("file_text") or "", None
    if tool == "undo_edit":
        return (None, None) if history else (None, "undo_edit with no earlier edit")
    if current is None:
        return None, f"{tool} on a file the replay does not have"

    def expand(text: str) -> str:
        return text.expandtabs() if expand_tabs else text

    if tool == "str_replace":
        old, new = expand(step.get("old_str") or ""), expand(step.get("new_str") or "")
        content = expand(current)
        if not old or content.count(old) != 1:
            return None, f"str_replace whose old_str occurs {content.count(old)} times here"
        return content.replace(old, new, 1), None
    if tool == "insert":
        at = int(step.get("insert_line") or 0)
        lines = expand(current).split("\n")
        new_lines = expand(step.get("new_str") or "").split("\n")
        return "\n".join(lines[:at] + new_lines + lines[at:]), None
    old_lines = split_lines(current)
    start, end = int(step.get("start") or 1), int(step.get("end") or 1)
    replacement = split_lines(_with_newline(step.get("new_str") or ""))
    return "".join(old_lines[: start - 1] + replacement + old_lines[end:]), None


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def _removed_files(command: str, ws: Workspace) -> list[str]:
    """Files a plain ``rm FILE...`` removes inside the repository (no flags, no globs)."""
    out: list[str] = []
    for part in re.split(r"&&|;|\|\|", command):
        try:
            argv = shlex.split(part)
        except ValueError:
            continue
        if not argv or argv[0] != "rm" or any(a.startswith("-") for a in argv[1:]):
            continue
        for arg in argv[1:]:
            rel = ws.rel(arg)
            if rel is not None and (ws.root / rel).is_file():
                out.append(rel)
    return out


_SED = re.compile(
    r"^sed\s+-i\s+(?P<q>['\"])(?P<addr>\d+)(?:,(?P<to>\d+))?s(?P<d>.)(?P<rest>.*)(?P=q)\s+\S+$"
)


def run_sed_inplace(command: str, text: str) -> str | None:
    """Emulate ``sed -i 'N[,M]s/PAT/REPL/[g]' FILE``; None for any other form."""
    match = _SED.match(command.strip())
    if not match:
        return None
    delim = match.group("d")
    parts = re.split(rf"(?<!\\){re.escape(delim)}", match.group("rest"))
    if len(parts) != 3 or parts[2] not in ("", "g"):
        return None
    pattern, repl, flags = parts
    try:
        regex = re.compile(pattern.replace(r"\/", "/"))
    except re.error:
        return None
    python_repl = (
        repl.replace("\\t", "\t").replace("\\n", "\n").replace(r"\/", "/").replace("&", r"\g<0>")
    )
    first = int(match.group("addr"))
    last = int(match.group("to") or first)
    lines = split_lines(text)
    for i in range(first - 1, min(last, len(lines))):
        body = lines[i].rstrip("\n")
        ending = lines[i][len(body) :]
        lines[i] = regex.sub(python_repl, body, count=0 if flags == "g" else 1) + ending
    return "".join(lines)
