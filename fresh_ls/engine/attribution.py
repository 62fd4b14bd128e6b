"""Who changed what: the author of each change the engine saw, for ``changedBy``.

This module is told; it never reads the disk and never asks the engine anything:

- ``saw_change``: a read of a file showed other content than the read before it did;
- ``claim``: a writer says it wrote a file (``session:<id>`` after a ``fresh/didWrite``,
  ``editor`` after a save);
- ``changed_by``: who made the last change to a unit's lines since its view was observed.

A claim and the change it explains arrive in either order. A ``fresh/didWrite`` usually
comes first (the engine reads the file for it and sees the change then: the change is the
claimer's), but the watcher can see the write before the notification arrives (the change
is recorded as ``outside``, and a claim within ``CLAIM_WINDOW_S`` takes it back), and a
claim can find nothing changed yet (it then waits that long for the next change).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from fresh_ls.core.model import LineRange, UnitAssessment, View
from fresh_ls.core.ranges import changed_lines
from fresh_ls.core.sources import Source

#: How long a ``fresh/didWrite`` or an editor save claims the next change of its file
#: (and the last one, when nobody claimed it and it was seen that recently).
CLAIM_WINDOW_S = 10.0
#: How many recent changes are remembered per file for ``changedBy``.
CHANGES_KEPT = 32

OUTSIDE = "outside"


@dataclass(slots=True, frozen=True)
class Change:
    """A change the engine saw: who made it and which lines (in the new text) it touched."""

    who: str  # "session:<id>" | "editor" | "outside"
    at: float
    #: The ``seq`` of the newest view observed before the change was seen: the change is
    #: news to the views with a ``seq`` up to this one, not to views observed after it.
    after_seq: int
    first: int
    last: int
    sha_after: str | None


@dataclass(slots=True, frozen=True)
class _Claim:
    who: str
    at: float


class Attribution:
    """The authors of the recent changes of every file, and the claims not yet matched."""

    def __init__(
        self, claim_window_s: float = CLAIM_WINDOW_S, changes_kept: int = CHANGES_KEPT
    ) -> None:
        self.claim_window_s = claim_window_s
        self.changes_kept = changes_kept
        self._changes: dict[str, list[Change]] = {}
        self._claims: dict[str, _Claim] = {}

    def saw_change(
        self,
        path: str,
        before: Source | None,
        after: Source | None,
        at: float,
        after_seq: int,
        by: str | None = None,
    ) -> Change:
        """``path`` went from ``before`` to ``after`` (None: missing or unreadable; a
        ``before`` of None counts the whole new text as changed), seen at ``at``.

        ``by`` names the author when the engine knows it (a claim made in the same moment
        as the read that saw the change). Otherwise a claim of the file made within the
        window takes it, and without one it is ``outside``. Either way the file's pending
        claim is used up: one claim explains one change.
        """
        claim = self._claims.pop(path, None)
        if by is None:
            recent = claim is not None and at - claim.at <= self.claim_window_s
            by = claim.who if claim is not None and recent else OUTSIDE
        first, last = changed_lines(before, after)
        change = Change(by, at, after_seq, first, last, after.sha256 if after else None)
        changes = self._changes.setdefault(path, [])
        changes.append(change)
        del changes[: -self.changes_kept]
        return change

    def claim(self, path: str, who: str, at: float) -> None:
        """``who`` wrote ``path``, and the read that followed saw no new change.

        The write was seen before then: when the last change of ``path`` was unclaimed
        (``outside``) and seen within the window, it becomes ``who``'s. Otherwise the write
        is not visible yet (or changed nothing), and the next change seen within the window
        is ``who``'s (``saw_change``).
        """
        changes = self._changes.get(path)
        last = changes[-1] if changes else None
        if last is not None and last.who == OUTSIDE and at - last.at <= self.claim_window_s:
            assert changes is not None
            changes[-1] = replace(last, who=who)
            self._claims.pop(path, None)
            return
        self._claims[path] = _Claim(who, at)

    def changed_by(self, session: str, view: View, ua: UnitAssessment) -> str | None:
        """Who made the last change seen since ``view`` to the lines of ``ua`` (the unit's
        current lines, else its observed ones): ``self`` for ``session`` itself; the last
        change to the file since the view when none touched those lines; None when no
        change was seen since the view."""
        return self.changed_by_each(session, view, (ua,))[0]

    def changed_by_each(
        self, session: str, view: View, units: Sequence[UnitAssessment]
    ) -> tuple[str | None, ...]:
        """``changed_by`` of each of ``units`` (a view's), the changes since the view
        gathered once: a ``fresh/stale`` of 520 views asks it of 2,300 units, nearly all of
        files with no change since their view."""
        changes = [c for c in self._changes.get(view.path, []) if c.after_seq >= view.seq]
        if not changes:
            return (None,) * len(units)
        return tuple([_last_of(session, changes, ua) for ua in units])

    def changes(self, path: str) -> list[Change]:
        """The remembered changes of ``path``, oldest first (a copy)."""
        return list(self._changes.get(path, []))


def _last_of(session: str, changes: list[Change], ua: UnitAssessment) -> str | None:
    """Of ``changes`` (since a view, oldest first: none empty), who made the last one to
    touch ``ua``'s lines, else the last one; ``self`` for ``session`` itself."""
    at = ua.current or LineRange(ua.unit.obs_first, ua.unit.obs_last)
    overlapping = [c for c in changes if c.first <= at.last + 1 and at.first <= c.last + 1]
    change = (overlapping or changes)[-1]
    if change.who == f"session:{session}":
        return "self"
    return change.who
