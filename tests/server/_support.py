"""The engine both encoded-answer tests start from: a root with cart.py and a non-ASCII
notes file, one session holding a whole-file, a one-line and a text view, and cart.py
changed after them (so ``policy: stale`` has something to replace)."""

from __future__ import annotations

from pathlib import Path

from fresh_ls.engine.engine import Engine
from fresh_ls.protocol import ObserveParams

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "code"


async def engine_with_views(tmp_path: Path, notes: str, notes_view_id: str) -> Engine:
    """The engine (the caller closes it); ``notes``: the notes file's text,
    ``notes_view_id``: its view's id (both free for a test to make hostile to splicing)."""
    root = tmp_path / "repo"
    root.mkdir()
    cart = (FIXTURES / "cart.py").read_text()
    (root / "cart.py").write_text(cart)
    (root / "notes é.md").write_text(notes)
    engine = await Engine.open(root, tmp_path / "state")
    for path, view_id, first, last in [
        ("cart.py", "whole", None, None),
        ("cart.py", "line9", 9, 9),
        ("notes é.md", notes_view_id, 1, 3),
    ]:
        await engine.observe(
            ObserveParams(session="s", path=path, view_id=view_id, first_line=first, last_line=last)
        )
    (root / "cart.py").write_text(cart.replace("return", "return  ", 1))
    return engine
