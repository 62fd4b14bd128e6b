"""Plain data shared by the core: what a view remembers, and what the core concludes about it.

These records are what the store persists (as JSON) and what the server turns into wire
results; keeping them free of behaviour lets every layer use them without importing another.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

UnitKind = Literal["symbol", "text", "file"]
ViewKind = Literal["read", "editResult"]

#: "Worst" as the contract orders it; a view's status is the worst of its units.
STATUS_ORDER: dict[str, int] = {
    "fresh": 0,
    "moved": 1,
    "changed": 2,
    "ambiguous": 3,
    "deleted": 4,
    "unreadable": 5,
}


def worst(statuses: list[str]) -> str:
    """The worst status of a list (``fresh`` for an empty one)."""
    return max(statuses, key=STATUS_ORDER.__getitem__, default="fresh")


@dataclass(slots=True)
class ObservedUnit:
    """One unit of a view, as it was when the view was observed.

    ``obs_first..obs_last`` are the view's own lines that map to this unit (blank lines
    outside any definition ride with the unit before them, so the units of a view tile its
    whole range and no observed line goes unchecked). ``def_first..def_last`` is the
    definition's extent at that time (for text and file units: the same as the observed
    lines). ``obs_text`` is what the agent saw for the observed lines.
    """

    unit_id: str
    kind: UnitKind
    obs_first: int
    obs_last: int
    obs_text: str
    def_first: int
    def_last: int
    name: str | None = None
    symbol_kind: str | None = None
    ordinal: int = 0
    same_name_count: int = 1
    context_before: str = ""
    context_after: str = ""
    #: the unit held the file's last line when observed, and its view reached the end of
    #: the file: lines added after it make it ``changed`` (PROTOCOL.md v1.3)
    at_end: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> ObservedUnit:
        return ObservedUnit(**data)


@dataclass(slots=True)
class View:
    """A tool result that put lines of a file into an agent's context."""

    session: str
    view_id: str
    path: str
    first_line: int
    last_line: int
    kind: ViewKind
    seq: int
    observed_text: str
    observed_sha256: str
    units: list[ObservedUnit] = field(default_factory=list)
    observed_at: float = 0.0
    #: the tool result as the model saw it, when the harness gave it (``fresh/observe``
    #: ``result``): what ``placement: anchored`` re-renders in place
    result: str | None = None
    #: a sparse view (``fresh/observe`` ``ranges``, the lines a search printed): its ranges,
    #: ascending; ``observed_text`` is their lines joined. None: the one range
    #: ``first_line..last_line``
    ranges: tuple[tuple[int, int], ...] | None = None

    def spans(self) -> tuple[tuple[int, int], ...]:
        """The line ranges the view showed."""
        return self.ranges if self.ranges is not None else ((self.first_line, self.last_line),)

    def shows(self, first: int, last: int) -> bool:
        """Whether the view showed every line of ``first..last``."""
        return any(a <= first and last <= b for a, b in self.spans())

    def lines_label(self) -> str:
        """``lines 3-9`` or, for a sparse view, ``lines 3, 10-12``."""
        if self.ranges is None:
            return f"lines {self.first_line}-{self.last_line}"
        return "lines " + ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in self.ranges)


@dataclass(slots=True, frozen=True)
class LineRange:
    first: int
    last: int


@dataclass(slots=True)
class UnitAssessment:
    """What the core concludes about one observed unit against the current source."""

    unit: ObservedUnit
    status: str
    #: where the observed lines are now (None for deleted, ambiguous, unreadable)
    current: LineRange | None
    #: what a projection serves for this unit: the whole current definition, the relocated
    #: text, or the whole file (None when there is nothing to serve)
    serve: LineRange | None
    diff: str | None = None


@dataclass(slots=True)
class ViewAssessment:
    view: View
    status: str
    units: list[UnitAssessment]
