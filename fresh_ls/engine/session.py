"""One session's state, in one object, so forgetting a session is one operation.

Before this object a session's state stood in six maps of the engine, each keyed by the
session (views, ledgers, own writes, cached assessments, last statuses, plans), and a
``forget`` had to clear each: one was missed once. Now the engine holds
``sessions: dict[str, Session]`` and forgetting the whole session is ``sessions.pop``
(plus ``ViewStore.delete_session`` for what is on disk, one transaction).

Plans are the one thing a session makes that outlives it: the contract keeps a session's
16 newest plans for 30 minutes, and a harness may commit a plan it made just before it
compacted (forgot) the session, so ``fresh_ls.engine.plans`` keeps them by plan id.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fresh_ls import protocol as proto
from fresh_ls.core.ledger import Ledger
from fresh_ls.core.model import View, ViewAssessment
from fresh_ls.engine import wire

#: A cached assessment: the content it was made against (the source's SHA-256, or
#: ``!reason`` when the file could not be read), the view's sequence number, the assessment.
Assessed = tuple[str, int, ViewAssessment]


@dataclass(slots=True)
class StaleAnswer:
    """A view's entry in ``fresh/stale``'s answer, kept while what it was made of holds:
    the very assessment (a kept one is the same object while neither the view nor its
    file's content changed), whether an editor held the file dirty, and who changed each
    unit (a claim can move that without a change of content). Its JSON is made the first
    time it is sent."""

    assessment: ViewAssessment
    editor_dirty: bool
    changed_by: tuple[str | None, ...]
    view: proto.StaleView
    text: str | None = None

    def encoded(self) -> str:
        """The entry's JSON (``wire.stale_view_json``), made the first time it is asked."""
        if self.text is None:
            self.text = wire.stale_view_json(self.view)
        return self.text

    def holds(
        self, assessment: ViewAssessment, editor_dirty: bool, changed_by: tuple[str | None, ...]
    ) -> bool:
        """Whether this entry is still the one those would make."""
        return (
            self.assessment is assessment
            and self.editor_dirty == editor_dirty
            and self.changed_by == changed_by
        )


@dataclass(slots=True)
class Session:
    """Everything the engine knows of one session (its name is the contract's ``session``)."""

    name: str
    #: Its views by id (held in memory, written through to the store).
    views: dict[str, View] = field(default_factory=dict)
    #: Which refresh was sent after which tool result (``placement: anchored``); None until
    #: its first anchored projection.
    ledger: Ledger | None = None
    #: What it knows of each file from its own writes, by path: views that are never
    #: listed, projected or stored as views (``fresh/checkEdit`` counts them as seen).
    written: dict[str, list[View]] = field(default_factory=dict)
    #: Each view's last assessment, by view id (see ``Assessed``).
    assessed: dict[str, Assessed] = field(default_factory=dict)
    #: Each view's status as last told to listeners, by view id (``fresh/didInvalidate``
    #: goes out when it moves).
    last_status: dict[str, str] = field(default_factory=dict)
    #: Each view's last ``fresh/stale`` entry, by view id (see ``StaleAnswer``).
    stale: dict[str, StaleAnswer] = field(default_factory=dict)
    #: The files its views name, each once (``paths``), and its views oldest first
    #: (``in_order``); None when a view came or went since.
    _paths: tuple[str, ...] | None = field(default=None, repr=False)
    _in_order: tuple[View, ...] | None = field(default=None, repr=False)

    def holds_nothing(self) -> bool:
        """No view, no ledger, no writes: nothing to keep the session for."""
        return not self.views and self.ledger is None and not self.written

    def paths(self) -> tuple[str, ...]:
        """The files its views name, each once, in the order the views came: asked before
        each request (parse-ahead), so kept until a view comes or goes (``put_view``,
        ``drop_views``: the only ways its views change)."""
        if self._paths is None:
            self._paths = tuple(dict.fromkeys(v.path for v in self.views.values()))
        return self._paths

    def in_order(self) -> tuple[View, ...]:
        """Its views, oldest first (by sequence number): every request without ``viewIds``
        walks them, so the order is kept until a view comes or goes."""
        if self._in_order is None:
            self._in_order = tuple(sorted(self.views.values(), key=lambda v: v.seq))
        return self._in_order

    def drop_views(self, view_ids: list[str]) -> None:
        """These views go, with what was cached of them."""
        self._paths = self._in_order = None
        for v in view_ids:
            self.views.pop(v, None)
            self.assessed.pop(v, None)
            self.last_status.pop(v, None)
            self.stale.pop(v, None)

    def put_view(self, view: View) -> None:
        """Hold ``view`` (new, or in place of the view of the same id); what was cached of
        the view it replaces goes."""
        self._paths = self._in_order = None
        self.views[view.view_id] = view
        self.assessed.pop(view.view_id, None)
        self.stale.pop(view.view_id, None)

    def guard_views(self, rel: str) -> list[View]:
        """Its views of ``rel`` and what it wrote there, oldest first."""
        views = [v for v in self.views.values() if v.path == rel]
        views += self.written.get(rel, [])
        return sorted(views, key=lambda v: v.seq)
