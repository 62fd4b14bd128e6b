"""The real Claude Code, through `fresh-ls proxy`, against the scripted model server.

The script reads ``calc.py``; once that read has reached the model, the file changes outside
the agent (another process: a formatter adds a header comment and a human changes a value);
the model then reads another file, re-reads ``calc.py`` (Claude Code refuses an Edit of a file
that changed after its Read) and edits it. On what the model server received:

- no Read result shows code that differs from the disk at that moment, unless it was
  replaced by a marker;
- the request after the change carries the current code of what changed;
- the marker names the view (the tool call's id) and the path;
- the agent finished: exit 0, its Edit applied, the file edited on disk.

The control runs the same script straight at the model server and shows the stale read
reaching the model.

The agent CLI comes from ``make agents`` (pinned, cached under ``.cache/agents``); without it
these tests skip and say so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.model_side import refresh_entries, refresh_problems, shown_part
from tests.proxy.scripted_model import Record, Reply

REPO = Path(__file__).resolve().parents[2]
CLAUDE = Path(
    os.environ.get("FRESH_LS_CLAUDE", REPO / ".cache/agents/claude-code/node_modules/.bin/claude")
)

CALC = (
    "RATE = 10\n\n\ndef total(quantity):\n    return quantity * RATE\n\n\n"
    "def tax(amount):\n    return amount // 5\n"
)
# What the outside change leaves: a header line on top (every line moves) and a new value.
CALC_CHANGED = "# formatted\n" + CALC.replace(
    "return quantity * RATE", "return quantity * RATE * 2"
)
NOTES = "Totals are computed in calc.py.\n"

needs_claude = pytest.mark.skipif(
    not CLAUDE.exists(),
    reason=f"Claude Code is not installed at {CLAUDE}: run `make agents` (the e2e tests need "
    "the real agent CLI)",
)

_NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")


def _shown_lines(result: str) -> dict[int, str]:
    """The numbered lines a Read result shows (an independent reading of Claude Code's
    ``N\\tline`` format)."""
    shown: dict[int, str] = {}
    for line in result.split("\n"):
        match = _NUMBERED.match(line)
        if match:
            shown[int(match.group(1))] = match.group(2)
        elif shown:
            break
    return shown


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


def read_results(record: Record) -> list[tuple[str, str, str]]:
    """(tool_use id, file path, result text) of every Read result in a request."""
    reads: dict[str, str] = {}
    found = []
    for message in record.body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use" and block.get("name") == "Read":
                reads[block["id"]] = block["input"]["file_path"]
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in reads:
                found.append(
                    (block["tool_use_id"], reads[block["tool_use_id"]], _result_text(block))
                )
    return found


def stale_results(record: Record, root: Path) -> list[str]:
    """Every Read result in the request whose lines differ from the disk on arrival."""
    problems = []
    for call_id, path, text in read_results(record):
        if text.startswith("[fresh-ls]"):
            continue  # a marker: no code shown
        rel = Path(path).resolve().relative_to(root).as_posix()
        disk = record.files.get(rel, "").split("\n")
        for number, line in _shown_lines(text).items():
            if number <= len(disk) and disk[number - 1] != line:
                problems.append(
                    f"{call_id} {rel} line {number}: shows {line!r}, disk {disk[number - 1]!r}"
                )
                break
    return problems


def _script(root: Path) -> list[Any]:
    calc = str(root / "calc.py")

    def change_outside() -> None:
        (root / "calc.py").write_text(CALC_CHANGED)

    return [
        Reply(tool="Read", input={"file_path": calc}),
        # the first read has reached the model; now the file changes outside the agent
        Reply(tool="Read", input={"file_path": str(root / "notes.md")}, after=change_outside),
        Reply(tool="Read", input={"file_path": calc}),
        Reply(
            tool="Edit",
            input={
                "file_path": calc,
                "old_string": "return amount // 5",
                "new_string": "return amount // 4",
                "replace_all": False,
            },
        ),
        Reply(text="Done: tax now divides by 4."),
    ]


def _run_claude(
    root: Path, home: Path, base_url: str, tools: str = "Read,Edit,Write"
) -> subprocess.CompletedProcess[str]:
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-test-not-a-real-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
    }
    return subprocess.run(
        [
            str(CLAUDE),
            "-p",
            "Make tax() divide by 4.",
            "--output-format",
            "json",
            "--allowedTools",
            tools,
            "--model",
            "claude-sonnet-4-5",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _setup(workspace: Path) -> None:
    (workspace / "calc.py").write_text(CALC)
    (workspace / "notes.md").write_text(NOTES)


def _finished(run: subprocess.CompletedProcess[str], model: Any, root: Path) -> None:
    assert run.returncode == 0, run.stderr
    outcome = json.loads(run.stdout)
    assert outcome.get("is_error") is False, outcome
    assert (root / "calc.py").read_text() == CALC_CHANGED.replace("// 5", "// 4")
    last = model.model_requests[-1]
    edits = [
        b
        for m in last.body["messages"]
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("type") == "tool_result" and b.get("is_error")
    ]
    assert edits == [], edits  # the Edit (and every other tool call) succeeded


@needs_claude
def test_claude_code_through_the_proxy(workspace: Path, start_model, start_proxy) -> None:
    _setup(workspace)
    model = start_model(_script(workspace))
    proxy = start_proxy(workspace, model.url)
    run = _run_claude(workspace, workspace.parent / "home", proxy.url)
    stderr = proxy.stop()
    _finished(run, model, workspace)
    scripted = [r for r in model.model_requests if r.turn is not None]
    assert [r.turn for r in scripted] == [0, 1, 2, 3, 4]
    for record in scripted:
        assert stale_results(record, workspace) == [], f"turn {record.turn}"
    # the request after the change: the first read is a marker naming the view and the path,
    # and the current code of what changed is in the request
    after = scripted[2]
    (first_id, _, marker), *_ = read_results(after)
    assert "[fresh-ls]" in marker and first_id in marker and "calc.py" in marker
    for record in scripted:
        assert refresh_problems(record) == [], f"turn {record.turn}"
    assert refresh_entries(after)  # current code went in a refresh
    sent = json.dumps(after.body)
    assert "return quantity * RATE * 2" in sent
    assert "sk-test-not-a-real-key" not in stderr
    # the session came from Claude Code's own header
    header = scripted[0].headers.get("X-Claude-Code-Session-Id")
    assert header


@needs_claude
def test_claude_code_control_without_the_proxy(workspace: Path, start_model) -> None:
    """The same script straight at the model: the stale read reaches it."""
    _setup(workspace)
    model = start_model(_script(workspace))
    run = _run_claude(workspace, workspace.parent / "home", model.url)
    _finished(run, model, workspace)
    scripted = [r for r in model.model_requests if r.turn is not None]
    stale = stale_results(scripted[2], workspace)
    assert stale and "calc.py" in stale[0], stale


def test_stale_results_reads_the_listing(tmp_path: Path) -> None:
    """The check itself: a listing that differs from the snapshot is found; a marker is not."""
    root = tmp_path
    body = {
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Read",
                        "input": {"file_path": str(root / "a.py")},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "1\tx = 1\n2\ty = 2"}
                ],
            },
        ]
    }
    record = Record("POST", "/v1/messages", "", {}, body, {"a.py": "x = 1\ny = 3\n"})
    assert stale_results(record, root) == ["t1 a.py line 2: shows 'y = 2', disk 'y = 3'"]
    body["messages"][1]["content"][0]["content"] = "[fresh-ls] t1 showed a.py lines 1-2; ..."
    assert stale_results(record, root) == []


# -- Codex CLI -------------------------------------------------------------------------------

CODEX = Path(os.environ.get("FRESH_LS_CODEX", REPO / ".cache/agents/codex/node_modules/.bin/codex"))
needs_codex = pytest.mark.skipif(
    not CODEX.exists(),
    reason=f"Codex CLI is not installed at {CODEX}: run `make agents` (the e2e tests need "
    "the real agent CLI)",
)
_CAT_N_CMD = re.compile(r"^cat -n (\S+)$")


def codex_listings(record: Record) -> list[tuple[str, str, str]]:
    """(call id, file, the command's output) of every ``cat -n FILE`` result in a
    Responses request; a marker stands as it is."""
    reads: dict[str, str] = {}
    found = []
    for item in record.body.get("input", []):
        if item.get("type") == "function_call" and item.get("name") == "exec_command":
            match = _CAT_N_CMD.match(json.loads(item["arguments"]).get("cmd", ""))
            if match:
                reads[item["call_id"]] = match.group(1)
        elif item.get("type") == "function_call_output" and item.get("call_id") in reads:
            output = item["output"]
            if isinstance(output, list):
                output = "".join(p.get("text", "") for p in output)
            body = output.split("Output:\n", 1)[1] if "Output:\n" in output else output
            found.append((item["call_id"], reads[item["call_id"]], body))
    return found


def codex_stale(record: Record) -> list[str]:
    problems = []
    for call_id, rel, text in codex_listings(record):
        if text.startswith("[fresh-ls]"):
            continue
        disk = record.files.get(rel, "").split("\n")
        for number, line in _shown_lines(text).items():
            if number <= len(disk) and disk[number - 1] != line:
                problems.append(f"{call_id} {rel} line {number}: shows {line!r}")
                break
    return problems


PATCH = (
    "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: calc.py\n@@ def tax(amount):\n"
    "-    return amount // 5\n+    return amount // 4\n*** End Patch\nPATCH"
)


#: Codex offers its freeform ``apply_patch`` tool to a model it knows; to an unknown model
#: it edits with an ``apply_patch`` heredoc through ``exec_command``.
CODEX_MODELS = {"heredoc": "fake-model", "freeform": "gpt-5.5"}


def _codex_script(root: Path, how: str = "heredoc") -> list[Any]:
    def change_outside() -> None:
        (root / "calc.py").write_text(CALC_CHANGED)

    if how == "freeform":
        patch = PATCH.split("\n", 1)[1].rsplit("\n", 1)[0] + "\n"  # the envelope alone
        edit = Reply(tool="apply_patch", custom=True, input=patch)
    else:
        edit = Reply(tool="exec_command", input={"cmd": PATCH})
    return [
        Reply(tool="exec_command", input={"cmd": "cat -n calc.py"}),
        Reply(tool="exec_command", input={"cmd": "cat -n notes.md"}, after=change_outside),
        edit,
        Reply(text="Done: tax now divides by 4."),
    ]


def _run_codex(
    root: Path, home: Path, base_url: str, model: str = "fake-model"
) -> subprocess.CompletedProcess[str]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{model}"\nmodel_provider = "fake"\ncheck_for_update_on_startup = false\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{base_url}/v1"\n'
        'env_key = "FAKE_API_KEY"\nwire_api = "responses"\n[analytics]\nenabled = false\n'
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "FAKE_API_KEY": "sk-test-not-a-real-key",
    }
    return subprocess.run(
        [
            str(CODEX),
            "exec",
            "--skip-git-repo-check",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "--disable",
            "plugins",
            "--disable",
            "remote_plugin",
            "--disable",
            "apps",
            "Make tax() divide by 4.",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def _codex_finished(run: subprocess.CompletedProcess[str], root: Path) -> None:
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert any(e.get("type") == "turn.completed" for e in events), run.stdout
    assert (root / "calc.py").read_text() == CALC_CHANGED.replace("// 5", "// 4")


@needs_codex
@pytest.mark.parametrize("how", sorted(CODEX_MODELS))
def test_codex_through_the_proxy(workspace: Path, start_model, start_proxy, how: str) -> None:
    _setup(workspace)
    model = start_model(_codex_script(workspace, how))
    proxy = start_proxy(workspace, model.url)
    run = _run_codex(workspace, workspace.parent / "home", proxy.url, CODEX_MODELS[how])
    stderr = proxy.stop()
    _codex_finished(run, workspace)
    scripted = [r for r in model.model_requests if r.turn is not None]
    assert [r.turn for r in scripted] == [0, 1, 2, 3]
    for record in scripted:
        assert codex_stale(record) == [], f"turn {record.turn}"
    after = scripted[2]
    (first_id, _, marker), *_ = codex_listings(after)
    assert "[fresh-ls]" in marker and first_id in marker and "calc.py" in marker
    for record in scripted:
        assert refresh_problems(record) == [], f"turn {record.turn}"
    assert "return quantity * RATE * 2" in json.dumps(after.body["input"])
    assert "sk-test-not-a-real-key" not in stderr
    assert scripted[0].headers.get("session-id")
    if how == "freeform":
        kinds = [i.get("type") for i in scripted[3].body["input"]]
        assert "custom_tool_call" in kinds and "custom_tool_call_output" in kinds


@needs_codex
def test_codex_control_without_the_proxy(workspace: Path, start_model) -> None:
    _setup(workspace)
    model = start_model(_codex_script(workspace))
    run = _run_codex(workspace, workspace.parent / "home", model.url)
    _codex_finished(run, workspace)
    scripted = [r for r in model.model_requests if r.turn is not None]
    stale = codex_stale(scripted[2])
    assert stale and "calc.py" in stale[0], stale


# -- Pi --------------------------------------------------------------------------------------

PI = Path(os.environ.get("FRESH_LS_PI", REPO / ".cache/agents/pi/node_modules/.bin/pi"))
needs_pi = pytest.mark.skipif(
    not PI.exists(),
    reason=f"Pi is not installed at {PI}: run `make agents` (the e2e tests need the real "
    "agent CLI)",
)


def pi_reads(record: Record) -> list[tuple[str, str, str]]:
    """(call id, file, text) of every ``read`` result in a chat-completions request."""
    reads: dict[str, str] = {}
    found = []
    for message in record.body.get("messages", []):
        for call in message.get("tool_calls") or []:
            if call["function"]["name"] == "read":
                reads[call["id"]] = json.loads(call["function"]["arguments"])["path"]
        if message.get("role") == "tool" and message.get("tool_call_id") in reads:
            content = message["content"]
            if isinstance(content, list):
                content = "".join(p.get("text", "") for p in content)
            found.append((message["tool_call_id"], reads[message["tool_call_id"]], content))
    return found


def pi_stale(record: Record) -> list[str]:
    """Pi's read shows raw text: a whole-file read must be the file as the disk holds it."""
    problems = []
    for call_id, rel, text in pi_reads(record):
        shown = shown_part(text).rstrip("\n")
        disk = record.files.get(rel, "").rstrip("\n")
        # a result with fresh-ls text in it keeps at most the file's unchanged head
        ok = disk.startswith(shown) if "[fresh-ls]" in text else shown == disk
        if not ok:
            problems.append(f"{call_id} {rel}: shows {text[:40]!r}…")
    return problems


def _pi_script(root: Path) -> list[Any]:
    def change_outside() -> None:
        (root / "calc.py").write_text(CALC_CHANGED)

    return [
        Reply(tool="read", input={"path": "calc.py"}),
        Reply(tool="read", input={"path": "notes.md"}, after=change_outside),
        Reply(
            tool="edit",
            input={
                "path": "calc.py",
                "edits": [{"oldText": "return amount // 5", "newText": "return amount // 4"}],
            },
        ),
        Reply(text="Done: tax now divides by 4."),
    ]


def _run_pi(root: Path, home: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": base_url + "/v1",
        "api": "openai-completions",
        "apiKey": "sk-test-not-a-real-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model"}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "PI_OFFLINE": "1"}
    return subprocess.run(
        [
            str(PI),
            "-p",
            "--provider",
            "fake",
            "--model",
            "fake-model",
            "--mode",
            "json",
            "--no-session",
            "Make tax() divide by 4.",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def _pi_finished(run: subprocess.CompletedProcess[str], root: Path) -> None:
    assert run.returncode == 0, run.stderr
    assert '"isError":true' not in run.stdout, run.stdout[-2000:]
    assert (root / "calc.py").read_text() == CALC_CHANGED.replace("// 5", "// 4")


@needs_pi
def test_pi_through_the_proxy(workspace: Path, start_model, start_proxy) -> None:
    _setup(workspace)
    model = start_model(_pi_script(workspace))
    proxy = start_proxy(workspace, model.url)
    run = _run_pi(workspace, workspace.parent / "home", proxy.url)
    stderr = proxy.stop()
    _pi_finished(run, workspace)
    scripted = [r for r in model.model_requests if r.turn is not None]
    assert [r.turn for r in scripted] == [0, 1, 2, 3]
    for record in scripted:
        assert pi_stale(record) == [], f"turn {record.turn}"
    after = scripted[2]
    (first_id, _, marker), *_ = pi_reads(after)
    assert "[fresh-ls]" in marker and first_id in marker and "calc.py" in marker
    for record in scripted:
        assert refresh_problems(record) == [], f"turn {record.turn}"
    assert "return quantity * RATE * 2" in json.dumps(after.body["messages"])
    assert "sk-test-not-a-real-key" not in stderr


@needs_pi
def test_pi_control_without_the_proxy(workspace: Path, start_model) -> None:
    _setup(workspace)
    model = start_model(_pi_script(workspace))
    run = _run_pi(workspace, workspace.parent / "home", model.url)
    _pi_finished(run, workspace)
    scripted = [r for r in model.model_requests if r.turn is not None]
    stale = pi_stale(scripted[2])
    assert stale and "calc.py" in stale[0], stale


# -- aider -----------------------------------------------------------------------------------

AIDER = Path(os.environ.get("FRESH_LS_AIDER", REPO / ".cache/agents/aider/bin/aider"))
needs_aider = pytest.mark.skipif(
    not AIDER.exists(),
    reason=f"aider is not installed at {AIDER}: run `make agents` (the e2e tests need the "
    "real agent CLI)",
)


def _edit_block(old: str, new: str) -> str:
    return f"calc.py\n```python\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n```\n"


def _aider_script(root: Path) -> list[Any]:
    """A first edit whose SEARCH text is not in the file (aider answers with the failure and
    the files again: a second request), the outside change in between, then the edit."""

    def change_outside() -> None:
        (root / "calc.py").write_text(CALC_CHANGED)

    return [
        Reply(
            text=_edit_block("    return amount // 6", "    return amount // 4"),
            after=change_outside,
        ),
        Reply(text=_edit_block("    return amount // 5", "    return amount // 4")),
        Reply(text="Done."),
    ]


def _run_aider(root: Path, home: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    home.mkdir(exist_ok=True)
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    return subprocess.run(
        [
            str(AIDER),
            "--model",
            "openai/fake-model",
            "--openai-api-base",
            base_url + "/v1",
            "--openai-api-key",
            "sk-test-not-a-real-key",
            "--edit-format",
            "diff",
            "--yes-always",
            "--no-auto-commits",
            "--analytics-disable",
            "--no-check-update",
            "--no-show-model-warnings",
            "--no-pretty",
            "--no-fancy-input",
            "--no-gitignore",
            "--message",
            "Make tax() divide by 4.",
            "calc.py",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )


def aider_file_is_current(record: Record) -> bool:
    """The request holds calc.py exactly as the disk held it on arrival, and no other copy."""
    text = "\n".join(
        m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        for m in record.body.get("messages", [])
        if m.get("role") == "user"
    )
    disk = record.files["calc.py"]
    old = CALC if disk == CALC_CHANGED else CALC_CHANGED
    return disk in text and old not in text


def _aider_checks(run: subprocess.CompletedProcess[str], model: Any, root: Path) -> None:
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert (root / "calc.py").read_text() == CALC_CHANGED.replace("// 5", "// 4")
    requests = [r for r in model.model_requests if r.turn is not None]
    assert len(requests) >= 2
    assert requests[1].files["calc.py"] == CALC_CHANGED
    for record in requests[:2]:
        assert aider_file_is_current(record), f"request {record.turn}"


@needs_aider
def test_aider_through_the_proxy(workspace: Path, start_proxy) -> None:
    """aider has no tool results: its file blocks become views, and as aider re-reads the
    files for every request they are current and pass through the proxy untouched; the task
    finishes."""
    from tests.proxy.scripted_model import ScriptedModel

    _setup(workspace)
    model = ScriptedModel(_aider_script(workspace), workspace, by_request=True)
    model.start()
    try:
        proxy = start_proxy(workspace, model.url)
        run = _run_aider(workspace, workspace.parent / "home", proxy.url)
        stderr = proxy.stop()
    finally:
        model.stop()
    _aider_checks(run, model, workspace)
    assert "sk-test-not-a-real-key" not in stderr
    assert not any("[fresh-ls]" in json.dumps(r.body) for r in model.model_requests)


@needs_aider
def test_aider_control_sends_the_file_as_it_is_now(workspace: Path) -> None:
    """Measured, not assumed: without the proxy too, aider's second request carries calc.py
    as changed, because aider re-reads the files in the chat for every request. A change
    between requests leaves no stale block for the proxy to replace; only one after aider
    built a request does (test_aider_block_stale_in_flight_*, docs/harnesses.md)."""
    from tests.proxy.scripted_model import ScriptedModel

    _setup(workspace)
    model = ScriptedModel(_aider_script(workspace), workspace, by_request=True)
    model.start()
    try:
        run = _run_aider(workspace, workspace.parent / "home", model.url)
    finally:
        model.stop()
    _aider_checks(run, model, workspace)


class InFlight:
    """A hop between aider and what it talks to that runs ``change`` when the ``at``-th chat
    request arrives, before passing it on: the file changes after aider built that request
    (aider reads its files when it builds a request, so only this timing can leave a block
    stale; nothing in the request is touched)."""

    def __init__(self, target: str, at: int, change: Any) -> None:
        self.target, self.at, self.change = target, at, change
        self.seen = 0
        self.url = ""
        self._loop: Any = None

    def start(self) -> None:
        import asyncio
        import threading

        from aiohttp import ClientSession, web

        ready = threading.Event()

        async def handle(request: web.Request) -> web.Response:
            body = await request.read()
            if request.path.endswith("/chat/completions"):
                self.seen += 1
                if self.seen == self.at:
                    self.change()
            headers = {
                k: v
                for k, v in request.headers.items()
                if k.lower() not in ("host", "content-length", "transfer-encoding")
            }
            async with (
                ClientSession(auto_decompress=False) as http,
                http.request(
                    request.method, self.target + request.path_qs, data=body, headers=headers
                ) as up,
            ):
                data = await up.read()
                keep = ("content-type", "content-encoding")
                return web.Response(
                    status=up.status,
                    body=data,
                    headers={k: v for k, v in up.headers.items() if k.lower() in keep},
                )

        async def serve() -> None:
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_route("*", "/{tail:.*}", handle)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.url = f"http://127.0.0.1:{runner.addresses[0][1]}"

        def main() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(serve())
            ready.set()
            self._loop.run_forever()

        threading.Thread(target=main, daemon=True).start()
        ready.wait(10)

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)


def _in_flight_script() -> list[Any]:
    return [
        Reply(text=_edit_block("    return amount // 6", "    return amount // 4")),
        Reply(text=_edit_block("    return amount // 5", "    return amount // 4")),
        Reply(text="Done."),
    ]


def _run_in_flight(workspace: Path, start_proxy: Any, through_proxy: bool) -> tuple[Any, Any]:
    from tests.proxy.scripted_model import ScriptedModel

    _setup(workspace)
    model = ScriptedModel(_in_flight_script(), workspace, by_request=True)
    model.start()
    proxy = None
    try:
        if through_proxy:
            proxy = start_proxy(workspace, model.url)
        hop = InFlight(
            proxy.url if proxy else model.url,
            2,
            lambda: (workspace / "calc.py").write_text(CALC_CHANGED),
        )
        hop.start()
        try:
            run = _run_aider(workspace, workspace.parent / "home", hop.url)
        finally:
            hop.stop()
    finally:
        model.stop()
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert (workspace / "calc.py").read_text() == CALC_CHANGED.replace("// 5", "// 4")
    requests = [r for r in model.model_requests if r.turn is not None]
    assert len(requests) >= 2 and requests[1].files["calc.py"] == CALC_CHANGED
    return requests, proxy


def _user_text(record: Record) -> str:
    return "\n".join(
        m["content"]
        for m in record.body["messages"]
        if m["role"] == "user" and isinstance(m["content"], str)
    )


@needs_aider
def test_aider_block_stale_in_flight_is_replaced(workspace: Path, start_proxy) -> None:
    """calc.py changes after aider built its second request: through the proxy that request
    reaches the model with the block replaced by a marker naming the view and the path, and
    the current code at the end; the task finishes."""
    requests, _ = _run_in_flight(workspace, start_proxy, True)
    text = _user_text(requests[1])
    assert "calc.py\n```\n" + CALC + "```" not in text  # the stale block is gone
    assert "[fresh-ls]" in text and "aider:calc.py:" in text
    assert "return quantity * RATE * 2" in json.dumps(requests[1].body["messages"])
    assert refresh_problems(requests[1]) == []


@needs_aider
def test_aider_block_stale_in_flight_control(workspace: Path, start_proxy) -> None:
    """The control: the same timing straight at the model, and the stale block reaches it."""
    requests, _ = _run_in_flight(workspace, start_proxy, False)
    text = _user_text(requests[1])
    assert "calc.py\n```\n" + CALC + "```" in text and "[fresh-ls]" not in text
