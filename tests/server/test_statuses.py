"""``fresh/statuses`` (an addition) over a real stdio server: each view's status exactly as
``fresh/stale`` gives it, for every status, with the same ``viewIds`` filter and errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fresh_ls.client import InvalidParamsError, SyncClient, UnknownIdError

MOD = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"


@pytest.fixture
def client(tmp_path: Path) -> SyncClient:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text(MOD)
    (root / "gone.py").write_text(MOD)
    c = SyncClient.spawn(root, python=sys.executable)
    c.observe("s", "m.py", view_id="a", first_line=1, last_line=2)
    c.observe("s", "m.py", view_id="b", first_line=5, last_line=6)
    c.observe("s", "gone.py", view_id="g", first_line=1, last_line=2)
    c.observe("s", "m.py", view_id="whole")
    # b changes, a moves (two lines above it), gone.py goes
    (root / "m.py").write_text("# one\n# two\n" + MOD.replace("return 2", "return 20"))
    (root / "gone.py").unlink()
    yield c
    c.close()


def test_statuses_are_what_stale_says(client: SyncClient) -> None:
    full = {v["viewId"]: v["status"] for v in client.stale("s")["views"]}
    assert full == {"a": "moved", "b": "changed", "g": "deleted", "whole": "changed"}
    got = client.statuses("s")
    assert got == {"views": [{"viewId": k, "status": v} for k, v in full.items()]}
    assert client.statuses("s", view_ids=["g", "a"]) == {
        "views": [{"viewId": "g", "status": "deleted"}, {"viewId": "a", "status": "moved"}]
    }
    assert client.statuses("nobody") == {"views": []}


def test_statuses_errors_are_stales(client: SyncClient) -> None:
    with pytest.raises(UnknownIdError) as err:
        client.statuses("s", view_ids=["a", "nope"])
    assert "'nope'" in err.value.message
    with pytest.raises(InvalidParamsError):
        client._call("fresh/statuses", {"session": 7})
    with pytest.raises(InvalidParamsError):
        client._call("fresh/statuses", {"session": ""})
    assert client.statuses("s", view_ids=[])["views"] == []
