"""The stale note a ``UserPromptSubmit`` hook adds to the prompt (pure: no I/O).

Claude Code keeps every earlier Read result in the conversation as it was, and the hook
cannot rewrite them (the proxy can). What it can do is say, before the model reads the
next prompt, which of those results no longer match the disk: path, lines, the diff from
what was shown to what is there, and who changed it. Rules:

- only news: a view announced in an earlier note is left out until its code changes
  again (``fingerprint``: the diff's changed lines, not its line numbers, so a move alone
  is no news), and so is a view whose changes are all the session's own (the model made
  them and knows them), a ``moved`` view (the code shown is still exact; ``fresh/gate``
  also lets it pass) and a view a later view of the same lines supersedes;
- most recently read first; each view whole (its diffs) or, when that does not fit, one
  line naming it and the size of the diff left out; what fits neither is named in a last
  line saying what was left out; the note never exceeds ``budget`` UTF-8 bytes;
- an older view whose every change the note already showed for the same file (a wider
  read of the code a newer view covers) gets one line saying so, not the diff again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

DEFAULT_BUDGET_BYTES = 8192
#: Below this a note cannot hold its header and the line saying what was left out.
MIN_BUDGET_BYTES = 1024
#: Kept free while views are chosen, for the line naming what was left out.
_TAIL_RESERVE = 200

HEADER = (
    "[fresh-ls] Code you read earlier in this conversation changed on disk since you read "
    "it. Those earlier Read results are out of date for the lines below; use the diffs "
    "(observed -> current), or read the file again, before relying on that code or editing "
    "it.\n"
)

_AUTHORS = {
    "self": "by you",
    "editor": "in an editor",
    "outside": "outside the agent (another process: a formatter, git, a human)",
}
_NEWS = frozenset({"changed", "deleted", "ambiguous", "unreadable"})


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def author(changed_by: Any) -> str:
    if isinstance(changed_by, str) and changed_by.startswith("session:"):
        return f"by another agent ({changed_by})"
    if isinstance(changed_by, str) and changed_by in _AUTHORS:
        return _AUTHORS[changed_by]
    return "by an unknown writer"


def _lines(span: Any) -> str:
    if not isinstance(span, Mapping):
        return "?"
    return f"lines {span.get('firstLine')}-{span.get('lastLine')}"


def _unit_name(unit: Mapping[str, Any]) -> str:
    if unit.get("kind") == "symbol" and unit.get("name"):
        return f"{unit.get('symbolKind') or 'definition'} {unit['name']}"
    if unit.get("kind") == "file":
        return "the file"
    return "text outside definitions"


def _news_units(view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [u for u in view.get("units") or () if u.get("status") in _NEWS]


def fingerprint(view: Mapping[str, Any]) -> str:
    """What identifies this staleness: per unit its status and the changed lines of its
    diff (without headers or line numbers, which a move alone changes)."""
    import hashlib  # only a note needs it: the other hooks skip its import
    import json

    parts = [
        [unit.get("unitId"), unit.get("status"), _changed_lines(unit)] for unit in _news_units(view)
    ]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:32]


def _changed_lines(unit: Mapping[str, Any]) -> list[str]:
    """The ``-`` and ``+`` lines of a unit's diff, without its headers."""
    diff = unit.get("diff") or ""
    return [
        line
        for line in diff.split("\n")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def _same_change(view: Mapping[str, Any], shown: set[tuple[str, str]]) -> bool:
    """Every change of ``view`` is one the note already showed for its path (an older,
    wider read of the code a newer view just announced)."""
    path = str(view.get("path"))
    units = _news_units(view)
    lines = [line for u in units for line in _changed_lines(u)]
    changed_only = all(u.get("status") == "changed" for u in units)
    return changed_only and bool(lines) and all((path, line) in shown for line in lines)


def _covers(later: Mapping[str, Any], view: Mapping[str, Any]) -> bool:
    a, b = later.get("observed") or {}, view.get("observed") or {}
    try:
        return bool(
            later.get("path") == view.get("path")
            and a["firstLine"] <= b["firstLine"]
            and a["lastLine"] >= b["lastLine"]
        )
    except (KeyError, TypeError):
        return False


def candidates(views: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The views a note may speak of, most recently read first (``fresh/stale`` lists a
    session's views in the order they were observed)."""
    out = []
    for i, view in enumerate(views):
        units = _news_units(view)
        if not units or all(u.get("changedBy") == "self" for u in units):
            continue
        if any(_covers(later, view) for later in views[i + 1 :]):
            continue  # read again since: the later view speaks for these lines
        out.append(view)
    out.reverse()
    return out


def _view_line(view: Mapping[str, Any]) -> str:
    return f"{view.get('path')} {_lines(view.get('observed'))} (Read {view.get('viewId')})"


def full_entry(view: Mapping[str, Any]) -> str:
    out = [f"\n## {_view_line(view)}: {view.get('status')}\n"]
    for unit in _news_units(view):
        status = unit.get("status")
        who = author(unit.get("changedBy"))
        name = _unit_name(unit)
        if status == "changed":
            out.append(
                f"{name}, {_lines(unit.get('observed'))} as you read them, now "
                f"{_lines(unit.get('current'))}, changed {who}:\n"
            )
            diff = unit.get("diff") or ""
            out.append(diff if diff.endswith("\n") or not diff else diff + "\n")
        elif status == "deleted":
            out.append(f"{name} is gone (deleted {who}).\n")
        elif status == "ambiguous":
            out.append(
                f"{name} changed {who} and can no longer be told apart from similar code: "
                "read the file again.\n"
            )
        else:
            out.append(f"{name}: the file is no longer readable as text.\n")
    return "".join(out)


def same_entry(view: Mapping[str, Any]) -> str:
    return f"\n## {_view_line(view)}: changed, by the same change as shown above.\n"


def short_entry(view: Mapping[str, Any], full_bytes: int) -> str:
    who = sorted({author(u.get("changedBy")) for u in _news_units(view)})
    return (
        f"\n## {_view_line(view)}: {view.get('status')} {', '.join(who)}; its diff "
        f"({full_bytes} bytes) is left out to fit the note's budget: read the file again.\n"
    )


def _tail(left_out: list[Mapping[str, Any]], budget: int, room: int) -> str:
    """The line naming what was left out, as many views by name as fit in ``room``."""
    names = [_view_line(v) for v in left_out]
    for shown in range(len(names), -1, -1):
        rest = len(names) - shown
        listed = ", ".join(names[:shown]) + (f" and {rest} more" if shown and rest else "")
        text = (
            f"\n[fresh-ls] Left out to fit {budget} bytes: {len(names)} more stale "
            f"view{'s' if len(names) != 1 else ''}"
            + (f" ({listed})" if shown else "")
            + ". Read those files again before relying on them.\n"
        )
        if _size(text) <= room:
            return text
    return ""


class Composed(NamedTuple):
    """The note (empty: nothing to say), the fingerprint of each view it announced, and
    the views it only named as left out."""

    text: str
    announced: dict[str, str]
    left_out: list[str]


def compose(
    views: Iterable[Mapping[str, Any]],
    already: Mapping[str, str],
    budget: int = DEFAULT_BUDGET_BYTES,
) -> Composed:
    """The note for a session's ``fresh/stale`` views, given what earlier notes announced
    (view id -> fingerprint)."""
    news = [
        v for v in candidates(list(views)) if already.get(str(v.get("viewId"))) != fingerprint(v)
    ]
    if not news:
        return Composed("", {}, [])
    parts = [HEADER]
    used = _size(HEADER)
    announced: dict[str, str] = {}
    left_out: list[Mapping[str, Any]] = []
    shown: set[tuple[str, str]] = set()  # (path, changed line) the note showed in full
    for view in news:
        room = budget - used - _TAIL_RESERVE
        if _same_change(view, shown):
            forms = [same_entry(view)]
        else:
            full = full_entry(view)
            forms = [full, short_entry(view, _size(full))]
        for text in forms:
            if _size(text) <= room:
                parts.append(text)
                used += _size(text)
                announced[str(view.get("viewId"))] = fingerprint(view)
                if text is forms[0] and len(forms) == 2:
                    path = str(view.get("path"))
                    units = _news_units(view)
                    shown.update((path, line) for u in units for line in _changed_lines(u))
                break
        else:
            left_out.append(view)
    if left_out:
        parts.append(_tail(left_out, budget, budget - used))
    if not announced and not left_out:
        return Composed("", {}, [])
    return Composed("".join(parts), announced, [str(v.get("viewId")) for v in left_out])
