"""``fresh/project`` with ``placement: anchored``: which views are patched in place, which
are replaced by markers, and what the refreshes carry (``fresh_ls.core.ledger``).

Per view, in the order the numbers in docs/performance.md rewarded:

1. A view still fresh is left in place, as under ``placement: end``.
2. A view patched in place earlier and still fresh keeps its patch: the re-rendered tool
   result stands where the old one stood, byte for byte.
3. A view changed for the first time whose tool result the harness gave (``fresh/observe``
   ``result``) and that ``core.rerender`` can align is patched: its result is printed again
   from the current lines of the same range, the way the tool would print it now, and the
   view is observed anew with those lines (what the model now sees). The cache breaks at
   its first changed line, not at its start, and its unchanged lines need no second copy.
4. Every other replaced view (changed again after a patch, no result, not alignable, a
   deleted file) gets a marker, and its units go to the refreshes; a marker, once made,
   stays (``core.ledger``): a view edited again and again is moved once, then refreshed
   near the end. A marker keeps the result's own head, up to the first unit that changed,
   when the result can be aligned (the cache still serves it, and it needs no copy).
5. When a request changes a result (the cache breaks there), every view after it is moved
   to a refresh too: its bytes are sent again in this request anyway, and if it changes
   later the cache breaks near the end, not at its old place ("batch what can be batched").
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Protocol

from fresh_ls import protocol as proto
from fresh_ls.core.anchors import anchor_view
from fresh_ls.core.ledger import Ledger, SentEntry, place, shown_elsewhere, without_units
from fresh_ls.core.model import View, ViewAssessment
from fresh_ls.core.projection import Projection
from fresh_ls.core.rerender import Span, align, rerender
from fresh_ls.core.sources import Source
from fresh_ls.core.text import sha256_text, split_lines
from fresh_ls.engine import wire


class Ground(Protocol):
    """All anchored placement asks of the engine (which implements it): this module never
    sees the engine itself, its sessions or its caches."""

    def source(self, path: str) -> Source | None:
        """The file as the disk holds it at this moment (None: missing or unreadable)."""

    def assess(self, view: View) -> ViewAssessment:
        """The view against the disk of this moment (cached by the engine)."""

    def renew(self, view: View) -> None:
        """Hold ``view`` in place of the view of the same id (a patched result shows other
        lines now); the engine stores it once the answer is made."""

    def editor_dirty(self, path: str) -> bool:
        """Does an editor hold a buffer of ``path`` that differs from the disk?"""

    def plan(
        self, session: str, assessed: list[ViewAssessment], budget_bytes: int, view_ids: list[str]
    ) -> Projection:
        """The engine's one projection pipeline (sources, dirty buffers, the cached plan)
        over exactly these views, each view's own lines (``own_lines``)."""

    def keep_plan(
        self, session: str, entries: list[tuple[str, int, int, str]], kept: list[str]
    ) -> str:
        """Keep a plan for ``fresh/commit``; its id."""


#: Statuses a patch can show honestly: the lines of the range exist and can be read.
PATCHABLE = ("changed", "moved")
#: Patch in place only when the bytes behind the view are at most this share of the copy a
#: marker would send (0, 0.1, 0.25, 0.5, 1, 2 and 4 measured on the recorded runs: 0.25 cost
#: least once unchanged heads were kept and results behind a break moved; see performance.md).
PATCH_BEHIND_SHARE = 0.25


def project(
    ground: Ground,
    session: str,
    ledger: Ledger,
    views: list[View],
    results: list[str],
    budget_bytes: int,
    policy: str,
    bytes_after: list[int] | None = None,
) -> tuple[proto.ProjectResult, list[View]]:
    """The anchored projection of ``views`` (the session's, or those its ``viewIds``
    named), and the views it patched (renewed in ``ground``, to be stored by the caller);
    ``ledger`` is changed in place (the caller stores it too)."""
    assessed = [ground.assess(v) for v in views]
    patches: dict[str, str] = {}
    for a in assessed:  # 2: patches that still hold; the others go (the view moves on)
        text = ledger.patched.get(a.view.view_id)
        if text is not None:
            if a.status == "fresh":
                patches[a.view.view_id] = text
            else:
                del ledger.patched[a.view.view_id]
    for a in assessed:  # cut heads that no longer hold: the whole result gets a marker
        cut = ledger.cuts.get(a.view.view_id)
        if cut is not None and not _head_holds(a, cut):
            del ledger.cuts[a.view.view_id]
            ledger.markers.pop(a.view.view_id, None)
    renewed: list[View] = []
    sticky = set(ledger.markers)
    behind = dict(zip(results, bytes_after or [], strict=False))
    chosen: list[ViewAssessment] = []
    for a in assessed:
        vid = a.view.view_id
        if vid in patches:
            continue
        if not (policy == "all" or a.status != "fresh" or vid in sticky):
            continue  # 1
        patched = _patch(ground, ledger, a, behind.get(vid)) if vid not in sticky else None
        if patched is not None:  # 3
            text, view = patched
            patches[vid] = ledger.patched[vid] = text
            ledger.patched_ever.add(vid)
            renewed.append(view)
            continue
        if vid not in sticky and vid not in ledger.cut_ever:
            cut = _cut_line(a)
            if cut is not None and _head(a.view, cut) is not None:
                ledger.cuts[vid] = cut
                ledger.cut_ever.add(vid)
        chosen.append(a)  # 4
    # 5: the cache breaks at the first result changed now; every result after it is sent
    # again anyway, so a view there moves to a refresh at no extra cost, and a later change
    # to it breaks the cache near the end instead of at its old place
    where = {r: i for i, r in enumerate(results)}
    fresh_now = [a.view.view_id for a in chosen if a.view.view_id not in sticky]
    fresh_now += [v.view_id for v in renewed]
    if fresh_now:
        first = min((where[v] for v in fresh_now if v in where), default=None)
        if first is not None:
            taken = {a.view.view_id for a in chosen} | set(patches)
            for a in assessed:
                vid = a.view.view_id
                if vid not in taken and where.get(vid, -1) > first:
                    chosen.append(a)
    anew = {v.view_id: v for v in renewed}
    views = [anew.get(v.view_id, v) for v in views]  # the patched ones observed anew
    heads: dict[str, str] = {}
    head_entries: list[tuple[str, int, int, str]] = []
    for a in chosen:
        cut = ledger.cuts.get(a.view.view_id)
        head = _head(a.view, cut) if cut is not None else None
        if cut is not None and head is not None:
            heads[a.view.view_id] = head
            shown = "".join(split_lines(a.view.observed_text)[: cut - a.view.first_line])
            head_entries.append((a.view.path, a.view.first_line, cut - 1, sha256_text(shown)))
    chosen = [
        a if a.view.view_id not in heads else _without_head(a, ledger.cuts[a.view.view_id])
        for a in chosen
    ]
    replaced = {a.view.view_id for a in chosen}
    kept = [ground.assess(v) for v in views if v.view_id not in replaced]
    refs = shown_elsewhere(chosen, kept, ledger)
    chosen = [without_units(a, refs.get(a.view.view_id, {})) for a in chosen]
    chosen_ids = sorted(a.view.view_id for a in chosen)
    projection = ground.plan(session, chosen, budget_bytes, chosen_ids)
    placed = place(
        ledger,
        projection,
        {v.view_id: v for v in views},
        after=results[-1] if results else None,
        present=set(results),
        current_text=lambda sent: _sent_text(ground, sent),
        refs=refs,
        heads=heads,
    )
    placed.markers.update(patches)
    plan_id = ground.keep_plan(
        session,
        entries=[
            *(
                (c.sent.path, c.sent.first_line, c.sent.last_line, c.sent.sha256)
                for c in placed.carried
            ),
            *head_entries,  # the kept heads of results must still be the disk's lines
        ],
        # a patched view shows current lines: commit checks it like a view left in place
        kept=[v.view_id for v in views if v.view_id not in placed.markers or v.view_id in patches],
    )
    return wire.anchored_result(plan_id, projection, placed, ground.editor_dirty), renewed


def _patch(
    ground: Ground, ledger: Ledger, a: ViewAssessment, behind: int | None
) -> tuple[str, View] | None:
    """The view's tool result re-rendered from the current lines of its range, and the
    view observed anew with them; None when it cannot be patched honestly, or when a
    marker is cheaper (``_cheaper_in_place``)."""
    view = a.view
    if view.result is None or view.view_id in ledger.patched_ever or a.status not in PATCHABLE:
        return None
    if behind is None:
        return None
    source = ground.source(view.path)
    if source is None or view.last_line > source.line_count:
        return None
    whole = any(u.kind == "file" for u in view.units)
    if whole and view.last_line != source.line_count:
        return None  # the tool would print a longer or shorter file: not the same lines
    spans = _aligned(view)
    if spans is None:
        return None
    current = source.lines[view.first_line - 1 : view.last_line]
    text = rerender(view.result, spans, current)
    if not _cheaper_in_place(view, text, behind):
        return None
    observed = "".join(current)
    renewed = dataclasses.replace(
        view,
        observed_text=observed,
        observed_sha256=sha256_text(observed),
        units=anchor_view(view.path, source, view.first_line, view.last_line, current, whole),
        result=text,
    )
    ground.renew(renewed)
    return text, renewed


#: A head shorter than this is not worth keeping (the marker would say more).
MIN_HEAD_BYTES = 200


def _aligned(view: View) -> tuple[Span, ...] | None:
    """Where the view's observed lines stand in its result (``core.rerender.align``), one
    span per line, or None; computed once per result (a kept head is rebuilt on every
    request, and the result does not change)."""
    if view.result is None or view.ranges is not None:
        return None  # a sparse view's lines are not one run of the result: never patched
    return _align_once(view.result, view.observed_text, view.last_line - view.first_line + 1)


@functools.lru_cache(maxsize=256)
def _align_once(result: str, observed: str, count: int) -> tuple[Span, ...] | None:
    spans = align(result, split_lines(observed))
    return tuple(spans) if spans is not None and len(spans) == count else None


def _cut_line(a: ViewAssessment) -> int | None:
    """The first observed line of the topmost unit that is not fresh: every line above it
    is what the result showed, where it showed it."""
    lines = [u.unit.obs_first for u in a.units if u.status != "fresh"]
    if not lines or min(lines) <= a.view.first_line:
        return None
    return min(lines)


def _head(view: View, cut: int) -> str | None:
    """The result up to the line ``cut`` (the start of its printed line), when the result
    can be aligned with the observed lines and the head is worth keeping."""
    if view.result is None:
        return None
    spans = _aligned(view)
    if spans is None:
        return None
    start = spans[cut - view.first_line][0]
    head = view.result[: view.result.rfind("\n", 0, start) + 1]
    return head if len(head.encode("utf-8")) >= MIN_HEAD_BYTES else None


def _head_holds(a: ViewAssessment, cut: int) -> bool:
    return all(u.status == "fresh" for u in a.units if u.unit.obs_last < cut)


def _without_head(a: ViewAssessment, cut: int) -> ViewAssessment:
    """The view without the units of its kept head (they stand in the result)."""
    return ViewAssessment(a.view, a.status, [u for u in a.units if u.unit.obs_last >= cut])


def _cheaper_in_place(view: View, text: str, behind: int) -> bool:
    """Patch in place, or replace by a marker and send the view's code in a refresh?

    Both break the cache at the view. A patch re-sends what follows its first changed line
    and sends no second copy; a marker sends the view's code again (about its observed
    size) after the newest result. But a patched view that changes again breaks the cache
    at its old place once more, with everything behind it (``behind``: the bytes of the
    request after this tool result), where a refresh would be near the end. So: patch when
    what it re-sends is smaller than the copy it saves, and what stands behind it is too.
    """
    old = view.result or ""
    same = 0
    for x, y in zip(old, text, strict=False):
        if x != y:
            break
        same += 1
    after_change = len(text[same:].encode("utf-8"))
    copy = len(view.observed_text.encode("utf-8"))
    return after_change <= copy and behind <= PATCH_BEHIND_SHARE * copy


def _sent_text(ground: Ground, sent: SentEntry) -> str | None:
    """A sent entry's lines on disk when they still hold what was sent (a whole-file entry
    also needs the file to end where it ended), else None."""
    source = ground.source(sent.path)
    if source is None or sent.last_line > source.line_count:
        return None
    if sent.kind == "file" and sent.last_line != source.line_count:
        return None
    text = "".join(source.lines[sent.first_line - 1 : sent.last_line])
    return text if sha256_text(text) == sent.sha256 else None
