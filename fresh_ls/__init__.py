"""fresh-ls: keep a coding agent's file views fresh.

The package is layered so that the rules can be tested with plain strings:
``fresh_ls.core`` (pure: sources, definitions, units, staleness, projection),
``fresh_ls.engine`` (sessions, placement, plans, SQLite persistence, wire shapes),
``fresh_ls.server`` (the thin LSP layer),
``fresh_ls.cli`` and ``fresh_ls.client``.
"""

__version__ = "0.1.0"
