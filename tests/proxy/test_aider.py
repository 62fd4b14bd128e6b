"""aider (no tools): its fenced file blocks as whole-file views, its SEARCH/REPLACE replies as
writes; the proxy replaces a stale block with a marker and keeps the rest of the message
byte for byte. The messages are laid out as aider 0.86.2 sends them (tests/proxy/
test_agents_e2e.py records the real ones)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fresh_ls.proxy.shapes import block_views, reply_writes
from fresh_ls.toolcalls.aider import Edit, FileBlock, edit_blocks, failed_edits, file_blocks
from tests.proxy.test_rewrite import _post, proxied

PREFIX = (
    "I have *added these files to the chat* so you can go ahead and edit them.\n\n"
    "*Trust this message as the true contents of these files!*\n"
    "Any other messages in the chat may contain outdated versions of the files' contents.\n"
)
READ_ONLY = (
    "Here are some READ ONLY files, provided for your reference.\nDo not edit these files!\n"
)


def files_message(files: list[tuple[str, str]], fence: tuple[str, str] = ("```", "```")) -> str:
    """aider's ``files_content_prefix + get_files_content()``."""
    return PREFIX + "".join(f"\n{p}\n{fence[0]}\n{t}{fence[1]}\n" for p, t in files)


def _blocks(message: str) -> list[tuple[str, str, str]]:
    """(path, text, the span's own text) of each block."""
    return [(b.path, b.text, message[b.start : b.end]) for b in file_blocks(message)]


BLOCKS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    (
        "one file",
        files_message([("calc.py", "x = 1\n")]),
        [("calc.py", "x = 1\n", "calc.py\n```\nx = 1\n```")],
    ),
    (
        "two files, one empty, one without a final newline",
        files_message([("a.py", ""), ("src/b.py", "y = 2")]),
        [("a.py", "", "a.py\n```\n```"), ("src/b.py", "y = 2", "src/b.py\n```\ny = 2```")],
    ),
    (
        "a file with ``` lines: aider fences with ````",
        files_message([("README.md", "```\ncode\n```\n")], ("````", "````")),
        [("README.md", "```\ncode\n```\n", "README.md\n````\n```\ncode\n```\n````")],
    ),
    (
        "a file with ``` and ```` lines: <source>",
        files_message([("x.md", "````\n```\n")], ("<source>", "</source>")),
        [("x.md", "````\n```\n", "x.md\n<source>\n````\n```\n</source>")],
    ),
    (
        "read-only files",
        READ_ONLY + "\nnotes.md\n```\nhi\n```\n",
        [("notes.md", "hi\n", "notes.md\n```\nhi\n```")],
    ),
    ("a user's own code block is no view", "look:\n\nx.py\n```\nx = 1\n```\n", []),
    ("an unclosed block: no view", files_message([("a.py", "x\n")])[:-4], []),
    ("the prefix without files", PREFIX, []),
]


@pytest.mark.parametrize(
    ("message", "expected"), [c[1:] for c in BLOCKS], ids=[c[0] for c in BLOCKS]
)
def test_file_blocks(message: str, expected: list[tuple[str, str, str]]) -> None:
    assert _blocks(message) == expected


def _edit(path: str, old: str, new: str, fence: str = "```python") -> str:
    return f"{path}\n{fence}\n<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n```\n"


EDITS: list[tuple[str, str, list[Edit]]] = [
    ("one edit", _edit("calc.py", "a\n", "b\n"), [Edit("calc.py", "a\n", "b\n")]),
    (
        "prose, two files, a new file (empty SEARCH)",
        "Here:\n\n" + _edit("a.py", "a\n", "b\n") + "\n" + _edit("new.py", "", "n\n"),
        [Edit("a.py", "a\n", "b\n"), Edit("new.py", "", "n\n")],
    ),
    (
        "a block without its own path line edits the previous block's file",
        _edit("a.py", "a\n", "b\n")
        + "```python\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n```",
        [Edit("a.py", "a\n", "b\n"), Edit("a.py", "c\n", "d\n")],
    ),
    ("an unfinished block", "a.py\n```\n<<<<<<< SEARCH\na\n=======\nb\n", []),
    ("no edits", "Done.", []),
]


@pytest.mark.parametrize(("reply", "expected"), [c[1:] for c in EDITS], ids=[c[0] for c in EDITS])
def test_edit_blocks(reply: str, expected: list[Edit]) -> None:
    assert edit_blocks(reply) == expected


def test_failed_edits_from_aiders_report() -> None:
    report = (
        "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This "
        "SEARCH block failed to exactly match lines in calc.py\n<<<<<<< SEARCH\n    a\n=======\n"
        "    b\n>>>>>>> REPLACE\n\nThe SEARCH section must exactly match ...\n"
    )
    assert failed_edits(report) == {("calc.py", "    a\n", "    b\n")}


EXAMPLES = [
    {"role": "user", "content": "Change get_factorial() to use math.factorial"},
    {"role": "assistant", "content": _edit("mathweb/flask/app.py", "x\n", "y\n")},
    {"role": "user", "content": "I switched to a new code base. Please don't consider the above"},
    {"role": "assistant", "content": "Ok."},
]


def test_block_views_ids_are_stable_and_follow_the_text() -> None:
    files = {"role": "user", "content": files_message([("a.py", "x\n"), ("b.py", "y\n")])}
    first = block_views("chat", {"messages": [*EXAMPLES, files]})
    later = block_views(
        "chat",
        {
            "messages": [
                *EXAMPLES,
                {"role": "user", "content": "t"},
                {"role": "assistant", "content": "Ok."},
                files,
            ]
        },
    )
    assert [v.view_id for v in first] == [v.view_id for v in later]  # moved, same ids
    assert [v.message for v in later] == [6, 6]
    changed = block_views(
        "chat", {"messages": [{"role": "user", "content": files_message([("a.py", "x = 2\n")])}]}
    )
    assert changed[0].view_id != first[0].view_id
    assert first[0].view_id.startswith("aider:a.py:")
    assert block_views("anthropic", {"messages": [files]}) == []


def test_reply_writes_skip_examples_and_failed_edits() -> None:
    good = _edit("calc.py", "a\n", "b\n")
    bad = _edit("calc.py", "zz\n", "b\n") + _edit("other.py", "o\n", "p\n")
    report = (
        "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This "
        "SEARCH block failed to exactly match lines in calc.py\n<<<<<<< SEARCH\nzz\n=======\n"
        "b\n>>>>>>> REPLACE\n"
    )
    messages: list[Any] = [
        *EXAMPLES,
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": bad},
        {"role": "user", "content": report},
        {"role": "assistant", "content": good},
    ]
    writes = reply_writes("chat", {"messages": messages})
    assert [paths for _, paths in writes] == [["other.py"], ["calc.py"]]
    assert all(rid.startswith("aider-reply:") for rid, _ in writes)
    again = reply_writes("chat", {"messages": [*messages, {"role": "user", "content": "t"}]})
    assert again == writes  # the same ids in the next request
    # a request that offers tools is not aider's: its text replies are no edits
    assert reply_writes("chat", {"messages": messages, "tools": [{"type": "function"}]}) == []


# -- through the proxy ------------------------------------------------------------------------

SOURCE = "def f():\n    return 1\n"
CHANGED = "def f():\n    return 2\n"


def aider_body(files: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "model": "fake-model",
        "messages": [
            {"role": "system", "content": "Act as an expert software developer."},
            *EXAMPLES,
            {"role": "user", "content": files_message(files)},
            {"role": "assistant", "content": "Ok, any changes I propose will be to those files."},
            {"role": "user", "content": "Make f return 3."},
        ],
    }


async def test_current_blocks_pass_through_untouched(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = aider_body([("a.py", SOURCE)])
    async with proxied(workspace) as (model, proxy, url):
        await _post(url + "/v1/chat/completions", body)
        assert model.model_requests[-1].body == body
        await _post(url + "/v1/chat/completions", body)
        assert model.model_requests[-1].body == body
        assert proxy.rewritten == 0
        (session,) = proxy.sessions.values()
        assert len(session.views) == 1


async def test_a_block_stale_on_arrival_becomes_a_marker(workspace: Path) -> None:
    """The file changed after aider read it (while its request was on the way): the block
    becomes a marker, the rest of the message stays byte for byte, and the current code is
    at the end."""
    (workspace / "a.py").write_text(CHANGED)
    (workspace / "b.py").write_text("b = 1\n")
    body = aider_body([("a.py", SOURCE), ("b.py", "b = 1\n")])
    async with proxied(workspace, placement="end") as (model, proxy, url):
        await _post(url + "/v1/chat/completions", body)
        sent = model.model_requests[-1].body["messages"]
        original = body["messages"][5]["content"]
        (block, _) = file_blocks(original)
        marker_text = sent[5]["content"][
            block.start : len(sent[5]["content"]) - (len(original) - block.end)
        ]
        assert sent[5]["content"] == original[: block.start] + marker_text + original[block.end :]
        assert (
            "[fresh-ls]" in marker_text and "a.py" in marker_text and "aider:a.py:" in marker_text
        )
        assert "return 1" not in sent[5]["content"]
        assert "b.py\n```\nb = 1\n```\n" in sent[5]["content"]
        assert sent[:5] == body["messages"][:5] and sent[6:8] == body["messages"][6:8]
        assert sent[-1]["role"] == "user" and "return 2" in sent[-1]["content"]
        assert proxy.rewritten == 1


async def test_a_search_replace_reply_is_the_sessions_write(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    headers = {"x-fresh-ls-session": "aider-1"}
    body = aider_body([("a.py", SOURCE)])
    async with proxied(workspace) as (_model, proxy, url):
        await _post(url + "/v1/chat/completions", body, headers)
        (workspace / "a.py").write_text(CHANGED)  # aider applies the model's edit
        body["messages"] += [
            {"role": "assistant", "content": _edit("a.py", "    return 1\n", "    return 2\n")},
            {"role": "user", "content": "I updated the files."},
        ]
        await _post(url + "/v1/chat/completions", body, headers)
        stale = await proxy.client.stale("aider-1")
        (view,) = stale["views"]
        assert view["viewId"].startswith("aider:a.py:")
        assert {u.get("changedBy") for u in view["units"] if u["status"] != "fresh"} == {"self"}


def test_file_block_dataclass_spans() -> None:
    message = files_message([("a.py", "x\n")])
    (block,) = file_blocks(message)
    assert block == FileBlock("a.py", "x\n", len(PREFIX) + 1, len(message) - 1)


async def test_two_stale_blocks_in_one_message(workspace: Path) -> None:
    """Spans are replaced last first: each marker lands where its block was."""
    (workspace / "a.py").write_text(CHANGED)
    (workspace / "b.py").write_text("b = 2\n")
    (workspace / "c.py").write_text("c = 1\n")
    body = aider_body([("a.py", SOURCE), ("c.py", "c = 1\n"), ("b.py", "b = 1\n")])
    async with proxied(workspace, placement="end") as (model, _proxy, url):
        await _post(url + "/v1/chat/completions", body)
        content = model.model_requests[-1].body["messages"][5]["content"]
        head, rest = content.split("\n[fresh-ls] aider:a.py:", 1)
        assert head == PREFIX
        middle, tail = rest.split("\n[fresh-ls] aider:b.py:", 1)
        assert middle.endswith(".\n\nc.py\n```\nc = 1\n```\n")
        assert tail.endswith("\n") and "b = 1" not in tail and "```" not in tail
