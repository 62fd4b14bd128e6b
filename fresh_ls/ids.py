"""Ids minted by fresh-ls: one format, whoever mints them.

A view id is minted by the server when ``fresh/observe`` carries none, and by the clients
before they send one: a client that reconnects after a lost answer sends the same
``observe`` again, and with the same id it replaces the view it registered instead of
adding a second one (the contract: observing the same ``viewId`` again replaces it).
"""

from __future__ import annotations

import uuid


def mint(prefix: str, digits: int = 12) -> str:
    """``PREFIX-`` and ``digits`` random hex digits, e.g. ``v-3f9c0a1b2d4e``."""
    return f"{prefix}-{uuid.uuid4().hex[:digits]}"


def view_id() -> str:
    """A view id for an observe that names none."""
    return mint("v")
