"""One parser per transcript format, each producing a ``steps.Transcript``.

The names are the ones ``meta.json`` uses in the shared fixtures, so ``--format`` accepts the
same words: ``openhands-completion``, ``openhands-events``, ``swe-agent-traj``,
``mini-swe-agent``; and the session files agents write on their own: ``claude-code``
(``~/.claude/projects``), ``codex`` (``~/.codex/sessions``) and ``pi``
(``~/.pi/agent/sessions``), one run per JSON-lines file.
"""

FORMATS = (
    "openhands-completion",
    "openhands-events",
    "swe-agent-traj",
    "mini-swe-agent",
    "claude-code",
    "codex",
    "pi",
)
#: Formats whose JSON-lines file is one run (its records read together), not a run per line.
SESSION_FORMATS = ("claude-code", "codex", "pi")
