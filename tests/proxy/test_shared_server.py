"""Several `fresh-ls run` on one folder share one fresh-ls server, safely.

Real processes throughout: `fresh-ls run` wrapping the real Claude Code (and Codex) against
the scripted model, the server `run` starts detached. What a user of two agents in one
folder, or of one whose server died, would expect:

- two runs at once, the first exits: the second's next request that carries a file view
  is answered at once (it used to wait 30 s, then 503 "the fresh-ls server is gone"), and
  carries the current code of what changed meanwhile;
- the server killed under a run (SIGKILL): the run's proxy starts a new one and its next
  request is answered, current;
- Codex `exec`, an outside change, `exec resume --last`: the resumed request (a new run,
  the old listing in its history) shows the model the current code;
- the server exits on its own once no client has been connected for its idle time.

A run waits inside a Bash tool call (Claude Code runs `while [ ! -e FLAG ]; do sleep`) for
the test to let it go on, so the test decides when each run's next request is sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fresh_ls.autostart import DEFAULT_IDLE_EXIT_S, IDLE_ENV, idle_exit_s, root_held
from fresh_ls.client import AsyncClient, ConnectionClosedError
from fresh_ls.processes import alive
from fresh_ls.server.endpoint import RootLock
from tests.proxy.conftest import REPO
from tests.proxy.model_side import refresh_problems
from tests.proxy.scripted_model import Record, Reply
from tests.proxy.test_agents_e2e import (
    CALC_CHANGED,
    CLAUDE,
    CODEX,
    _setup,
    codex_listings,
    codex_stale,
    needs_claude,
    needs_codex,
    read_results,
    stale_results,
)

#: What the tests' servers idle for: short, so none outlives the test by much.
IDLE_S = "3"
#: The generous bound for "answered at once" (the old behaviour took 30 s, then failed).
PROMPT_S = 10.0
#: When the server had to be started again (importing it on a loaded machine).
RESTART_S = 20.0


def _env(home: Path, **extra: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PYTHONPATH": str(REPO),
        "FRESH_LS_SERVER_IDLE_S": IDLE_S,
        **extra,
    }


def _claude_env(home: Path) -> dict[str, str]:
    return _env(
        home,
        ANTHROPIC_API_KEY="sk-test-not-a-real-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_AUTOUPDATER="1",
        IS_SANDBOX="1",
    )


def _fresh_ls(*args: str) -> list[str]:
    return [sys.executable, "-P", "-m", "fresh_ls", *args]


def _run_claude(root: Path, home: Path, model_url: str) -> subprocess.Popen[str]:
    """`fresh-ls run -- claude -p ...` (Read and Bash granted), not waited for."""
    argv = _fresh_ls(
        "run", "--root", str(root), "--anthropic-upstream", model_url,
        "--openai-upstream", model_url, "--",
        str(CLAUDE), "-p", "Look at calc.py.", "--output-format", "json",
        "--allowedTools", "Read,Bash", "--model", "claude-sonnet-4-5",
    )  # fmt: skip
    return subprocess.Popen(
        argv,
        cwd=root,
        env=_claude_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def _wait_flag(flag: Path) -> Reply:
    """A Bash call that returns once ``flag`` exists (the test's go-ahead)."""
    command = f"while [ ! -e {flag} ]; do sleep 0.1; done; echo go"
    return Reply(tool="Bash", input={"command": command, "description": "wait"})


def _script(root: Path, flag: Path) -> list[Any]:
    return [
        Reply(tool="Read", input={"file_path": str(root / "calc.py")}),
        _wait_flag(flag),  # the read's view is registered; the run now waits for the test
        Reply(text="Done."),
    ]


def _wait_for(what: str, check: Any, timeout: float, *procs: subprocess.Popen[str]) -> float:
    """Poll ``check`` until true; the time it took. Fails with the runs' stderr when a run
    ended first or time ran out."""
    start = time.monotonic()
    while not check():
        ended = [p for p in procs if p.poll() is not None]
        if ended or time.monotonic() - start > timeout:
            errors = "\n".join(_stderr(p) for p in (ended or procs))
            raise AssertionError(f"{what}: not within {timeout:g} s\n{errors}")
        time.sleep(0.05)
    return time.monotonic() - start


def _stderr(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        return f"(pid {proc.pid} still running)"
    return proc.stderr.read() if proc.stderr else ""


def _finished(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[str, str]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    outcome = json.loads(out)
    assert outcome.get("is_error") is False, outcome
    return out, err


def _server_pid(root: Path) -> int:
    endpoint = json.loads((root / ".fresh-ls" / "endpoint.json").read_text())
    return int(endpoint["pid"])


def _scripted(model: Any) -> list[Record]:
    return [r for r in model.model_requests if r.turn is not None]


def _current_after_change(record: Record, root: Path) -> None:
    """The request shows calc.py as the disk held it: no stale Read result, the first
    read replaced by a marker, the changed line in the request, every refresh exact."""
    assert stale_results(record, root) == []
    (view_id, _, marker), *_ = read_results(record)
    assert "[fresh-ls]" in marker and view_id in marker and "calc.py" in marker, marker
    assert "return quantity * RATE * 2" in json.dumps(record.body)
    assert refresh_problems(record) == []


@pytest.fixture
def no_server_left(workspace: Path) -> Iterator[None]:
    """After the test: the root's server (if one still runs) is stopped."""
    yield
    lock = workspace / ".fresh-ls" / "server.lock"
    try:
        pid = int(lock.read_text().strip() or 0)
    except (OSError, ValueError):
        return
    if alive(pid):
        os.kill(pid, signal.SIGTERM)


@needs_claude
def test_two_runs_the_first_exits_the_second_is_answered_at_once(
    workspace: Path, start_model, tmp_path: Path, no_server_left: None
) -> None:
    _setup(workspace)
    flag_a, flag_b = tmp_path / "a-go", tmp_path / "b-go"
    model_a = start_model(_script(workspace, flag_a))
    model_b = start_model(_script(workspace, flag_b))
    first = _run_claude(workspace, tmp_path / "home-a", model_a.url)
    _wait_for("the first run's read", lambda: len(_scripted(model_a)) >= 2, 120, first)
    server = _server_pid(workspace)  # the first run started it
    second = _run_claude(workspace, tmp_path / "home-b", model_b.url)
    _wait_for("the second run's read", lambda: len(_scripted(model_b)) >= 2, 120, second)
    flag_a.touch()
    _finished(first)
    assert alive(server) and _server_pid(workspace) == server  # it outlived its starter
    (workspace / "calc.py").write_text(CALC_CHANGED)
    flag_b.touch()
    took = _wait_for("the second run's next request", lambda: len(_scripted(model_b)) >= 3,
                     60, second)  # fmt: skip
    print(f"the second run's request with a view, after the first exited: {took:.2f} s")
    assert took < PROMPT_S, f"the request with a view took {took:.1f} s"
    _finished(second)
    _current_after_change(_scripted(model_b)[2], workspace)


@needs_claude
def test_a_run_whose_server_was_killed_starts_another(
    workspace: Path, start_model, tmp_path: Path, no_server_left: None
) -> None:
    _setup(workspace)
    flag = tmp_path / "go"
    model = start_model(_script(workspace, flag))
    run = _run_claude(workspace, tmp_path / "home", model.url)
    _wait_for("the run's read", lambda: len(_scripted(model)) >= 2, 120, run)
    killed = _server_pid(workspace)
    os.kill(killed, signal.SIGKILL)
    (workspace / "calc.py").write_text(CALC_CHANGED)
    flag.touch()
    took = _wait_for("the next request", lambda: len(_scripted(model)) >= 3, 90, run)
    print(f"the run's request after its server was SIGKILLed: {took:.2f} s")
    assert took < RESTART_S, f"the request after the server died took {took:.1f} s"
    _finished(run)
    assert _server_pid(workspace) != killed  # a new server answered
    _current_after_change(_scripted(model)[2], workspace)


def test_the_shared_server_exits_once_idle(workspace: Path, start_model, tmp_path: Path) -> None:
    """`run` ends; the server it started stays for its idle time, then exits and takes its
    endpoint along (no agent needed: any command)."""
    model = start_model([])
    done = subprocess.run(
        _fresh_ls("run", "--root", str(workspace), "--anthropic-upstream", model.url,
                  "--openai-upstream", model.url, "--", "true"),
        env=_env(tmp_path / "home"), capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    pid = _server_pid(workspace)
    assert alive(pid)
    deadline = time.monotonic() + 60
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid), "the server did not exit once idle"
    assert not (workspace / ".fresh-ls" / "endpoint.json").exists()
    log = workspace / ".fresh-ls" / "server.log"
    assert log.is_file() and log.stat().st_mode & 0o077 == 0


# -- Codex: exec, an outside change, exec resume --last ----------------------------------------


CODEX_FLAGS = [
    "--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox",
    "--disable", "plugins", "--disable", "remote_plugin", "--disable", "apps",
]  # fmt: skip


def _exec_then_resume(
    root: Path, tmp_path: Path, model: Any, through_run: bool
) -> tuple[Record, Record]:
    """`codex exec` reads calc.py and stops; calc.py changes outside; `codex exec resume
    --last` asks on. Each through its own `fresh-ls run` (the resume's proxy knows nothing
    of the first run's), or (the control) straight at the model. The first exec's last
    request and the resumed one, as the model received them."""
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    config = 'model = "fake-model"\ncheck_for_update_on_startup = false\n'
    if not through_run:  # the control names its provider (run adds fresh-ls's own)
        config += (
            f'model_provider = "fake"\n[model_providers.fake]\nname = "fake"\n'
            f'base_url = "{model.url}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
    (codex_home / "config.toml").write_text(config + "[analytics]\nenabled = false\n")
    env = _env(home, CODEX_HOME=str(codex_home), OPENAI_API_KEY="sk-test-not-a-real-key")
    run = _fresh_ls(
        "run", "--root", str(root), "--openai-upstream", model.url + "/v1",
        "--anthropic-upstream", model.url, "--",
    )  # fmt: skip

    def codex(*task: str) -> None:
        argv = [*(run if through_run else []), str(CODEX), "exec", *CODEX_FLAGS, *task]
        done = subprocess.run(
            argv, cwd=root, env=env, capture_output=True, text=True, timeout=240,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        events = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
        assert any(e.get("type") == "turn.completed" for e in events), done.stdout

    codex("Read calc.py.")
    assert [r.turn for r in _scripted(model)] == [0, 1]
    (root / "calc.py").write_text(CALC_CHANGED)
    codex("resume", "--last", "Is calc.py still as you read it?")
    first, resumed = _scripted(model)[1], _scripted(model)[2]
    assert resumed.turn == 2
    return first, resumed


CODEX_RESUME_SCRIPT = [
    Reply(tool="exec_command", input={"cmd": "cat -n calc.py"}),
    Reply(text="calc.py read."),
    Reply(text="Seen calc.py."),
]


@needs_codex
def test_codex_resume_after_an_outside_change_sees_current_code(
    workspace: Path, start_model, tmp_path: Path, no_server_left: None
) -> None:
    """Through `fresh-ls run` (no Codex provider config): the resumed request re-sends the
    first exec's listing, and the model is shown the current code instead."""
    _setup(workspace)
    model = start_model(CODEX_RESUME_SCRIPT)
    first, resumed = _exec_then_resume(workspace, tmp_path, model, through_run=True)
    assert resumed.turn == 2
    (call_id, _, marker), *_ = codex_listings(resumed)  # the first exec's listing, re-sent
    assert "[fresh-ls]" in marker and call_id in marker, marker
    assert codex_stale(resumed) == []
    assert "return quantity * RATE * 2" in json.dumps(resumed.body["input"])
    assert refresh_problems(resumed) == []
    (_, _, shown), *_ = codex_listings(first)  # what the first exec saw: the old code
    assert "return quantity * RATE" in shown and "RATE * 2" not in shown


@needs_codex
def test_codex_resume_control_without_fresh_ls(
    workspace: Path, start_model, tmp_path: Path
) -> None:
    """The same straight at the model: the resumed request shows the stale listing."""
    _setup(workspace)
    model = start_model(CODEX_RESUME_SCRIPT)
    _, resumed = _exec_then_resume(workspace, tmp_path, model, through_run=False)
    stale = codex_stale(resumed)
    assert stale and "calc.py" in stale[0], stale


# -- the parts: who holds the root, one start for two clients, the idle time -----------------


def test_idle_time_comes_from_the_environment() -> None:
    assert idle_exit_s({}) == DEFAULT_IDLE_EXIT_S
    assert idle_exit_s({IDLE_ENV: "2.5"}) == 2.5
    for bad in ("0", "-3", "soon", "inf", "nan"):
        assert idle_exit_s({IDLE_ENV: bad}) == DEFAULT_IDLE_EXIT_S, bad


def test_root_held_asks_the_lock_not_only_the_pid(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert not root_held(state)  # no lock file at all
    lock = RootLock.acquire(state)
    try:
        assert root_held(state)
        # asking did not take the lock from its holder, and a server starting while a
        # client asks still gets it (it retries for an instant)
        assert root_held(state)
    finally:
        lock.release()
    assert not root_held(state)  # the pid in the file is ours and alive, the lock is free
    (state / "server.lock").write_text(str(2**22 + 12345))  # a pid no process has
    assert not root_held(state)


def test_two_clients_that_find_no_server_start_one(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def both() -> list[dict[str, Any]]:
        clients = await asyncio.gather(*(AsyncClient.shared(workspace) for _ in range(2)))
        try:
            return [await c.status() for c in clients]
        finally:
            for c in clients:
                await c.close()

    monkeypatch.setenv(IDLE_ENV, IDLE_S)
    statuses = asyncio.run(both())
    pid = _server_pid(workspace)
    try:
        assert [s["root"] for s in statuses] == [str(workspace)] * 2
        log = (workspace / ".fresh-ls" / "server.log").read_text()
        assert "already runs" not in log, log  # no second server was started and refused
    finally:
        os.kill(pid, signal.SIGTERM)


def test_a_server_that_cannot_start_is_named_in_one_line(workspace: Path) -> None:
    state = workspace / ".fresh-ls"
    state.mkdir()
    (state / "views.sqlite3").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ConnectionClosedError) as caught:
        asyncio.run(AsyncClient.shared(workspace))
    message = str(caught.value)
    assert "exited with status 4" in message and "doctor" in message, message
    assert str(state / "server.log") in message and "\n" not in message
