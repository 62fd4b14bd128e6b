"""Replay a normalized transcript onto the ledger and record every request's verdict.

Each tool call is turned into ledger operations: views (editor ``view``, SWE-agent windows,
and, only for the wide count, edit-result snippets and shell reads when asked for) and edits
(editor edits, SWE-agent line edits, shell writes). Edits whose result reports a failure
change nothing. Search results (``grep -n``, ``rg -n``, ``git grep -n``) are sparse views: every
line they printed is followed under the same rule, counted apart from file views. Before each
model request the stale views and stale search lines are recorded.

A change made outside the agent (a formatter, a human, another process) is in no transcript
as a tool call, but later tool output can prove it: a read showing other text on a line the
run had seen. It is then applied like an edit, from the moment it was seen: placed on lines
when both the old and the new text of the whole file are known, else every view of the file
counts as stale.
"""

from __future__ import annotations

import difflib
import re

from fresh_ls.audit.ledger import Ledger, View
from fresh_ls.audit.locate import (
    LineEdit,
    start_from_diff,
    start_from_known,
    start_from_snippet,
    trimmed_edit,
    trimmed_lines,
)
from fresh_ls.audit.paths import PathResolver
from fresh_ls.audit.results import RequestAudit, RunAudit, SearchRecord, ViewRecord
from fresh_ls.audit.steps import Step, Transcript
from fresh_ls.toolcalls.numbered import (
    Listing,
    cat_n_header,
    parse_cat_n,
    parse_window,
    plain_lines,
)
from fresh_ls.toolcalls.patches import parse_patch
from fresh_ls.toolcalls.searches import SearchCommand, grep_tool, searched, shell_search
from fresh_ls.toolcalls.sed import Replace, Substitute, Unknown
from fresh_ls.toolcalls.shell_effects import Effects, Write, analyze

_EDITOR_TOOLS = {
    "view",
    "create",
    "str_replace",
    "insert",
    "undo_edit",
    "edit_lines",
    "opaque_edit",
}
_FAILURES = (
    "ERROR",
    "No replacement was performed",
    "did not appear verbatim",
    "Your proposed edit has introduced new syntax error",
    "Invalid `",
    "Parameter `",
    "already exists",
    "Cannot overwrite",
    "is a directory",
    "does not exist",
    "No such file",
    "Usage:",
)


#: A line an agent cut (OpenHands clips a listing's last line; Codex cuts a long output in
#: the middle of a line, ``…N chars truncated…``): its text is no evidence of a change.
_CUT = re.compile(r"<response clipped>|…\d+ (?:chars|tokens|lines) truncated…")


def _differ(seen: str, shown: str) -> bool:
    """Whether two showings of one line prove it changed. A cut line proves nothing, nor
    does a long line shown whole once and cut short (with or without a mark) another time."""
    a, b = _norm(seen), _norm(shown)
    if a == b or _CUT.search(seen + "\n" + shown):
        return False
    short, long = sorted((a, b), key=len)
    stem = short.rstrip(".… ")
    return not (len(short) >= _LONG_LINE and long.startswith(stem))


#: Tools cut lines longer than this (Claude Code's Read at 2000 characters).
_LONG_LINE = 500


def _norm(text: str) -> str:
    """Line text as compared across tools: listings expand tabs (to varying widths) and drop
    trailing blanks, so only the words count; a change of whitespace alone is not seen."""
    return " ".join(text.split())


def edit_failed(observation: str) -> bool:
    """Whether an editor tool reported that it did not apply the edit.

    Only the text before any listing is checked: the file's own lines may contain anything.
    """
    head = observation.lstrip()
    for marker in ("Here's the result of running", "[File: "):
        cut = head.find(marker)
        if cut >= 0:
            head = head[:cut]
    head = head[:400]
    return any(marker in head for marker in _FAILURES)


def _editor_listing(observation: str) -> tuple[Listing | None, bool]:
    """The numbered lines an editor printed, and whether the output was clipped."""
    header = cat_n_header(observation)
    listing = parse_cat_n(observation, header[2] if header else None)
    clipped = "<response clipped>" in observation or "too large" in observation
    return listing, clipped


class Interpreter:
    def __init__(self, transcript: Transcript, shell_reads: bool) -> None:
        self.t = transcript
        self.shell_reads = shell_reads
        self.ledger = Ledger()
        self.paths = PathResolver(transcript.roots)
        self.cwd = transcript.cwd
        self.edited: set[str] = set()
        # Files whose first change in the run wrote them whole: new files, as far as we know.
        self.created: set[str] = set()
        # Files whose known text rests on edits this audit inferred (placed from snippets,
        # sed, shell writes): their text is no evidence of an outside change until the whole
        # file is seen again.
        self.inferred: set[str] = set()
        self.audit = RunAudit(transcript.run, transcript.source, transcript.format, shell_reads)
        self.audit.notes.extend(transcript.notes)
        self.open_file: str | None = None

    # -- the run -----------------------------------------------------------------------------

    def run(self) -> RunAudit:
        requests = self.t.requests
        request = 0
        for position, step in enumerate(self.t.steps):
            while request < len(requests) and requests[request] <= position:
                self._snapshot(request)
                request += 1
            self.step(step)
        while request < len(requests):
            self._snapshot(request)
            request += 1
        self.audit.views = [
            ViewRecord(v.id, v.path, v.shown[0], v.shown[1], v.strict, v.stale_reason)
            for v in self.ledger.views
        ]
        self.audit.searches = self._search_records()
        self._note_missing_results()
        return self.audit

    def _search_records(self) -> list[SearchRecord]:
        grouped: dict[tuple[int, str], list[View]] = {}
        for line in self.ledger.search_lines:
            grouped.setdefault((line.id, line.path), []).append(line)
        return [
            SearchRecord(
                step,
                path,
                tuple(v.shown[0] for v in lines),
                tuple(v.shown[0] for v in lines if v.stale),
                tuple(v.shown[0] for v in lines if v.moved and not v.stale),
            )
            for (step, path), lines in grouped.items()
        ]

    def _note_missing_results(self) -> None:
        last = set(self.t.request_steps[-1]) if self.t.request_steps else set()
        for step in self.t.steps:
            if step.tool in _EDITOR_TOOLS and not step.observation and step.id not in last:
                self.audit.notes.append(f"step {step.id} ({step.tool}) has no tool result")

    def _snapshot(self, index: int) -> None:
        views = self.ledger.views
        steps = self.t.request_steps[index] if index < len(self.t.request_steps) else []
        lines = self.ledger.search_lines
        stale_lines = [line for line in lines if line.stale]
        self.audit.requests.append(
            RequestAudit(
                index=index,
                after_steps=self.t.requests[index],
                steps=tuple(steps),
                views_strict=sum(1 for v in views if v.strict),
                views_wide=len(views),
                stale_strict=frozenset(self.ledger.stale_strict),
                stale_wide=frozenset(self.ledger.stale_wide),
                search_lines=len(lines),
                stale_search_lines=len(stale_lines),
                stale_searches=frozenset(line.id for line in stale_lines),
                misnumbered_search_lines=sum(1 for v in lines if v.stale or v.moved),
            )
        )

    def key(self, path: str, cwd: str | None = None) -> str:
        return self.paths.key(path, cwd if cwd is not None else self.cwd)

    # -- one tool call ---------------------------------------------------------------------

    def step(self, step: Step) -> None:
        if step.failed:
            if step.tool in _EDITOR_TOOLS - {"view"} or step.tool == "patch":
                self.audit.failed_edits += 1
            if step.tool != "bash":
                return  # an editor or view that reported an error did nothing
        if step.before is not None and step.path:
            before = plain_lines(step.before)
            self._observed(
                self.key(step.path, step.cwd), dict(enumerate(before, 1)), step, len(before)
            )
        saved = self.cwd
        if step.cwd:
            self.cwd = step.cwd
        handler = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
            "undo_edit": self._undo,
            "window": self._window,
            "edit_lines": self._edit_lines,
            "bash": self._bash,
            "opaque_edit": self._opaque_edit,
            "seen": self._seen,
            "patch": self._patch,
            "grep_tool": self._grep_tool,
        }.get(step.tool)
        if handler is not None:
            handler(step)
        if step.cwd and not step.cwd_after:
            self.cwd = saved  # the call named where it ran; the shell did not move
        if step.cwd_after:
            self.cwd = step.cwd_after

    def _observed(
        self, path: str, lines: dict[int, str], step: Step, total: int | None = None
    ) -> None:
        """Lines a tool just showed of ``path`` (``total``: the file's length, when the whole
        file was shown). Where they differ from the text the run knew, the file changed
        outside the agent since: apply that change before recording the new view."""
        model = self.ledger.files.get(path)
        if path in self.inferred:
            if total is not None and len(lines) == total:
                self.inferred.discard(path)  # from here on the text is as shown
            return
        if model is None or not model.known:
            return
        differs = [n for n, t in lines.items() if n in model.known and _differ(model.known[n], t)]
        old = self._whole_known(path)
        if old is not None and any(_CUT.search(t) for t in old):
            old = None
        whole = (
            old is not None
            and total is not None
            and all(n in lines for n in range(1, total + 1))
            and len(lines) == total
        )
        new = [lines[n] for n in range(1, total + 1)] if whole and total is not None else []
        if whole and old is not None:
            if len(old) == len(new) and not any(map(_differ, old, new)):
                return
        elif not differs:
            return
        self.audit.outside_changes += 1
        reason = f"changed outside the agent (seen by step {step.id})"
        if whole and old is not None:
            matcher = difflib.SequenceMatcher(
                a=[_norm(t) for t in old], b=[_norm(t) for t in new], autojunk=False
            )
            for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
                if tag != "equal":
                    self.ledger.replace(path, i1 + 1, i2 - i1, new[j1:j2], reason)
            self.audit.notes.append(f"step {step.id}: {path} {reason}")
            return
        where = f"line {differs[0]}" if differs else "its length"
        self.audit.notes.append(
            f"step {step.id}: {path} {reason}, {where} differs; lines not placed (every view"
            " of it counts as stale)"
        )
        self.ledger.invalidate(path, reason)

    def _whole_known(self, path: str) -> list[str] | None:
        model = self.ledger.files.get(path)
        if model is None or model.total is None:
            return None
        if any(n not in model.known for n in range(1, model.total + 1)):
            return None
        return [model.known[n] for n in range(1, model.total + 1)]

    def _seen(self, step: Step) -> None:
        """A file view as ``fresh_ls.toolcalls.agents`` read it (Claude Code's Read)."""
        if not step.path or step.start is None or step.end is None or step.file_text is None:
            return
        path = self.key(step.path)
        lines = dict(enumerate(plain_lines(step.file_text), step.start))
        total = step.end if step.whole else None
        self._observed(path, lines, step, total)
        self.ledger.add_view(
            path, step.id, step.start, step.end, strict=True, lines=lines, total=total
        )

    def _patch(self, step: Step) -> None:
        """An edit given as a unified diff (the lines a tool recorded it changed); ``args``
        may name files changed with unknown lines (``unplaced``) or deleted."""
        reason = f"edited by step {step.id} (lines placed from the recorded diff)"
        for patch in parse_patch(step.diff or "", strip=0) or []:
            path = self.key(patch.path)
            self._edited(path, exact=True)
            for edit in patch.edits:
                self.ledger.replace(path, edit.first, edit.old_count, edit.new_lines, reason)
        args = step.args or {}
        for name in args.get("unplaced") or []:  # type: ignore[attr-defined]
            self._unplaced(
                self.key(str(name)), step, f"{step.command or 'patch'} with unknown lines"
            )
        for name in args.get("deleted") or []:  # type: ignore[attr-defined]
            path = self.key(str(name))
            self._edited(path)
            self.ledger.invalidate(path, f"deleted by step {step.id}")

    def _grep_tool(self, step: Step) -> None:
        search = grep_tool(step.args or {}, self.cwd)
        if search is not None:
            self._search(step, search)

    def _view(self, step: Step) -> None:
        if not step.path or edit_failed(step.observation):
            return
        listing, clipped = _editor_listing(step.observation)
        if listing is None:
            return  # a directory listing or an empty file: no lines shown
        path = self.key(step.path)
        to_end = step.view_range is None or (len(step.view_range) > 1 and step.view_range[1] == -1)
        total = listing.last if to_end and not clipped else None
        self._observed(path, listing.lines, step, total)
        self._add_listing(path, step, listing, strict=True, total=total)

    def _add_listing(
        self, path: str, step: Step, listing: Listing, *, strict: bool, total: int | None = None
    ) -> None:
        """The lines a ``cat -n`` style listing showed, as a view of step ``step``."""
        self.ledger.add_view(
            path,
            step.id,
            listing.first,
            listing.last,
            strict=strict,
            lines=listing.lines,
            total=total,
        )

    def _snippet(self, step: Step, path: str) -> None:
        """The ``cat -n`` snippet an editor prints after an edit: a view for the wide count."""
        listing, _ = _editor_listing(step.observation)
        if listing is not None:
            self._add_listing(path, step, listing, strict=False)

    def _edited(self, path: str, whole: bool = False, exact: bool = False) -> None:
        self.audit.edits += 1
        if not exact:
            self.inferred.add(path)
        if whole and path not in self.edited and not self.ledger.file(path).live:
            self.created.add(path)
        self.edited.add(path)

    def _create(self, step: Step) -> None:
        if not step.path:
            return
        window = parse_window(step.observation)
        if step.observation.lstrip().startswith("Error: File") and window:
            self._window(step)  # SWE-agent opens an existing file instead of creating it
            return
        if edit_failed(step.observation):
            self.audit.failed_edits += 1
            return
        path = self.key(step.path)
        text = step.file_text or ""
        lines = plain_lines(text) if text else [""]
        self._edited(path, whole=True)
        self.ledger.rewrite(path, lines, f"created anew by step {step.id}")
        if window and window.listing:
            self.open_file = window.path
            listing = window.listing
            self._add_listing(path, step, listing, strict=False)

    def _str_replace(self, step: Step) -> None:
        if not step.path or step.old_str is None:
            self.audit.failed_edits += 1
            return
        if edit_failed(step.observation):
            self.audit.failed_edits += 1
            return
        path = self.key(step.path)
        old_str, new_str = step.old_str, step.new_str or ""
        listing, _ = _editor_listing(step.observation)
        known = self.ledger.file(path).known
        start, how = None, ""
        if listing is not None:
            start, how = start_from_snippet(listing, new_str), "snippet"
        if start is None and step.diff:
            start, how = start_from_diff(step.diff, old_str, new_str), "diff"
        if start is None:
            start, how = start_from_known(known, old_str), "known lines"
        if start is None:
            self._unplaced(path, step, "str_replace with no line to anchor it")
        else:
            self._apply(path, trimmed_edit(start, old_str, new_str, known, how), step)
        self._snippet(step, path)

    def _insert(self, step: Step) -> None:
        if not step.path or step.insert_line is None or edit_failed(step.observation):
            self.audit.failed_edits += 1
            return
        path = self.key(step.path)
        lines: list[str | None] = list((step.new_str or "").split("\n"))
        self._apply(path, LineEdit(step.insert_line + 1, 0, lines, "insert_line"), step)
        self._snippet(step, path)

    def _undo(self, step: Step) -> None:
        if not step.path or edit_failed(step.observation):
            self.audit.failed_edits += 1
            return
        path = self.key(step.path)
        if not self.ledger.undo(path, f"undone by step {step.id}"):
            self._count_unplaced(step, path, "undo of an edit this audit did not see")
        self._edited(path)
        self._snippet(step, path)

    def _opaque_edit(self, step: Step) -> None:
        """An editor that rewrites a file without saying which lines (OpenHands edit_file)."""
        if not step.path or edit_failed(step.observation):
            self.audit.failed_edits += 1
            return
        self._unplaced(self.key(step.path), step, f"{step.command} with unknown lines")

    def _window(self, step: Step) -> None:
        window = parse_window(step.observation)
        if window is None or window.listing is None:
            return
        self.open_file = window.path
        listing = window.listing
        self._observed(self.key(window.path), listing.lines, step, window.total)
        self._add_listing(self.key(window.path), step, listing, strict=True, total=window.total)

    def _edit_lines(self, step: Step) -> None:
        if step.start is None or step.end is None or edit_failed(step.observation):
            self.audit.failed_edits += 1
            return
        window = parse_window(step.observation)
        target = window.path if window else (step.open_file or self.open_file or step.path)
        if not target:
            self.audit.failed_edits += 1
            return
        path = self.key(target)
        known = self.ledger.file(path).known
        old = [known.get(n) for n in range(step.start, step.end + 1)]
        new = plain_lines(step.new_str or "")
        self._apply(path, trimmed_lines(step.start, old, new, "edit START:END"), step)
        if window and window.listing:
            listing = window.listing
            self._add_listing(path, step, listing, strict=False, total=window.total)

    def _apply(self, path: str, edit: LineEdit, step: Step) -> None:
        self._edited(path)
        if edit.old_count == 0 and not edit.new_lines:
            return  # old and new text are the same lines
        reason = f"edited by step {step.id} (lines placed from {edit.how})"
        self.ledger.replace(path, edit.first, edit.old_count, edit.new_lines, reason)

    def _unplaced(self, path: str, step: Step, why: str) -> None:
        self._edited(path)
        self._count_unplaced(step, path, why)
        self.ledger.invalidate(path, f"edited by step {step.id}: {why}")

    def _count_unplaced(self, step: Step, path: str, why: str) -> None:
        self.audit.unplaced_edits += 1
        self.audit.notes.append(f"step {step.id}: {why}: {path} (every view counts as stale)")

    # -- shell -----------------------------------------------------------------------------

    def _text_of(self, path: str, cwd: str | None) -> str | None:
        model = self.ledger.files.get(self.key(path, cwd))
        if model is None or model.total is None:
            return None
        if any(n not in model.known for n in range(1, model.total + 1)):
            return None
        return "".join(model.known[n] + "\n" for n in range(1, model.total + 1))

    def _total_of(self, path: str, cwd: str | None) -> int | None:
        model = self.ledger.files.get(self.key(path, cwd))
        return model.total if model else None

    def _bash(self, step: Step) -> None:
        if not step.command:
            return
        search = shell_search(step.command, self.cwd)
        if search is not None:
            self._search(step, search)  # then as any shell call: its cd carries over
        effects = analyze(
            step.command,
            step.observation,
            step.exit_code,
            self.cwd,
            self._text_of,
            self._total_of,
        )
        self._shell_writes(step, effects)
        for read in effects.reads:
            path = self.key(read.path, read.cwd)
            self._observed(path, dict(read.lines), step, read.last if read.whole_file else None)
            model = self.ledger.file(path)
            model.known.update(read.lines)
            if read.whole_file:
                model.total = read.last
            if self.shell_reads:
                self.ledger.add_view(path, step.id, read.first, read.last, strict=False)
        if self.t.persistent_shell and effects.cwd_after and not step.cwd_after:
            self.cwd = effects.cwd_after

    def _search(self, step: Step, search: SearchCommand) -> None:
        """A search's printed lines, each a one-line view (a search writes nothing)."""
        for found in searched(search, step.observation, self._text_of):
            path = self.key(found.path, found.cwd)
            self._observed(path, dict(found.lines), step)
            self.ledger.file(path).known.update(found.lines)
            for number, _ in found.lines:
                self.ledger.add_search_line(path, step.id, number)

    def _shell_writes(self, step: Step, effects: Effects) -> None:
        for write in effects.writes:
            self.audit.shell_writes += 1
            self._shell_write(step, write)
        for what in effects.unattributed:
            self.audit.unattributed_writes.append(f"step {step.id}: {what}")
        if effects.reverts_all_edits:
            # git stash/reset/checkout touch tracked files: not the ones the run created.
            tracked = sorted(self.edited - self.created)
            if tracked:
                self._count_unplaced(step, ", ".join(tracked), "git rewrote edited files")
            for path in tracked:
                self.ledger.invalidate(path, f"reverted by step {step.id} (git)")

    def _shell_write(self, step: Step, write: Write) -> None:
        path = self.key(write.path, write.cwd)
        reason = f"written by shell step {step.id}"
        self._edited(path, whole=write.kind == "whole")
        if write.kind == "whole":
            self.ledger.rewrite(path, write.lines, reason)
        elif write.kind == "append":
            self.ledger.append(path, list(write.lines) if write.lines is not None else 1, reason)
        elif write.kind == "patch" and write.patch is not None:
            for edit in write.patch.edits:
                self.ledger.replace(path, edit.first, edit.old_count, edit.new_lines, reason)
        elif write.kind == "sed":
            self._sed(step, path, write, reason)
        else:
            self._count_unplaced(step, path, write.why or "a shell write with unknown lines")
            self.ledger.invalidate(path, f"{reason}: {write.why or 'lines unknown'}")

    def _sed(self, step: Step, path: str, write: Write, reason: str) -> None:
        line_ops = [op for op in write.sed_ops if isinstance(op, Replace)]
        for op in write.sed_ops:
            if isinstance(op, Unknown) or (isinstance(op, Substitute) and op.changes_line_count):
                why = op.why if isinstance(op, Unknown) else "a substitution adding lines"
                self._count_unplaced(step, path, f"sed -i with {why}")
                self.ledger.invalidate(path, f"{reason}: sed edit not placed on lines")
                return
        for op in write.sed_ops:
            if isinstance(op, Substitute):
                if op.pattern is None and op.region is None:
                    self._count_unplaced(step, path, "sed -i with a pattern not understood")
                self.ledger.substitute(path, op.pattern, op.region, reason)
        # Addresses refer to the lines before the call: apply from the bottom up.
        for op in sorted(line_ops, key=lambda o: o.first, reverse=True):
            self.ledger.replace(path, op.first, op.old_count, list(op.new_lines), reason)


def interpret(transcript: Transcript, shell_reads: bool = False) -> RunAudit:
    return Interpreter(transcript, shell_reads).run()
