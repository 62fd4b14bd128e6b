"""``fresh-ls audit``: how often did an agent act on file views its own edits had outdated?

Measured from transcripts alone (no repository, no server): the views a run's tools showed,
the edits it made, and which of its model requests carried a view an earlier edit had
changed. See ``docs/audit.md`` for the rule, the formats and the output schema.
"""

from fresh_ls.audit.api import audit_paths, audit_run
from fresh_ls.audit.results import Problem, RequestAudit, RunAudit, Totals, ViewRecord
from fresh_ls.audit.steps import TranscriptError

__all__ = [
    "Problem",
    "RequestAudit",
    "RunAudit",
    "Totals",
    "TranscriptError",
    "ViewRecord",
    "audit_paths",
    "audit_run",
]
