"""Per-file bookkeeping of views and what the agent's edits did to them.

This is the staleness rule itself, kept apart from every format so it is stated once:
a view is a line range of a file that a tool showed; an edit replaces lines ``a..b`` with
``k`` lines; views overlapping ``a..b`` become stale, views entirely below shift by
``k - (b - a + 1)``. A pure insertion (no line replaced) makes stale only the views it lands
inside, i.e. between two lines the view showed, because their numbering no longer holds.
A view never becomes fresh again.

A search result (``grep -n``) is a sparse view: each line it printed is a one-line view of its
own, under the same rule, kept apart from the file views so the two are counted side by side.
A search line also records when it moved (lines added or removed above it): its text is
unchanged but the number the model was shown for it no longer holds.

Alongside the views, the ledger keeps the text of every line it has seen (from views, created
files and edits), so that later edits given as text (``str_replace``) can be placed on lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fresh_ls.toolcalls.lines import END


@dataclass
class View:
    id: int
    path: str
    first: int
    last: int
    strict: bool
    shown: tuple[int, int] = (0, 0)
    stale: bool = False
    stale_reason: str = ""
    search: bool = False  # one line a search printed, not a file view
    #: (search lines) the line is unchanged but no longer at the number the search printed
    moved: bool = False


@dataclass
class _UndoEntry:
    first: int
    old_count: int
    new_count: int
    old_known: dict[int, str]


@dataclass
class FileModel:
    known: dict[int, str] = field(default_factory=dict)
    total: int | None = None
    live: list[View] = field(default_factory=list)
    undo: list[_UndoEntry] = field(default_factory=list)


class Ledger:
    def __init__(self) -> None:
        self.files: dict[str, FileModel] = {}
        self.views: list[View] = []
        self.stale_strict: set[int] = set()
        self.stale_wide: set[int] = set()
        #: Every line a search printed, as a one-line view (in the order shown).
        self.search_lines: list[View] = []

    def file(self, path: str) -> FileModel:
        model = self.files.get(path)
        if model is None:
            model = self.files[path] = FileModel()
        return model

    # -- views -------------------------------------------------------------------------------

    def add_view(
        self,
        path: str,
        view_id: int,
        first: int,
        last: int,
        *,
        strict: bool,
        lines: dict[int, str] | None = None,
        total: int | None = None,
    ) -> View:
        model = self.file(path)
        if lines:
            model.known.update(lines)
        if total is not None:
            model.total = total
        last = max(first, last) if last < END else END
        view = View(view_id, path, first, last, strict, shown=(first, last))
        model.live.append(view)
        self.views.append(view)
        return view

    def add_search_line(self, path: str, view_id: int, number: int) -> View:
        """Line ``number`` of ``path`` as search result ``view_id`` printed it."""
        view = View(view_id, path, number, number, True, shown=(number, number), search=True)
        self.file(path).live.append(view)
        self.search_lines.append(view)
        return view

    def _mark(self, view: View, reason: str) -> None:
        view.stale = True
        view.stale_reason = reason
        if view.search:
            return
        self.stale_wide.add(view.id)
        if view.strict:
            self.stale_strict.add(view.id)

    def _sweep(self, model: FileModel) -> None:
        model.live = [v for v in model.live if not v.stale]

    # -- edits -------------------------------------------------------------------------------

    def replace(
        self,
        path: str,
        first: int,
        old_count: int,
        new_lines: list[str | None] | list[str] | int,
        reason: str,
    ) -> None:
        """Lines ``first .. first+old_count-1`` were replaced by ``new_lines``.

        ``new_lines`` is the new text (``None`` for a line whose text is unknown), or only how
        many lines there are. ``old_count == 0`` is an insertion before line ``first``.
        """
        model = self.file(path)
        new_count = new_lines if isinstance(new_lines, int) else len(new_lines)
        last_old = first + old_count - 1
        delta = new_count - old_count
        for view in model.live:
            if old_count > 0:
                hit = view.first <= last_old and view.last >= first
            else:
                hit = view.first < first <= view.last
            if hit:
                self._mark(view, reason)
            elif view.first > last_old:
                view.moved = view.moved or (view.search and delta != 0)
                view.first += delta
                view.last = view.last + delta if view.last < END else END
        self._sweep(model)
        removed = {n: t for n, t in model.known.items() if first <= n <= last_old}
        shifted: dict[int, str] = {}
        for number, text in model.known.items():
            if number < first:
                shifted[number] = text
            elif number > last_old:
                shifted[number + delta] = text
        if not isinstance(new_lines, int):
            for offset, new_text in enumerate(new_lines):
                if new_text is not None:
                    shifted[first + offset] = new_text
        model.known = shifted
        if model.total is not None:
            model.total += delta
        model.undo.append(_UndoEntry(first, old_count, new_count, removed))

    def undo(self, path: str, reason: str) -> bool:
        """Revert the last recorded edit of ``path``; False when there is none to revert."""
        model = self.file(path)
        if not model.undo:
            self.invalidate(path, reason)
            return False
        entry = model.undo.pop()
        restored = [entry.old_known.get(entry.first + i) for i in range(entry.old_count)]
        self.replace(path, entry.first, entry.new_count, restored, reason)
        model.undo.pop()  # the revert itself is not something to undo
        return True

    def invalidate(self, path: str, reason: str) -> None:
        """The file changed where we cannot tell: every view of it is stale."""
        model = self.file(path)
        for view in model.live:
            self._mark(view, reason)
        self._sweep(model)
        model.known = {}
        model.total = None
        model.undo = []

    def rewrite(self, path: str, new_lines: list[str] | None, reason: str) -> None:
        """The whole file was written anew (create, ``>`` redirection, ``cp`` onto it)."""
        self.invalidate(path, reason)
        if new_lines is not None:
            model = self.file(path)
            model.known = {i + 1: t for i, t in enumerate(new_lines)}
            model.total = len(new_lines)

    def append(self, path: str, count: int | list[str | None], reason: str) -> None:
        """Lines were added at the end (``>>``): only views running to the end are hit."""
        model = self.file(path)
        first = model.total + 1 if model.total is not None else END
        self.replace(path, first, 0, count, reason)
        if model.total is None:
            model.known = {n: t for n, t in model.known.items() if n < END}
        model.undo.clear()

    def substitute(
        self,
        path: str,
        pattern: re.Pattern[str] | None,
        region: tuple[int, int] | None,
        reason: str,
    ) -> None:
        """A line-preserving substitution (``sed -i s/../../``) over ``region`` or the file.

        Without a region or pattern we cannot tell which lines changed, so every view that
        overlaps the region is stale, unless the view's lines are all known and none of them
        matches ``pattern`` (then the substitution provably left them alone).
        """
        model = self.file(path)
        low, high = region if region else (1, END)
        for view in model.live:
            if view.last < low or view.first > high:
                continue
            span = range(max(view.first, low), min(view.last, high) + 1)
            if pattern is not None and view.last < END and self._untouched(model, span, pattern):
                continue
            self._mark(view, reason)
        self._sweep(model)
        model.known = {
            n: t
            for n, t in model.known.items()
            if not (low <= n <= high) or (pattern is not None and not pattern.search(t))
        }
        model.undo = []

    @staticmethod
    def _untouched(model: FileModel, span: range, pattern: re.Pattern[str]) -> bool:
        for number in span:
            text = model.known.get(number)
            if text is None or pattern.search(text):
                return False
        return True
