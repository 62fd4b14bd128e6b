"""Does the transcript-only audit agree with the replay on which requests were stale?

The audit applies the public rule to the transcript alone (a view is stale once the agent's
own edit changed a line it showed, and stays stale); the replay asks the real server before
each request, on files rebuilt step by step. Request ``afterSteps = i`` of the audit is the
request the replay checks before step ``i``. Strict compares read views; wide adds
edit-result snippets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fresh_ls.audit.api import audit_run
from fresh_ls.replay.runner import RunResult


@dataclass
class Agreement:
    run: str
    requests: int = 0
    agree_strict: int = 0
    agree_wide: int = 0
    #: (request index, audit's stale view steps, the server's changed view steps)
    differ_strict: list[tuple[int, list[int], list[int]]] = field(default_factory=list)
    differ_wide: list[tuple[int, list[int], list[int]]] = field(default_factory=list)


def compare(fixture: Path, result: RunResult, fmt: str | None = None) -> Agreement:
    audit = audit_run(fixture / "trajectory.json", fmt)
    checked = {r.index: r for r in result.requests}
    out = Agreement(result.run)
    for req in audit.requests:
        replayed = checked.get(req.after_steps)
        server_strict = replayed.changed_reads if replayed else []
        server_wide = sorted({*server_strict, *(replayed.changed_edit_results if replayed else [])})
        out.requests += 1
        if bool(req.stale_strict) == bool(server_strict):
            out.agree_strict += 1
        else:
            out.differ_strict.append((req.index, sorted(req.stale_strict), server_strict))
        if bool(req.stale_wide) == bool(server_wide):
            out.agree_wide += 1
        else:
            out.differ_wide.append((req.index, sorted(req.stale_wide), server_wide))
    return out
