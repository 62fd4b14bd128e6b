"""One parser per transcript format, each producing a ``steps.Transcript``.

The names are the ones ``meta.json`` uses in the shared fixtures, so ``--format`` accepts the
same words: ``openhands-completion``, ``openhands-events``, ``swe-agent-traj``,
``mini-swe-agent``.
"""

FORMATS = ("openhands-completion", "openhands-events", "swe-agent-traj", "mini-swe-agent")
