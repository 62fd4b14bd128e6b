"""What an audit found, per model request and per run.

Kept as plain dataclasses so the library result (``audit_run``), the table and the JSON output
are the same numbers; the JSON layout is documented in ``docs/audit.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RequestAudit:
    """One model request.

    ``index`` is the 0-based position of the request among the run's model calls, in order.
    The request carried the results of tool calls ``0 .. after_steps - 1`` and produced the
    tool calls in ``steps``. View ids are the ids of the tool calls that produced the views.
    ``stale_wide`` includes ``stale_strict``.
    """

    index: int
    after_steps: int
    steps: tuple[int, ...]
    views_strict: int
    views_wide: int
    stale_strict: frozenset[int]
    stale_wide: frozenset[int]
    #: Lines printed by searches (``grep -n`` …) before the request, and of those the ones
    #: whose line the agent had changed by then; the ids of the search results holding them.
    search_lines: int = 0
    stale_search_lines: int = 0
    stale_searches: frozenset[int] = frozenset()
    #: By number: lines changed or moved (the file's line at the printed number differs).
    misnumbered_search_lines: int = 0


@dataclass(frozen=True)
class ViewRecord:
    """A view as shown: ``first..last`` of ``path`` (repository-relative when possible).

    ``last`` is ``END`` (2**40) for a view whose end is "the end of the file" at unknown
    length. ``stale_reason`` is empty while the view is fresh at the end of the run.
    """

    id: int
    path: str
    first: int
    last: int
    strict: bool
    stale_reason: str = ""


@dataclass(frozen=True)
class SearchRecord:
    """One search result: the lines it printed of one file (a search over several files is
    one record per file, with the same ``id``); ``stale`` the lines changed by the end."""

    id: int
    path: str
    lines: tuple[int, ...]
    stale: tuple[int, ...] = ()
    moved: tuple[int, ...] = ()  # unchanged lines now at other numbers (not in ``stale``)


@dataclass
class RunAudit:
    run: str
    path: str
    format: str
    shell_reads: bool
    requests: list[RequestAudit] = field(default_factory=list)
    views: list[ViewRecord] = field(default_factory=list)
    searches: list[SearchRecord] = field(default_factory=list)
    edits: int = 0
    failed_edits: int = 0
    # Edits applied without knowing their lines: every view of the file was marked stale.
    unplaced_edits: int = 0
    shell_writes: int = 0
    # Changes made outside the agent that later tool output proved (a re-read showing other
    # text on lines seen before); not among ``edits``, but applied to the views the same way.
    outside_changes: int = 0
    # Shell calls that may have written files we cannot name (not counted against any view).
    unattributed_writes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def views_strict(self) -> int:
        return sum(1 for v in self.views if v.strict)

    @property
    def views_wide(self) -> int:
        return len(self.views)

    @property
    def stale_requests_strict(self) -> int:
        return sum(1 for r in self.requests if r.stale_strict)

    @property
    def stale_requests_wide(self) -> int:
        return sum(1 for r in self.requests if r.stale_wide)

    @property
    def search_results(self) -> int:
        """Search calls that printed at least one line of a file."""
        return len({s.id for s in self.searches})

    @property
    def search_lines(self) -> int:
        return sum(len(s.lines) for s in self.searches)

    @property
    def stale_search_results(self) -> int:
        """Search calls with a printed line that went stale during the run."""
        return len({s.id for s in self.searches if s.stale})

    @property
    def stale_search_lines(self) -> int:
        return sum(len(s.stale) for s in self.searches)

    @property
    def stale_search_requests(self) -> int:
        """Requests that carried at least one stale search line."""
        return sum(1 for r in self.requests if r.stale_search_lines)

    @property
    def misnumbered_search_results(self) -> int:
        """Search calls with a printed line changed or moved during the run."""
        return len({s.id for s in self.searches if s.stale or s.moved})

    @property
    def misnumbered_search_lines(self) -> int:
        return sum(len(s.stale) + len(s.moved) for s in self.searches)

    @property
    def misnumbered_search_requests(self) -> int:
        return sum(1 for r in self.requests if r.misnumbered_search_lines)

    @property
    def last_stale_strict(self) -> bool:
        return bool(self.requests and self.requests[-1].stale_strict)

    @property
    def last_stale_wide(self) -> bool:
        return bool(self.requests and self.requests[-1].stale_wide)


@dataclass
class Problem:
    """A file or record that could not be audited, and why."""

    path: str
    error: str


@dataclass
class Totals:
    runs: int = 0
    requests: int = 0
    runs_stale_strict: int = 0
    runs_stale_wide: int = 0
    runs_last_stale_strict: int = 0
    runs_last_stale_wide: int = 0
    stale_requests_strict: int = 0
    stale_requests_wide: int = 0
    search_results: int = 0
    stale_search_results: int = 0
    search_lines: int = 0
    stale_search_lines: int = 0
    stale_search_requests: int = 0
    misnumbered_search_results: int = 0
    misnumbered_search_lines: int = 0
    misnumbered_search_requests: int = 0

    @classmethod
    def of(cls, runs: list[RunAudit]) -> Totals:
        totals = cls()
        for run in runs:
            totals.runs += 1
            totals.requests += len(run.requests)
            totals.runs_stale_strict += run.stale_requests_strict > 0
            totals.runs_stale_wide += run.stale_requests_wide > 0
            totals.runs_last_stale_strict += run.last_stale_strict
            totals.runs_last_stale_wide += run.last_stale_wide
            for name in _SUMMED:
                setattr(totals, name, getattr(totals, name) + getattr(run, name))
        return totals


#: The totals that are the sum of the runs' counts of the same name.
_SUMMED = (
    "stale_requests_strict",
    "stale_requests_wide",
    "search_results",
    "stale_search_results",
    "search_lines",
    "stale_search_lines",
    "stale_search_requests",
    "misnumbered_search_results",
    "misnumbered_search_lines",
    "misnumbered_search_requests",
)
