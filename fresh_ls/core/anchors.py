"""Turn a view (a file and a line range) into units anchored to the code's structure.

A line inside a definition belongs to the innermost definition holding it; a line outside
every definition belongs to a ``text`` unit found again later by its own text and its
neighbours; a whole-file read, or a file the index cannot parse, is one ``file`` unit.
Every observed line belongs to exactly one unit's span, blank lines outside definitions
included (they join the text run they stand in, or form one of their own between two
definitions), so a blank line that turns into code still makes the view ``changed``.
"""

from __future__ import annotations

import hashlib

from fresh_ls.core.model import ObservedUnit
from fresh_ls.core.sources import Source
from fresh_ls.core.symbols import innermost_at_line

#: Lines of context kept on each side of a text unit, to tell repeated text apart.
CONTEXT_LINES = 2


def unit_id(*parts: object) -> str:
    """A deterministic id: the same unit observed by two views gets the same id, so one
    projection entry serves both, and its label stays put while the code moves."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()
    return "u-" + digest[:10]


def label_for(unit_id_: str) -> str:
    """The label an entry is found under in the rendered projection (``E-3f9a1c``)."""
    return "E-" + unit_id_.removeprefix("u-")[:6]


def file_unit(
    path: str, first: int, last: int, observed: list[str], source: Source | None
) -> ObservedUnit:
    n = source.line_count if source is not None else last
    return ObservedUnit(
        unit_id=unit_id(path, "file"),
        kind="file",
        obs_first=first,
        obs_last=last,
        obs_text="".join(observed),
        def_first=1,
        def_last=n,
    )


def anchor_view(
    path: str, source: Source, first: int, last: int, observed: list[str], whole_file: bool
) -> list[ObservedUnit]:
    """Units of the view ``first..last`` of ``source``; ``observed`` holds what the agent saw
    for those lines (one string per line, ending kept), which may differ from the source."""
    units = _anchored_units(path, source, first, last, observed, whole_file)
    if units and source.line_count and last >= source.line_count:
        units[-1].at_end = True  # the view showed where the file ends (PROTOCOL.md v1.3)
    return units


def _anchored_units(
    path: str, source: Source, first: int, last: int, observed: list[str], whole_file: bool
) -> list[ObservedUnit]:
    if whole_file or source.definitions is None or last < first:
        return [file_unit(path, first, last, observed, source)]
    defs = source.definitions
    # Group the view's lines by owner: a definition index, or a run of lines outside any
    # definition (blank ones included: every observed line belongs to some unit).
    groups: dict[object, list[int]] = {}
    order: list[object] = []
    text_run = 0
    prev_key: object = None
    for line in range(first, last + 1):
        owner = innermost_at_line(defs, line)
        if owner is None:
            if not (isinstance(prev_key, tuple) and prev_key[0] == "text"):
                text_run += 1
            key: object = ("text", text_run)
        else:
            key = owner
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(line)
        prev_key = key
    units: list[ObservedUnit] = []
    for key in order:
        lines = groups[key]
        lo, hi = min(lines), max(lines)
        if isinstance(key, tuple):
            units.append(_text_unit(path, source, lo, hi, observed, first))
            continue
        assert isinstance(key, int)
        d = defs[key]
        same = sum(1 for o in defs if o.name == d.name and o.symbol_kind == d.symbol_kind)
        before, after = _context(source, lo, hi)
        units.append(
            ObservedUnit(
                unit_id=unit_id(path, "symbol", d.name, d.symbol_kind, d.ordinal),
                kind="symbol",
                obs_first=lo,
                obs_last=hi,
                obs_text="".join(observed[lo - first : hi - first + 1]),
                def_first=d.first_line,
                def_last=d.last_line,
                name=d.name,
                symbol_kind=d.symbol_kind,
                ordinal=d.ordinal,
                same_name_count=same,
                context_before=before,
                context_after=after,
            )
        )
    return units


def _context(source: Source, lo: int, hi: int) -> tuple[str, str]:
    """The lines just around ``lo..hi``: they anchor the observed lines when those change."""
    before = "".join(source.lines[max(0, lo - 1 - CONTEXT_LINES) : lo - 1])
    after = "".join(source.lines[hi : hi + CONTEXT_LINES])
    return before, after


def _text_unit(
    path: str, source: Source, lo: int, hi: int, observed: list[str], view_first: int
) -> ObservedUnit:
    text = "".join(observed[lo - view_first : hi - view_first + 1])
    before, after = _context(source, lo, hi)
    return ObservedUnit(
        unit_id=unit_id(path, "text", lo, hashlib.sha256(text.encode()).hexdigest()[:16]),
        kind="text",
        obs_first=lo,
        obs_last=hi,
        obs_text=text,
        def_first=lo,
        def_last=hi,
        context_before=before,
        context_after=after,
    )
