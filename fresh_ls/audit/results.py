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


@dataclass
class RunAudit:
    run: str
    path: str
    format: str
    shell_reads: bool
    requests: list[RequestAudit] = field(default_factory=list)
    views: list[ViewRecord] = field(default_factory=list)
    edits: int = 0
    failed_edits: int = 0
    # Edits applied without knowing their lines: every view of the file was marked stale.
    unplaced_edits: int = 0
    shell_writes: int = 0
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
            totals.stale_requests_strict += run.stale_requests_strict
            totals.stale_requests_wide += run.stale_requests_wide
        return totals
