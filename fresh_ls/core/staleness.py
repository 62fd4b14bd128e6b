"""Decide, per observed unit, whether what the agent saw still stands, and where it is now.

The verdicts follow the contract: ``fresh`` (same text, same lines), ``moved`` (same text,
other lines), ``changed`` (an edit overlaps the observed lines), ``deleted`` (file or
definition gone), ``ambiguous`` (several candidates, none can be chosen: the code is then
left out rather than guessed), ``unreadable``. Only the observed lines are compared, so an
edit elsewhere in the file never makes a view ``changed``.

Relocation: a symbol unit is found again by its dotted name (several candidates are told
apart by order, then by similarity to the observed text); a text unit by its exact text
and neighbours, then by fuzzy similarity (rapidfuzz) above a named threshold.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from fresh_ls.core.model import (
    LineRange,
    ObservedUnit,
    UnitAssessment,
    View,
    ViewAssessment,
    worst,
)
from fresh_ls.core.sources import Source
from fresh_ls.core.symbols import Definition
from fresh_ls.core.text import common_ends, split_lines

#: A text unit whose text is gone is found again only above this similarity (0-100,
#: rapidfuzz ``ratio`` over the unit with its neighbours); below, it counts as deleted.
TEXT_RELOCATE_MIN_SCORE = 75.0
#: Two candidates whose scores are this close are a tie: the unit becomes ambiguous.
TIE_MARGIN = 2.0
#: A definition whose name vanished is taken as renamed only above this similarity of
#: its observed lines to one other definition of the same kind.
RENAME_MIN_SCORE = 90.0
#: Fuzzy search is skipped for files with more candidate windows than this (exact search
#: still runs); beyond it a vanished text unit counts as deleted.
MAX_FUZZY_WINDOWS = 20000
#: What fuzzy matching may cost one view's assessment, in character pairs compared
#: (rapidfuzz ``ratio`` costs about the product of the two lengths; some 20 billion pairs
#: a second on one core). Without it one ``observe`` whose ``text`` is a 4 MiB line kept
#: the event loop, and so every client, busy for many seconds. A search that would exceed
#: it stops, and the unit gets the answer fuzzy matching could not improve on: a vanished
#: text unit is ``deleted``, a vanished name is not taken as a rename (``deleted``), and
#: same-named definitions it cannot tell apart are ``ambiguous``.
FUZZY_PAIR_BUDGET = 4_000_000_000


class FuzzyBudget:
    """The fuzzy matching one assessment may still do (see ``FUZZY_PAIR_BUDGET``)."""

    __slots__ = ("left",)

    def __init__(self, pairs: int = FUZZY_PAIR_BUDGET) -> None:
        self.left = pairs

    def spend(self, a: int, b: int) -> bool:
        """Take the cost of comparing texts of ``a`` and ``b`` characters; False (and
        nothing taken) when it no longer fits."""
        cost = a * b
        if cost > self.left:
            return False
        self.left -= cost
        return True


def _can_reach(a: int, b: int, cutoff: float) -> bool:
    """Whether ``ratio`` of texts of lengths ``a`` and ``b`` can reach ``cutoff`` at all
    (it is at most 200·min/(a+b)): texts of very different sizes are never compared."""
    return a + b == 0 or 200.0 * min(a, b) >= cutoff * (a + b)


def assess_view(
    view: View, source: Source | None, error_reason: str | None = None
) -> ViewAssessment:
    """All units of a view against the current source (None with ``error_reason`` when the
    file is ``missing`` or ``unreadable``)."""
    budget = FuzzyBudget()
    units = [assess_unit(view.path, u, source, error_reason, budget) for u in view.units]
    if source is not None:
        units = [_past_the_end(u, source) for u in units]
    status = worst([u.status for u in units])
    if status == "fresh" and source is not None:
        # Belt and braces for the one promise that matters most: a view whose observed
        # lines differ from the disk at the same place is never called fresh.
        current = "".join("".join(source.lines[a - 1 : b]) for a, b in view.spans())
        if current != view.observed_text:
            status = "changed"
    return ViewAssessment(view, status, units)


def _past_the_end(ua: UnitAssessment, source: Source) -> UnitAssessment:
    """A view that reached the end of the file told the model where the file ends: lines
    added after its last unit make that unit ``changed`` (PROTOCOL.md v1.3), its current
    lines and what a projection serves reaching to the new end, so the diff and the
    refresh show the added lines. A view that stopped before the end is never touched."""
    if not ua.unit.at_end or ua.current is None:
        return ua
    n = source.line_count
    if ua.status not in ("fresh", "moved", "changed") or ua.current.last >= n:
        return ua
    serve = ua.serve or ua.current
    return UnitAssessment(
        ua.unit,
        "changed",
        LineRange(ua.current.first, n),
        LineRange(serve.first, max(serve.last, n)),
    )


def assess_unit(
    path: str,
    unit: ObservedUnit,
    source: Source | None,
    error_reason: str | None = None,
    budget: FuzzyBudget | None = None,
) -> UnitAssessment:
    budget = budget if budget is not None else FuzzyBudget()
    if source is None:
        status = "unreadable" if error_reason == "unreadable" else "deleted"
        return UnitAssessment(unit, status, None, None)
    if unit.kind == "file":
        return _assess_file(path, unit, source)
    if unit.kind == "symbol":
        return _assess_symbol(path, unit, source, budget)
    return _assess_text(path, unit, source, budget)


# -- helpers -----------------------------------------------------------------------------


def _lines_at(source: Source, first: int, count: int) -> list[str] | None:
    if first < 1 or first - 1 + count > source.line_count:
        return None
    return source.lines[first - 1 : first - 1 + count]


def _find_exact(haystack: Sequence[str], needle: Sequence[str], offset: int = 0) -> list[int]:
    """1-based line numbers (plus ``offset``) where ``needle`` occurs in ``haystack``."""
    n = len(needle)
    if n == 0 or n > len(haystack):
        return []
    first = needle[0]
    hits = []
    for i, line in enumerate(haystack[: len(haystack) - n + 1]):
        if line == first and list(haystack[i : i + n]) == list(needle):
            hits.append(offset + i + 1)
    return hits


def _unchanged(status_line: int, unit: ObservedUnit, count: int) -> tuple[str, LineRange]:
    status = "fresh" if status_line == unit.obs_first else "moved"
    return status, LineRange(status_line, status_line + count - 1)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
#: Lines of context around each hunk (difflib's ``n``).
_CONTEXT = 3


def unified_diff(
    path: str, obs_first: int, observed: list[str], cur_first: int, current: list[str]
) -> str:
    """A unified diff whose headers name the path and both line ranges, and whose hunk
    numbers are line numbers of the file (difflib counts from the slice's start).

    The lines both sides share at their start and at their end, but the three next to
    what differs (the hunks' context), are left out before difflib looks: no hunk can
    hold them, and a whole-file view of 5,000 lines with one line changed took difflib
    about 10 ms to match them line by line (``find_longest_match``)."""
    obs_last = obs_first + len(observed) - 1
    cur_last = cur_first + len(current) - 1
    out = [
        f"--- {path} lines {obs_first}-{obs_last} (observed)\n",
        f"+++ {path} lines {cur_first}-{cur_last} (current)\n",
    ]
    head, tail = common_ends(observed, current)
    cut = max(0, head - _CONTEXT)
    keep = max(0, tail - _CONTEXT)
    if cut or keep:
        observed = observed[cut : len(observed) - keep]
        current = current[cut : len(current) - keep]
        obs_first += cut
        cur_first += cut
    body = difflib.unified_diff(observed, current, n=_CONTEXT, lineterm="")
    for i, line in enumerate(body):
        if i < 2:  # difflib's own ---/+++ lines
            continue
        m = _HUNK.match(line)
        if m:
            a, alen, b, blen = m.group(1), m.group(2), m.group(3), m.group(4)
            a_n = int(a) + obs_first - 1
            b_n = int(b) + cur_first - 1
            line = (
                f"@@ -{a_n}{',' + alen if alen is not None else ''} "
                f"+{b_n}{',' + blen if blen is not None else ''} @@"
            )
            out.append(line + "\n")
            continue
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def _changed(
    path: str, unit: ObservedUnit, source: Source, current: LineRange, serve: LineRange | None
) -> UnitAssessment:
    # The diff is made on demand (``diff_of``): a projection never shows it, and for a
    # whole-file view of a large file it costs more than everything else in the request.
    return UnitAssessment(unit, "changed", current, serve)


def diff_of(path: str, ua: UnitAssessment, source: Source | None) -> str | None:
    """The unified diff of a ``changed`` unit (None otherwise). Memoised on the assessment
    (which is cached per view and content), and returned: callers take the value."""
    if ua.status != "changed" or ua.current is None:
        return None
    if ua.diff is None:
        observed = split_lines(ua.unit.obs_text)
        now = source.lines[ua.current.first - 1 : ua.current.last] if source is not None else []
        ua.diff = unified_diff(path, ua.unit.obs_first, observed, ua.current.first, now)
    return ua.diff


def _map_inside(unit: ObservedUnit, block: list[str], block_first: int) -> LineRange | None:
    """Where the observed lines are now inside ``block`` (a definition's current lines).

    The observed lines are aligned together with the lines that stood around them, so an
    observed line edited in place maps to its new text, while lines deleted outright map to
    nothing (None: the caller then answers with the definition's extent, as the contract
    says for lines that vanished inside a definition that still exists).
    """
    before = split_lines(unit.context_before)
    observed = split_lines(unit.obs_text)
    after = split_lines(unit.context_after)
    if not observed or not block:
        return None
    lo, hi = len(before), len(before) + len(observed)
    sm = difflib.SequenceMatcher(a=before + observed + after, b=block, autojunk=False)
    hits: list[int] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "insert":
            if lo < i1 < hi:  # lines added between observed lines belong to them now
                hits.extend(range(j1, j2))
            continue
        start, end = max(i1, lo), min(i2, hi)
        if start >= end:
            continue
        if tag == "equal":
            hits.extend(range(j1 + start - i1, j1 + end - i1))
        elif tag == "replace":
            hits.extend(range(j1, j2))
    if not hits:
        return None
    return LineRange(block_first + min(hits), block_first + max(hits))


# -- file units --------------------------------------------------------------------------


def _assess_file(path: str, unit: ObservedUnit, source: Source) -> UnitAssessment:
    whole = LineRange(1, source.line_count)
    text = unit.obs_text
    if unit.obs_first == 1 and text.endswith("\n") and unit.obs_last == unit.def_last:
        # A view from line 1 whose text ends at a line's end: the file's first lines are
        # the observed ones exactly when its text starts with the observed text, and
        # nothing else is looked for (as below). A whole-file view of a 5,000-line file
        # was split into lines on every assessment after each edit of it.
        if source.text.startswith(text):
            status, at = _unchanged(1, unit, text.count("\n"))
            return UnitAssessment(unit, status, at, whole)
        if source.line_count == 0:
            return UnitAssessment(unit, "changed", LineRange(1, 0), whole)
        return _changed(path, unit, source, whole, whole)
    return _assess_file_lines(path, unit, source)


def _assess_file_lines(path: str, unit: ObservedUnit, source: Source) -> UnitAssessment:
    """A file unit judged line by line: the observed lines where they were, else, for a
    view of part of the file, the one place they stand now."""
    whole = LineRange(1, source.line_count)
    observed = split_lines(unit.obs_text)
    count = len(observed)
    if count == 0:
        # An empty observation: fresh while the file stays empty.
        if source.line_count == 0:
            return UnitAssessment(unit, "fresh", LineRange(1, 0), whole)
        return _changed(path, unit, source, whole, whole)
    if _lines_at(source, unit.obs_first, count) == observed:
        status, at = _unchanged(unit.obs_first, unit, count)
        return UnitAssessment(unit, status, at, whole)
    if unit.obs_first != 1 or unit.obs_last != unit.def_last:
        hits = _find_exact(source.lines, observed)
        if len(hits) == 1:
            status, at = _unchanged(hits[0], unit, count)
            return UnitAssessment(unit, status, at, whole)
    if source.line_count == 0:
        return UnitAssessment(unit, "changed", LineRange(1, 0), whole)
    return _changed(path, unit, source, whole, whole)


# -- symbol units ------------------------------------------------------------------------


def _choose_definition(
    unit: ObservedUnit, source: Source, budget: FuzzyBudget
) -> tuple[Definition | None, str]:
    """The current definition of a symbol unit, or None with ``deleted``/``ambiguous``."""
    defs = source.definitions or []
    same = [d for d in defs if d.name == unit.name and d.symbol_kind == unit.symbol_kind]
    observed = split_lines(unit.obs_text)
    offset = unit.obs_first - unit.def_first
    if len(same) == 1:
        return same[0], ""
    if len(same) > 1:
        # Exact text at the observed offset singles one out.
        exact = [
            d for d in same if _lines_at(source, d.first_line + offset, len(observed)) == observed
        ]
        if len(exact) == 1:
            return exact[0], ""
        # Same number of same-named definitions as when observed: order still holds.
        if len(same) == unit.same_name_count and unit.ordinal < len(same):
            return same[unit.ordinal], ""
        return _best_by_similarity(unit, source, same, TIE_MARGIN, 0.0, budget)
    # The name is gone: renamed, if one other definition of the kind is clearly it.
    kin = [d for d in defs if d.symbol_kind == unit.symbol_kind]
    if not kin or not unit.obs_text.strip():
        return None, "deleted"
    best, _ = _best_by_similarity(unit, source, kin, TIE_MARGIN, RENAME_MIN_SCORE, budget)
    return (best, "") if best is not None else (None, "deleted")


def _best_by_similarity(
    unit: ObservedUnit,
    source: Source,
    candidates: list[Definition],
    margin: float,
    floor: float,
    budget: FuzzyBudget,
) -> tuple[Definition | None, str]:
    from rapidfuzz import fuzz  # imported on the first fuzzy match, not at server start

    # Scores under ``floor - margin`` can neither win nor tie with a winner: they are not
    # computed (rapidfuzz's cutoff), and texts too different in size are not compared.
    cutoff = max(0.0, floor - margin)
    observed = unit.obs_text
    scored = []
    for d in candidates:
        text = "".join(source.lines[d.first_line - 1 : d.last_line])
        text = text[: max(len(observed) * 2, 1)]
        if not _can_reach(len(observed), len(text), cutoff):
            scored.append((0.0, d))
            continue
        if not budget.spend(len(observed), len(text)):
            # Too costly to compare: none can be chosen by similarity.
            return None, "deleted" if floor > 0 else "ambiguous"
        scored.append((fuzz.ratio(observed, text, score_cutoff=cutoff), d))
    scored.sort(key=lambda s: -s[0])
    if not scored or scored[0][0] < floor:
        return None, "deleted"
    if len(scored) > 1 and scored[0][0] - scored[1][0] < margin:
        return None, "ambiguous"
    return scored[0][1], ""


def _assess_symbol(
    path: str, unit: ObservedUnit, source: Source, budget: FuzzyBudget
) -> UnitAssessment:
    d, reason = _choose_definition(unit, source, budget)
    if d is None:
        return UnitAssessment(unit, reason, None, None)
    extent = LineRange(d.first_line, d.last_line)
    observed = split_lines(unit.obs_text)
    count = len(observed)
    offset = unit.obs_first - unit.def_first
    if _lines_at(source, d.first_line + offset, count) == observed:
        status, at = _unchanged(d.first_line + offset, unit, count)
        return UnitAssessment(unit, status, at, extent)
    block = source.lines[d.first_line - 1 : d.last_line]
    hits = _find_exact(block, observed, d.first_line - 1)
    if hits:
        nearest = min(hits, key=lambda h: abs(h - unit.obs_first))
        status, at = _unchanged(nearest, unit, count)
        return UnitAssessment(unit, status, at, extent)
    # Where what survives of the observed lines is; when nothing does, the contract says
    # the definition's extent.
    current = _map_inside(unit, block, d.first_line) or extent
    return _changed(path, unit, source, current, extent)


# -- text units --------------------------------------------------------------------------


def _assess_text(
    path: str, unit: ObservedUnit, source: Source, budget: FuzzyBudget
) -> UnitAssessment:
    observed = split_lines(unit.obs_text)
    count = len(observed)
    if _lines_at(source, unit.obs_first, count) == observed:
        status, at = _unchanged(unit.obs_first, unit, count)
        return UnitAssessment(unit, status, at, at)
    hits = _find_exact(source.lines, observed)
    if not unit.obs_text.strip():
        # Blank lines are everywhere: only their neighbours can say where they went.
        chosen = _by_context(unit, source, hits, count, need_evidence=True) if hits else None
        if chosen is not None:
            status, at = _unchanged(chosen, unit, count)
            return UnitAssessment(unit, status, at, at)
        hits = []
    if len(hits) == 1:
        status, at = _unchanged(hits[0], unit, count)
        return UnitAssessment(unit, status, at, at)
    if len(hits) > 1:
        chosen = _by_context(unit, source, hits, count)
        if chosen is None:
            return UnitAssessment(unit, "ambiguous", None, None)
        status, at = _unchanged(chosen, unit, count)
        return UnitAssessment(unit, status, at, at)
    found, reason = _fuzzy_window(unit, source, count, budget)
    if found is None:
        return UnitAssessment(unit, reason, None, None)
    return _changed(path, unit, source, found, found)


def _by_context(
    unit: ObservedUnit, source: Source, hits: list[int], count: int, need_evidence: bool = False
) -> int | None:
    """Among exact occurrences, the one whose neighbours match the observed neighbours best
    (None on a tie, or, with ``need_evidence``, when no neighbour matches at all)."""
    before = split_lines(unit.context_before)
    after = split_lines(unit.context_after)

    def score(at: int) -> int:
        # Blank neighbours are everywhere: only lines with code count as evidence.
        s = 0
        for k, line in enumerate(reversed(before), start=1):
            if line.strip() and at - k >= 1 and source.lines[at - k - 1] == line:
                s += 1
        for k, line in enumerate(after):
            idx = at + count - 1 + k
            if line.strip() and idx < source.line_count and source.lines[idx] == line:
                s += 1
        return s

    scored = sorted(((score(h), h) for h in hits), reverse=True)
    if need_evidence and scored[0][0] == 0:
        return None
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        return None
    return scored[0][1]


def _fuzzy_window(
    unit: ObservedUnit, source: Source, count: int, budget: FuzzyBudget
) -> tuple[LineRange | None, str]:
    """The window of ``count`` lines most like the observed text with its neighbours.

    Only windows whose size lets them reach the threshold are compared, and the sizes come
    from running sums of line lengths, so a window's text is built only when compared; the
    whole search stops at the assessment's ``budget`` (then the unit is ``deleted``)."""
    from rapidfuzz import fuzz  # imported on the first fuzzy match, not at server start

    n = source.line_count
    if n == 0 or count == 0:
        return None, "deleted"
    size = min(count, n)
    windows = n - size + 1
    if windows > MAX_FUZZY_WINDOWS:
        return None, "deleted"
    before, after = unit.context_before, unit.context_after
    nb, na = len(split_lines(before)), len(split_lines(after))
    target = before + unit.obs_text + after
    # A window scoring under this can neither be chosen nor tie with the chosen one.
    cutoff = TEXT_RELOCATE_MIN_SCORE - TIE_MARGIN
    starts = [0]
    for line in source.lines:
        starts.append(starts[-1] + len(line))
    scores: list[tuple[float, int]] = []
    for i in range(windows):
        lo = max(0, i - nb)
        hi = min(n, i + size + na)
        length = starts[hi] - starts[lo]
        if not _can_reach(len(target), length, cutoff):
            continue
        if not budget.spend(len(target), length):
            return None, "deleted"
        candidate = "".join(source.lines[lo:hi])
        scores.append((fuzz.ratio(target, candidate, score_cutoff=cutoff), i + 1))
    if not scores:
        return None, "deleted"
    scores.sort(key=lambda s: (-s[0], abs(s[1] - unit.obs_first)))
    best_score, best_at = scores[0]
    if best_score < TEXT_RELOCATE_MIN_SCORE:
        return None, "deleted"
    if (
        len(scores) > 1
        and best_score - scores[1][0] < TIE_MARGIN
        and abs(scores[1][1] - best_at) > size
    ):
        return None, "ambiguous"
    return LineRange(best_at, best_at + size - 1), ""
