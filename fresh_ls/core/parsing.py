"""Definitions per file content, cached by content hash, reparsed incrementally.

Parsing is the expensive step (tens of milliseconds for a 5,000-line file), and most
requests ask about files that did not change, so definitions are cached by SHA-256 of the
bytes. When a file does change, the previous tree of the same path is edited with the one
span that differs (common prefix and suffix) and tree-sitter reparses only around it; the
same path serves editor edits and disk writes alike.

A parse has a time budget (``PARSE_BUDGET_S``): tree-sitter-python takes time quadratic in
the length of a run of comment lines after an indented block (its external scanner looks
past every following comment line at each one; see docs/security.md), so one crafted file
of 120 KB took 12 s. A parse over the budget is cancelled and the content is served
without definitions (one ``file`` unit). The index is safe to use from several threads,
so big files can be parsed off the event loop (``SourceTable.prepare``): each thread has
its own parsers, and the caches are only touched under a lock, never during a parse.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on the first parse (fresh_ls.core.languages)
    import tree_sitter

from fresh_ls.core.languages import get_parser, language_for_path
from fresh_ls.core.symbols import (
    Definition,
    RawDefinition,
    build_definitions,
    collect_raw,
)
from fresh_ls.core.text import common_ends

#: The longest one parse may take (seconds); content whose parse takes longer is served
#: as one ``file`` unit. A normal 100,000-line file parses in well under a second.
PARSE_BUDGET_S = 2.0
#: How much of the source the parser is handed at a time (a parse by callback is the one
#: tree-sitter can cancel, and it lets other threads run between chunks).
_PARSE_CHUNK = 1 << 18


def parse_within(
    parser: tree_sitter.Parser,
    data: bytes,
    old_tree: tree_sitter.Tree | None,
    budget_s: float,
) -> tree_sitter.Tree | None:
    """``data`` parsed (incrementally from ``old_tree`` when given), or None when the
    parse took longer than ``budget_s`` and was cancelled."""
    deadline = time.monotonic() + budget_s

    def read(offset: int, _point: object) -> bytes:
        return data[offset : offset + _PARSE_CHUNK]

    def over_budget(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline

    try:
        if old_tree is None:
            return parser.parse(read, progress_callback=over_budget)
        return parser.parse(read, old_tree, progress_callback=over_budget)
    except ValueError:  # "Parsing failed": cancelled
        # A cancelled parser resumes the cancelled parse on its next call unless reset.
        parser.reset()
        return None


@dataclass(frozen=True, slots=True)
class ByteEdit:
    """The arguments of ``Tree.edit``: one replaced span, in bytes and (row, column) points."""

    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: tuple[int, int]
    old_end_point: tuple[int, int]
    new_end_point: tuple[int, int]


@dataclass(slots=True)
class _LastTree:
    language: str
    data: bytes
    tree: tree_sitter.Tree
    sha256: str


@dataclass(slots=True)
class _Reparse:
    """How the new tree came from the last one: the edit, and the edited old tree."""

    key: tuple[str, str]
    edit: ByteEdit
    old_tree: tree_sitter.Tree


def _point(data: bytes, offset: int) -> tuple[int, int]:
    """(row, byte column) of a byte offset, as tree-sitter counts them."""
    row = data.count(b"\n", 0, offset)
    line_start = data.rfind(b"\n", 0, offset) + 1
    return row, offset - line_start


def single_edit(old: bytes, new: bytes) -> ByteEdit | None:
    """The one span that turns ``old`` into ``new`` (None when they are equal)."""
    if old == new:
        return None
    head, tail = common_ends(old, new)  # a byte loop over 200 KB would cost a millisecond
    start, end_old, end_new = head, len(old) - tail, len(new) - tail
    return ByteEdit(
        start_byte=start,
        old_end_byte=end_old,
        new_end_byte=end_new,
        start_point=_point(old, start),
        old_end_point=_point(old, end_old),
        new_end_point=_point(new, end_new),
    )


class DefinitionIndex:
    """Definitions of file contents, by content hash, with incremental reparse per path."""

    def __init__(self, max_entries: int = 512, budget_s: float = PARSE_BUDGET_S) -> None:
        self._by_sha: OrderedDict[tuple[str, str], list[Definition] | None] = OrderedDict()
        #: Trees of recent contents (fewer than definitions: a tree weighs far more).
        self._trees: OrderedDict[tuple[str, str], tree_sitter.Tree] = OrderedDict()
        self._max_trees = 64
        #: Raw definitions of recent contents, the base of the next restricted extraction.
        self._raw: OrderedDict[tuple[str, str], list[RawDefinition]] = OrderedDict()
        self.restricted_extractions = 0
        self._last: dict[str, _LastTree] = {}
        self._max = max_entries
        self.budget_s = budget_s
        self.full_parses = 0
        self.incremental_parses = 0
        #: Parses cancelled for taking longer than the budget.
        self.over_budget = 0
        self._lock = threading.Lock()

    def has(self, path: str, sha256: str) -> bool:
        """Whether the definitions of this content are known (no parse needed)."""
        language = language_for_path(path)
        with self._lock:
            return language is None or (language, sha256) in self._by_sha

    def definitions(self, path: str, data: bytes, sha256: str) -> list[Definition] | None:
        """Definitions of ``data`` as the file ``path``; None when its language is unsupported,
        the text cannot be parsed into anything usable, or its parse exceeded the budget
        (whole-file units then)."""
        language = language_for_path(path)
        if language is None:
            return None
        key = (language, sha256)
        with self._lock:
            if key in self._by_sha:
                self._by_sha.move_to_end(key)
                tree_seen = self._trees.get(key)
                if tree_seen is not None:
                    # The next edit of this path starts from this content (an undo, a
                    # revert), not from whatever was parsed last, or the reparse spans both.
                    self._last[path] = _LastTree(language, data, tree_seen, sha256)
                return self._by_sha[key]
            last = self._last.get(path)
        parsed = self._parse(language, data, last)
        if parsed is None:
            with self._lock:
                self.over_budget += 1
                self._remember(key, None)
            return None
        tree, reparse = parsed
        with self._lock:
            base_raw = self._raw.get(reparse.key) if reparse is not None else None
            base_defs = self._by_sha.get(reparse.key) if reparse is not None else None
        raw = None
        kept: list[Definition] = []
        if reparse is not None and base_raw is not None:
            raw, before = self._raw_after_edit(language, tree, data, reparse, base_raw)
            if base_defs is not None and len(base_defs) == len(base_raw):
                kept = base_defs[:before]  # the same definitions, the same objects
        if raw is None:
            raw = collect_raw(language, tree, data)
        root = tree.root_node
        defs: list[Definition] | None = build_definitions(raw, kept)
        if root.type == "ERROR" or (root.has_error and not defs):
            defs = None
        with self._lock:
            if reparse is None:
                self.full_parses += 1
            else:
                self.incremental_parses += 1
                self.restricted_extractions += base_raw is not None
            self._last[path] = _LastTree(language, data, tree, sha256)
            self._trees[key] = tree
            if len(self._trees) > self._max_trees:
                self._trees.popitem(last=False)
            self._raw[key] = raw
            if len(self._raw) > self._max_trees:
                self._raw.popitem(last=False)
            self._remember(key, defs)
        return defs

    def _remember(self, key: tuple[str, str], defs: list[Definition] | None) -> None:
        self._by_sha[key] = defs
        if len(self._by_sha) > self._max:
            self._by_sha.popitem(last=False)

    def _raw_after_edit(
        self,
        language: str,
        tree: tree_sitter.Tree,
        data: bytes,
        reparse: _Reparse,
        base_raw: list[RawDefinition],
    ) -> tuple[list[RawDefinition], int]:
        """The definitions after an edit without querying the whole file again: the region
        tree-sitter says changed, widened to whole top-level nodes, is queried; definitions
        before it are kept and those after it shifted by the edit's byte and line deltas.
        Also how many were kept before it: they lead the list, as they led ``base_raw``
        (both are in ``build_definitions``'s order), and every one of them ends before
        the region starts."""
        edit = reparse.edit
        lo, hi = edit.start_byte, edit.new_end_byte
        for changed in reparse.old_tree.changed_ranges(tree):
            lo, hi = min(lo, changed.start_byte), max(hi, changed.end_byte)
        for child in tree.root_node.children:
            if child.start_byte <= hi and child.end_byte >= lo:
                lo, hi = min(lo, child.start_byte), max(hi, child.end_byte)
        delta = edit.new_end_byte - edit.old_end_byte
        line_delta = edit.new_end_point[0] - edit.old_end_point[0]
        before, after = [], []
        for r in base_raw:
            if r.end <= lo:
                before.append(r)
            elif r.start >= hi - delta:
                # built directly: ``_replace`` costs four times as much, per definition
                after.append(
                    RawDefinition(r.start + delta, r.end + delta, r.pattern, r.kind, r.own,
                                  r.first_line + line_delta, r.last_line + line_delta)
                )  # fmt: skip
        return before + collect_raw(language, tree, data, (lo, hi)) + after, len(before)

    def _parse(
        self, language: str, data: bytes, last: _LastTree | None
    ) -> tuple[tree_sitter.Tree, _Reparse | None] | None:
        """The tree of ``data`` (from ``last``, the path's previous tree, when there is
        one) and how it came from it; None when the parse exceeded the budget."""
        parser = get_parser(language)
        if last is None or last.language != language:
            tree = parse_within(parser, data, None, self.budget_s)
            return None if tree is None else (tree, None)
        edit = single_edit(last.data, data)
        if edit is None:
            return last.tree, None
        # Edit a copy: trees in ``_trees`` must keep describing their own content.
        base = last.tree.copy()
        base.edit(**asdict(edit))  # ByteEdit's fields are Tree.edit's keywords
        tree = parse_within(parser, data, base, self.budget_s)
        return None if tree is None else (tree, _Reparse((language, last.sha256), edit, base))
