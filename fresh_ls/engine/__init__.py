"""The engine: sessions, placement, attribution, plans, the store and the wire shapes.

``engine.Engine`` (one per root) answers every request; ``session.Session`` holds one
session's state; ``anchored`` decides ``placement: anchored`` through the narrow
``placement.Placer`` interface, never the Engine itself; ``attribution`` says who made each
change, ``plans`` which plans ``fresh/commit`` still accepts, ``store`` keeps views durable
(aiosqlite) and ``wire`` shapes the core's objects for the contract. The rules themselves
live in ``fresh_ls.core``, which imports nothing of this package.

This file imports nothing, so a light import of one module (``store`` for its schema
version, say) does not load the whole engine.
"""
