"""Definitions per file content, cached by content hash, reparsed incrementally.

Parsing is the expensive step (tens of milliseconds for a 5,000-line file), and most
requests ask about files that did not change, so definitions are cached by SHA-256 of the
bytes. When a file does change, the previous tree of the same path is edited with the one
span that differs (common prefix and suffix) and tree-sitter reparses only around it; the
same path serves editor edits and disk writes alike.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
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
    limit = min(len(old), len(new))
    start = 0
    # Compare in chunks first: a byte loop over a 200 KB file would dominate the reparse.
    chunk = 4096
    while start + chunk <= limit and old[start : start + chunk] == new[start : start + chunk]:
        start += chunk
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while (
        end_old - chunk >= start
        and end_new - chunk >= start
        and old[end_old - chunk : end_old] == new[end_new - chunk : end_new]
    ):
        end_old -= chunk
        end_new -= chunk
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
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

    def __init__(self, max_entries: int = 512) -> None:
        self._by_sha: OrderedDict[tuple[str, str], list[Definition] | None] = OrderedDict()
        #: Trees of recent contents (fewer than definitions: a tree weighs far more).
        self._trees: OrderedDict[tuple[str, str], tree_sitter.Tree] = OrderedDict()
        self._max_trees = 64
        #: Raw definitions of recent contents, the base of the next restricted extraction.
        self._raw: OrderedDict[tuple[str, str], list[RawDefinition]] = OrderedDict()
        self.restricted_extractions = 0
        self._last: dict[str, _LastTree] = {}
        self._max = max_entries
        self.full_parses = 0
        self.incremental_parses = 0

    def definitions(self, path: str, data: bytes, sha256: str) -> list[Definition] | None:
        """Definitions of ``data`` as the file ``path``; None when its language is unsupported
        or the text cannot be parsed into anything usable (whole-file units then)."""
        language = language_for_path(path)
        if language is None:
            return None
        key = (language, sha256)
        if key in self._by_sha:
            self._by_sha.move_to_end(key)
            tree_seen = self._trees.get(key)
            if tree_seen is not None:
                # The next edit of this path starts from this content (an undo, a revert),
                # not from whatever was parsed last, or the reparse spans both edits.
                self._last[path] = _LastTree(language, data, tree_seen, sha256)
            return self._by_sha[key]
        tree, reparse = self._parse(path, language, data, sha256)
        self._trees[key] = tree
        if len(self._trees) > self._max_trees:
            self._trees.popitem(last=False)
        raw = None
        if reparse is not None and reparse.key in self._raw:
            raw = self._raw_after_edit(language, tree, data, reparse)
        if raw is None:
            raw = collect_raw(language, tree, data)
        self._raw[key] = raw
        if len(self._raw) > self._max_trees:
            self._raw.popitem(last=False)
        root = tree.root_node
        defs: list[Definition] | None = build_definitions(raw)
        if root.type == "ERROR" or (root.has_error and not defs):
            defs = None
        self._by_sha[key] = defs
        if len(self._by_sha) > self._max:
            self._by_sha.popitem(last=False)
        return defs

    def _raw_after_edit(
        self, language: str, tree: tree_sitter.Tree, data: bytes, reparse: _Reparse
    ) -> list[RawDefinition]:
        """The definitions after an edit without querying the whole file again: the region
        tree-sitter says changed, widened to whole top-level nodes, is queried; definitions
        before it are kept and those after it shifted by the edit's byte and line deltas."""
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
        for r in self._raw[reparse.key]:
            if r.end <= lo:
                before.append(r)
            elif r.start >= hi - delta:
                after.append(
                    r._replace(
                        start=r.start + delta,
                        end=r.end + delta,
                        first_line=r.first_line + line_delta,
                        last_line=r.last_line + line_delta,
                    )
                )
        self.restricted_extractions += 1
        return before + collect_raw(language, tree, data, (lo, hi)) + after

    def _parse(
        self, path: str, language: str, data: bytes, sha256: str
    ) -> tuple[tree_sitter.Tree, _Reparse | None]:
        parser = get_parser(language)
        last = self._last.get(path)
        tree: tree_sitter.Tree
        reparse = None
        if last is not None and last.language == language:
            edit = single_edit(last.data, data)
            if edit is None:
                return last.tree, None
            # Edit a copy: trees in ``_trees`` must keep describing their own content.
            base = last.tree.copy()
            base.edit(
                start_byte=edit.start_byte,
                old_end_byte=edit.old_end_byte,
                new_end_byte=edit.new_end_byte,
                start_point=edit.start_point,
                old_end_point=edit.old_end_point,
                new_end_point=edit.new_end_point,
            )
            tree = parser.parse(data, base)
            reparse = _Reparse((language, last.sha256), edit, base)
            self.incremental_parses += 1
        else:
            tree = parser.parse(data)
            self.full_parses += 1
        self._last[path] = _LastTree(language, data, tree, sha256)
        return tree, reparse
