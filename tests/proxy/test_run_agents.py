"""`fresh-ls run` knows the agents it starts: Codex (which ignores OPENAI_BASE_URL for its
built-in provider) is routed with -c overrides, no user config needed; any command that
sends no model request through the proxies for a while gets a warning naming the
variables `run` set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fresh_ls.proxy.agent_routes import CODEX_PROVIDER, codex_upstream, routed
from tests.proxy.conftest import REPO
from tests.proxy.test_agents_e2e import (
    CODEX,
    _codex_finished,
    _codex_script,
    _setup,
    codex_stale,
    needs_codex,
)

URL = "http://127.0.0.1:4000/fresh-abc"


def _home(tmp_path: Path, config: str) -> dict[str, str]:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(config)
    return {"CODEX_HOME": str(codex_home), "HOME": str(tmp_path)}


def test_codex_builtin_provider_gets_fresh_ls_own(tmp_path: Path) -> None:
    env = _home(tmp_path, 'model = "gpt-5.5"\n')
    argv = routed(["codex", "exec", "hi"], URL, env)
    assert argv[0] == "codex" and argv[-2:] == ["exec", "hi"]
    assert f'model_provider="{CODEX_PROVIDER}"' in argv
    assert any(a.startswith(f"model_providers.{CODEX_PROVIDER}=") and URL in a for a in argv)
    assert codex_upstream(["codex"], env) is None
    assert (tmp_path / "codex-home" / "config.toml").read_text() == 'model = "gpt-5.5"\n'


def test_codex_own_provider_keeps_it_and_its_upstream(tmp_path: Path) -> None:
    env = _home(
        tmp_path,
        'model_provider = "corp"\n[model_providers.corp]\nbase_url = "https://llm.corp/v1"\n',
    )
    argv = routed(["/opt/bin/codex", "exec", "hi"], URL, env)
    assert argv == ["/opt/bin/codex", "-c", f'model_providers.corp.base_url="{URL}"', "exec", "hi"]
    assert codex_upstream(["codex"], env) == "https://llm.corp/v1"


def test_other_agents_are_left_as_they_are(tmp_path: Path) -> None:
    assert routed(["claude", "-p", "x"], URL, _home(tmp_path, "")) == ["claude", "-p", "x"]


def test_run_warns_when_nothing_reached_the_proxies(workspace: Path, start_model) -> None:
    model = start_model([])
    env = {**os.environ, "PYTHONPATH": str(REPO), "FRESH_LS_RUN_QUIET_S": "1"}
    done = subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", "run", "--root", str(workspace),
         "--anthropic-upstream", model.url, "--openai-upstream", model.url,
         "--", sys.executable, "-c", "import time; time.sleep(4)"],
        capture_output=True, text=True, env=env, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "sent no model request through fresh-ls" in done.stderr, done.stderr
    assert "ANTHROPIC_BASE_URL" in done.stderr and "OPENAI_BASE_URL" in done.stderr


@needs_codex
def test_codex_through_run_without_any_provider_config(
    workspace: Path, start_model, tmp_path: Path
) -> None:
    """The real Codex, its config naming no provider (the built-in one), through `fresh-ls
    run`: its requests reach the scripted model through the proxy, and the stale listing
    is replaced (the proxy's own checks, as in test_agents_e2e)."""
    _setup(workspace)
    model = start_model(_codex_script(workspace))
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(
        'model = "fake-model"\ncheck_for_update_on_startup = false\n[analytics]\nenabled = false\n'
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [sys.executable, "-P", "-m", "fresh_ls", "run", "--root", str(workspace),
         "--openai-upstream", model.url + "/v1", "--anthropic-upstream", model.url, "--",
         str(CODEX), "exec", "--skip-git-repo-check", "--json",
         "--dangerously-bypass-approvals-and-sandbox", "--disable", "plugins", "--disable",
         "remote_plugin", "--disable", "apps", "Make tax() divide by 4."],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=240,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    _codex_finished(done, workspace)
    assert "routed with -c model_provider overrides" in done.stderr
    scripted = [r for r in model.model_requests if r.turn is not None]
    assert [r.turn for r in scripted] == [0, 1, 2, 3]
    for record in scripted:
        assert codex_stale(record) == [], f"turn {record.turn}"
    assert "return quantity * RATE * 2" in str(scripted[2].body["input"])
    assert "sk-test-not-a-real-key" not in done.stderr
