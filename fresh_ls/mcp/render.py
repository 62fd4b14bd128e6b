"""What the MCP tools say to the model: plain text, line numbers where code is shown, and
on a deny what happened, who did it, the diff, the current code and what to do next.

Text meant for a model never carries a bare number (``lines 8-10``, ``412 bytes``)."""

from __future__ import annotations

from typing import Any

from fresh_ls.core.text import split_lines


def numbered(text: str, first: int) -> str:
    """Lines as ``cat -n`` shows them: the line number, a tab, the line."""
    return "".join(
        f"{n:>6}\t{line if line.endswith(chr(10)) else line + chr(10)}"
        for n, line in enumerate(split_lines(text), start=first)
    )


def read_text(rel: str, first: int, last: int, total: int, text: str, view_id: str | None) -> str:
    """A read as the model sees it; ``view_id`` None: a file too large for fresh-ls to
    track, shown but not registered (an edit of it is refused)."""
    tag = f"[view {view_id}]" if view_id else "[not tracked: too large for fresh-ls]"
    if total == 0:
        return f"{rel} is empty (no lines). {tag}\n"
    more = ""
    if last < total:
        more = f"\n(lines {last + 1}-{total} not shown: read with first_line={last + 1})\n"
    head = f"{rel} lines {first}-{last} of {total} lines {tag}\n"
    return head + numbered(text, first) + more


def busy_text(action: str, rel: str, holder: dict[str, Any]) -> str:
    """Another writer held the file's lock for the whole wait: nothing was written."""
    who = holder.get("session")
    by = f" (session {who}, pid {holder.get('pid')})" if who else ""
    return (
        f"DENIED: the {action} of {rel} was not applied; the file is unchanged by it.\n"
        f"Another writer{by} is writing this file right now. Call {action} again in a "
        "moment; if the other writer changed the code you change, that call shows you how.\n"
    )


def refused_text(action: str, rel: str, why: str) -> str:
    """A write the tools never make, whatever the guard would say: no retry helps."""
    return (
        f"DENIED: the {action} of {rel} was not applied; the file is unchanged by it.\n"
        f"{why}. Retrying will be denied again; if this change is really needed, ask the "
        "user to make it.\n"
    )


def _who(changed_by: str | None) -> str:
    if changed_by is None:
        return "an unknown writer"
    if changed_by == "self":
        return "this session"
    if changed_by.startswith("session:"):
        return f"another agent ({changed_by})"
    if changed_by == "editor":
        return "a save from an editor"
    return "a process outside the tools (formatter, git, another program)"


def _unit_name(unit: dict[str, Any]) -> str:
    if unit.get("name"):
        return f"{unit.get('symbolKind') or 'symbol'} {unit['name']}"
    return "the whole file" if unit["kind"] == "file" else "lines outside definitions"


_NEXT = {
    "edit": "Next: decide whether your change still makes sense on the current code. If it "
    "does, call edit again with old_text taken from the current code above; do not undo "
    "the other change.",
    "write": "Next: merge your change into the current content above and call write again "
    "(or edit the part you mean to change); do not undo the other change.",
}


def deny_text(action: str, rel: str, result: dict[str, Any]) -> str:
    """A deny from ``fresh/checkEdit`` as the model should read it."""
    reason = result["reason"]
    head = f"DENIED: the {action} of {rel} was not applied; the file is unchanged by it.\n"
    if reason == "missing":
        return head + (
            "old_text does not occur in the file as it is now. Read the file again and "
            "copy old_text exactly from it (without the line numbers).\n"
        )
    if reason == "ambiguous":
        return head + (
            "old_text occurs more than once in the file. Include more surrounding lines in "
            "old_text so that it matches exactly one place.\n"
        )
    out = [head]
    for unit in result["units"]:
        where = f"{_unit_name(unit)} (lines {unit['firstLine']}-{unit['lastLine']})"
        if unit["status"] != "fresh":
            out.append(
                f"{where} changed since you read it, by {_who(unit['changedBy'])}. "
                "What you saw -> what is there now:\n"
            )
            if unit.get("diff"):
                out.append(unit["diff"] if unit["diff"].endswith("\n") else unit["diff"] + "\n")
        elif not unit.get("known", True):
            out.append(f"{where}: you have not read all of it as it is now.\n")
    out.append(
        "\nThe current code (you may now rely on it; this counts as reading it):\n"
        f"{result['text']}\n"
        f"{_NEXT[action]}\n"
    )
    return "".join(out)


def edited_text(rel: str, first: int, last: int, snippet: str) -> str:
    if last < first:
        return f"Edited {rel}: the replaced text is gone (no lines left there).\n"
    return f"Edited {rel}. Lines {first}-{last} now read:\n" + numbered(snippet, first)


def stale_text(result: dict[str, Any]) -> str:
    views = [v for v in result["views"] if v["status"] != "fresh"]
    if not views:
        return "No stale views: everything this session read is still what the files hold.\n"
    out = []
    for v in views:
        obs = v["observed"]
        out.append(
            f"view {v['viewId']}: {v['path']} lines {obs['firstLine']}-{obs['lastLine']} is "
            f"{v['status']}\n"
        )
        for u in v["units"]:
            if u["status"] == "fresh":
                continue
            out.append(f"  {_unit_name(u)}: {u['status']}, by {_who(u.get('changedBy'))}\n")
            if u.get("diff"):
                out.append(u["diff"] if u["diff"].endswith("\n") else u["diff"] + "\n")
    out.append("Read these again before relying on them.\n")
    return "".join(out)


def gate_text(result: dict[str, Any]) -> str:
    if result["proceed"]:
        return "proceed: true. Every view named still holds (fresh or only moved).\n"
    out = ["proceed: false. These views no longer hold:\n"]
    for v in result["stale"]:
        who = _who(v["changedBy"])
        out.append(f"  view {v['viewId']}: {v['path']} is {v['status']}, by {who}\n")
    out.append("Read them again (the stale tool shows the diffs) before the irreversible step.\n")
    return "".join(out)
