"""``fresh/checkEdit``'s decision: is the code an edit is about to change the code this
session last saw?

Pure functions over sources and assessed views; the engine gathers the inputs.

Every guard shipped by agents so far is per file (the file's mtime or hash moved since the
read), so it fires on a formatter's change three functions away and on the agent's own
previous edit. This one is per line, grouped by unit:

- **What the session knows** is a set of current line numbers (``Knowledge``): a line is
  known when one of the session's views (or its own writes, kept as views too: see
  ``carry_over``) showed exactly that text there. A view whose unit is ``fresh`` or
  ``moved`` knows all the unit's current lines; a ``changed`` unit is aligned line by
  line with what is there now (difflib), so its untouched lines stay known and only the
  lines an edit replaced, inserted or closed up over (a deletion) count as changed. So a
  whole-file read stays good for every function a formatter did not touch.
- **The region** (the lines of ``oldText``, a line range, or the whole file) maps to units
  as ``fresh/observe`` maps lines (``anchors.anchor_view``); a symbol unit is its whole
  current definition, so an edit to line 9 of ``Cart.total`` is checked against all of
  ``Cart.total``: a change to its line 10 since the read denies it, a change to another
  function does not.
- **The verdict** (``decide``): every line of every unit known: ``allow``/``known``. Else a
  unit holding a changed line: ``deny``/``changed`` (with the view it changed under, for
  ``changedBy`` and the diff); else ``deny``/``unseen``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Literal

from fresh_ls.core.model import ObservedUnit, UnitAssessment, View, ViewAssessment
from fresh_ls.core.projection import Entry, render
from fresh_ls.core.ranges import changed_span
from fresh_ls.core.sources import Source
from fresh_ls.core.staleness import unified_diff
from fresh_ls.core.text import split_lines

UnitState = Literal["known", "changed", "unseen"]


# -- the region -----------------------------------------------------------------------------


def locate_text(text: str, old_text: str) -> tuple[int, int] | Literal["missing", "ambiguous"]:
    """The lines ``old_text`` spans in ``text`` (the line of its first character through
    the line of its last), or why it cannot say: it does not occur, or occurs twice or more
    (an edit tool would not know which occurrence to replace either)."""
    at = text.find(old_text)
    if at < 0:
        return "missing"
    if text.find(old_text, at + 1) >= 0:
        return "ambiguous"
    first = text.count("\n", 0, at) + 1
    last = text.count("\n", 0, at + len(old_text) - 1) + 1
    return first, max(first, last)


def unit_extent(unit: ObservedUnit) -> tuple[int, int]:
    """The current lines a region unit stands for: a definition whole, else its lines."""
    if unit.kind == "symbol":
        return unit.def_first, unit.def_last
    return unit.obs_first, unit.obs_last


# -- what a session knows -------------------------------------------------------------------


@dataclass(slots=True)
class Evidence:
    """A view of the session under which some current lines changed."""

    view: View
    ua: UnitAssessment
    #: the current lines the unit's observed text was aligned with
    first: int
    last: int


@dataclass(slots=True)
class Knowledge:
    known: set[int] = field(default_factory=set)
    #: changed line -> the newest view it changed under
    changed: dict[int, Evidence] = field(default_factory=dict)


def _whole_definition(unit: ObservedUnit) -> bool:
    return unit.kind == "symbol" and (unit.obs_first, unit.obs_last) == (
        unit.def_first,
        unit.def_last,
    )


def _target(ua: UnitAssessment) -> tuple[int, int] | None:
    """The current lines to align the observed text with: the whole current definition
    when the view showed a whole definition (so lines added at its end count), the whole
    file for a file unit, else where the observed lines are now."""
    if ua.status not in ("fresh", "moved", "changed"):
        return None
    unit = ua.unit
    if (_whole_definition(unit) or unit.kind == "file") and ua.serve is not None:
        return ua.serve.first, ua.serve.last
    if ua.current is None:
        return None
    return ua.current.first, ua.current.last


def unit_lines(ua: UnitAssessment, source: Source) -> tuple[set[int], set[int]]:
    """(known, changed) current lines of one assessed view unit."""
    target = _target(ua)
    if target is None or target[1] < target[0]:
        return set(), set()
    first, last = target
    observed = split_lines(ua.unit.obs_text)
    now = source.lines[first - 1 : last]
    if observed == now:
        return set(range(first, last + 1)), set()
    known: set[int] = set()
    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=observed, b=now, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            known.update(range(first + j1, first + j2))
        elif tag == "delete":
            # Lines vanished between two current lines: both neighbours differ from what
            # the session saw around them.
            changed.update(n for n in (first + j1 - 1, first + j1) if first <= n <= last)
        else:
            changed.update(range(first + j1, first + j2))
    known -= changed
    return known, changed


def learn(assessments: list[ViewAssessment], source: Source) -> Knowledge:
    """What the session knows of ``source`` from these views of it (oldest first)."""
    out = Knowledge()
    for a in assessments:
        for ua in a.units:
            known, changed = unit_lines(ua, source)
            out.known |= known
            target = _target(ua)
            for line in changed:
                assert target is not None
                out.changed[line] = Evidence(a.view, ua, *target)
    return out


# -- the verdict ----------------------------------------------------------------------------


@dataclass(slots=True)
class UnitVerdict:
    unit: ObservedUnit
    first: int
    last: int
    state: UnitState
    evidence: Evidence | None = None


def decide(units: list[ObservedUnit], knowledge: Knowledge) -> list[UnitVerdict]:
    """Per region unit: known (every line), changed (a line changed under a view of the
    session), or unseen (a line no view of the session showed)."""
    out = []
    for unit in units:
        first, last = unit_extent(unit)
        lines = range(first, last + 1)
        missing = [n for n in lines if n not in knowledge.known]
        if not missing:
            out.append(UnitVerdict(unit, first, last, "known"))
            continue
        hits = [knowledge.changed[n] for n in missing if n in knowledge.changed]
        if hits:
            newest = max(hits, key=lambda e: e.view.seq)
            out.append(UnitVerdict(unit, first, last, "changed", newest))
        else:
            out.append(UnitVerdict(unit, first, last, "unseen"))
    return out


def reason_of(verdicts: list[UnitVerdict]) -> Literal["known", "changed", "unseen"]:
    """A changed unit says more than an unseen one (it carries a diff and an author)."""
    states = {v.state for v in verdicts}
    if "changed" in states:
        return "changed"
    if "unseen" in states:
        return "unseen"
    return "known"


def evidence_diff(path: str, evidence: Evidence, source: Source, first: int, last: int) -> str:
    """The diff from what the session saw to what is there, cut to the hunks that touch
    the region unit's lines ``first..last`` (a whole-file view's diff holds every change of
    the file; the agent needs the ones in the code it is editing)."""
    observed = split_lines(evidence.ua.unit.obs_text)
    now = source.lines[evidence.first - 1 : evidence.last]
    diff = unified_diff(path, evidence.ua.unit.obs_first, observed, evidence.first, now)
    return restrict_diff(diff, first, last)


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def restrict_diff(diff: str, first: int, last: int) -> str:
    """The headers and the hunks whose current side overlaps ``first..last`` (all of them
    when none does, so a diff is never emptied)."""
    lines = diff.splitlines(keepends=True)
    head = lines[:2]
    hunks: list[list[str]] = []
    for line in lines[2:]:
        if _HUNK.match(line) or not hunks:
            hunks.append([line])
        else:
            hunks[-1].append(line)
    kept = []
    for hunk in hunks:
        m = _HUNK.match(hunk[0])
        if m is None:
            continue
        at = int(m.group(1))
        count = int(m.group(2)) if m.group(2) is not None else 1
        lo, hi = (at, at + count - 1) if count else (at, at + 1)
        if lo <= last and first <= hi:
            kept.append(hunk)
    if not kept:
        return diff
    return "".join(head + [line for hunk in kept for line in hunk])


# -- a session's own writes -----------------------------------------------------------------


def carry_over(
    known_before: set[int],
    before: Source | None,
    after: Source,
    wrote: tuple[int, int] | None = None,
) -> set[int]:
    """The lines of ``after`` a writer knows once its write took ``before`` to ``after``:
    the lines it knew of ``before`` that the write left alone (at their new numbers), and
    every line the write changed (it wrote them). ``wrote``: the lines of ``after`` the
    writer says it wrote (``fresh/didWrite``'s ``firstLine``/``lastLine``); changed lines
    outside them are someone else's change it never saw, so it does not know them."""
    start, end_a, end_b = changed_span(before, after)
    shift = end_b - end_a
    out = {n for n in known_before if n <= start}
    out |= {n + shift for n in known_before if n > end_a}
    changed = range(start + 1, end_b + 1)
    if wrote is not None:
        changed = range(max(start + 1, wrote[0]), min(end_b, wrote[1]) + 1)
    out |= set(changed)
    return out


def runs(lines: set[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as contiguous (first, last) runs."""
    out: list[tuple[int, int]] = []
    for n in sorted(lines):
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


# -- the answer's text ----------------------------------------------------------------------


def outermost(verdicts: list[UnitVerdict]) -> list[UnitVerdict]:
    """The units not inside another one (a class line and a method line of that class
    map to both; the class's code holds the method's)."""
    return [
        v
        for v in verdicts
        if not any(
            o is not v
            and o.first <= v.first
            and v.last <= o.last
            and (o.first, o.last) != (v.first, v.last)
            for o in verdicts
        )
    ]


def framed_text(
    path: str, verdicts: list[UnitVerdict], source: Source, view_id: str
) -> tuple[str, int, int]:
    """The current code of the region's units framed like projection entries (header,
    LF, exactly the bytes it names), and the lines it spans (first, last), which the
    engine records as a view so a retry after reading it is allowed."""
    entries = []
    seen: set[tuple[int, int]] = set()
    for v in outermost(verdicts):
        if (v.first, v.last) in seen:
            continue
        seen.add((v.first, v.last))
        entries.append(
            Entry(
                unit_id=v.unit.unit_id,
                path=path,
                first_line=v.first,
                last_line=v.last,
                kind=v.unit.kind,
                text="".join(source.lines[v.first - 1 : v.last]),
                status="fresh",
                name=v.unit.name,
                symbol_kind=v.unit.symbol_kind,
                view_ids=[view_id],
            )
        )
    first = min(v.first for v in verdicts)
    last = max(v.last for v in verdicts)
    return render(entries), first, last
