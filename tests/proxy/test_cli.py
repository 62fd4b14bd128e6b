"""`fresh-ls run -- CMD`, `fresh-ls status` showing the proxy, and `--log-requests`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.proxy.conftest import REPO

KEY = "sk-test-not-logged-42"

CHILD = """
import json, os, sys, urllib.request
def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "k"})
    return urllib.request.urlopen(req, timeout=30).read()
post(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", {"model": "m", "messages": []})
post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", {"model": "m", "messages": []})
print(os.environ["ANTHROPIC_BASE_URL"], os.environ["OPENAI_BASE_URL"])
sys.exit(7)
"""


def _cli(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "fresh_ls", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )


def test_run_points_both_base_urls_at_proxies(workspace: Path, start_model) -> None:
    anthropic = start_model([])
    openai = start_model([])
    done = _cli(
        "run",
        "--root",
        str(workspace),
        "--anthropic-upstream",
        anthropic.url,
        "--openai-upstream",
        openai.url + "/v1",
        "--",
        sys.executable,
        "-c",
        CHILD,
        timeout=90,
    )
    assert done.returncode == 7, done.stderr
    a_url, o_url = done.stdout.split()
    assert a_url.startswith("http://127.0.0.1:") and o_url.startswith("http://127.0.0.1:")
    assert [r.path for r in anthropic.records] == ["/v1/messages"]
    assert [r.path for r in openai.records] == ["/v1/chat/completions"]
    assert not list((workspace / ".fresh-ls").glob("proxy*.json"))  # both stopped


def test_run_without_a_command(workspace: Path) -> None:
    done = _cli("run", "--root", str(workspace))
    assert done.returncode == 2 and "say what to run" in done.stderr


def test_status_shows_the_proxy_and_log_requests(
    workspace: Path, start_model, start_proxy, tmp_path: Path
) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    model = start_model([])
    logs = tmp_path / "logs"
    proxy = start_proxy(workspace, model.url, "--log-requests", str(logs))
    body = {
        "model": "m",
        "system": "s",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_9",
                        "name": "Read",
                        "input": {"file_path": str(workspace / "a.py")},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_9", "content": "1\tx = 1\n2\t"}
                ],
            },
        ],
    }
    req = urllib.request.Request(
        proxy.url + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": KEY, "x-fresh-ls-session": "s1"},
    )
    urllib.request.urlopen(req, timeout=30).read()
    deadline = time.monotonic() + 10
    while proxy.record().get("requests") != 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    status = _cli("status", "--root", str(workspace))
    assert status.returncode == 0, status.stderr
    assert f"proxy {proxy.url} -> {model.url}" in status.stdout
    assert "1 model request, 0 rewritten, 1 session" in status.stdout
    assert "s1: 1 request, 0 rewritten, 1 view" in status.stdout
    as_json = json.loads(_cli("status", "--root", str(workspace), "--json").stdout)
    assert as_json["proxies"][0]["url"] == proxy.url
    (logged,) = sorted(logs.iterdir())
    entry = json.loads(logged.read_text())
    assert entry["original"] == body and entry["sent"] == body and entry["session"] == "s1"
    assert KEY not in logged.read_text()
    assert {k.lower(): v for k, v in entry["headers"].items()}["x-api-key"] == "<removed>"
    assert oct(logged.stat().st_mode & 0o777) == "0o600"
    assert KEY not in proxy.stop()


def _post(url: str, body: dict) -> bytes:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    return urllib.request.urlopen(req, timeout=30).read()


def _proxies(*args: str, stdin: int) -> subprocess.Popen[str]:
    """`fresh-ls proxies ARGS` as a child, its stdout read line by line."""
    return subprocess.Popen(
        [sys.executable, "-m", "fresh_ls", "proxies", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_proxies_serves_both_until_stdin_closes(workspace: Path, start_model) -> None:
    """`fresh-ls proxies --exit-with-stdin`: the first stdout line names both base URLs,
    each reaches its own upstream, and closing stdin stops both (records removed)."""
    anthropic = start_model([])
    openai = start_model([])
    proc = _proxies(
        "--root", str(workspace), "--anthropic-upstream", anthropic.url,
        "--openai-upstream", openai.url + "/v1", "--exit-with-stdin",
        stdin=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdin is not None
        first = json.loads(proc.stdout.readline())
        assert first["pid"] == proc.pid
        assert first["anthropicUpstream"] == anthropic.url
        _post(first["anthropic"] + "/v1/messages", {"model": "m", "messages": []})
        _post(first["openai"] + "/chat/completions", {"model": "m", "messages": []})
        assert [r.path for r in anthropic.records] == ["/v1/messages"]
        assert [r.path for r in openai.records] == ["/v1/chat/completions"]
        records = {p.name for p in (workspace / ".fresh-ls").glob("proxy*.json")}
        assert records == {"proxy.json", "proxy-openai.json"}
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""
        assert not list((workspace / ".fresh-ls").glob("proxy*.json"))
    finally:
        _reap(proc)


def test_proxies_stops_on_sigterm(workspace: Path, start_model) -> None:
    model = start_model([])
    proc = _proxies(
        "--root", str(workspace), "--anthropic-upstream", model.url,
        "--openai-upstream", model.url,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())  # without --exit-with-stdin, /dev/null is no stop
        assert proc.poll() is None
        proc.terminate()
        assert proc.wait(timeout=30) == 0
        assert not list((workspace / ".fresh-ls").glob("proxy*.json"))
    finally:
        _reap(proc)


def _reap(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_run_in_a_subfolder_protects_the_whole_repository(workspace: Path, start_model) -> None:
    """Started in a subfolder of a git repository, `run` takes the repository's top level
    as its root (an agent there edits the whole repository) and says so on its first line;
    outside a repository it takes the current folder, and says that."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    sub = workspace / "pkg" / "sub"
    sub.mkdir(parents=True)
    model = start_model([])
    record = workspace / ".fresh-ls" / "proxy.json"
    check = "import os, sys; sys.exit(0 if os.path.exists(sys.argv[1]) else 3)"
    done = _cli(
        "run", "--anthropic-upstream", model.url, "--openai-upstream", model.url, "--",
        sys.executable, "-c", check, str(record), cwd=sub, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0]
    assert first == f"fresh-ls run: root {workspace} (the git repository's top level)", first
    plain = workspace.parent / "plain"
    plain.mkdir()
    done = _cli(
        "run", "--anthropic-upstream", model.url, "--openai-upstream", model.url, "--",
        sys.executable, "-c", check, str(plain / ".fresh-ls" / "proxy.json"), cwd=plain,
        timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0].startswith(f"fresh-ls run: root {plain} (the current")


def test_proxies_keep_their_base_urls_across_runs(workspace: Path, start_model) -> None:
    """Given the ports and the secret of a run before (as the editor's terminal proxy keeps
    them), `fresh-ls proxies` serves the same base URLs again; a port in use is one line on
    stderr and exit 3, so the caller can pick others."""
    model = start_model([])
    secret = "s3cret-of-the-editor_0123"
    env = {**os.environ, "PYTHONPATH": str(REPO), "FRESH_LS_PROXY_SECRET": secret}

    def run(*ports: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "fresh_ls", "proxies", "--root", str(workspace),
             "--anthropic-upstream", model.url, "--openai-upstream", model.url + "/v1",
             "--exit-with-stdin", *ports],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env,
        )  # fmt: skip

    first = run()
    try:
        assert first.stdout is not None and first.stdin is not None
        urls = json.loads(first.stdout.readline())
        assert urls["anthropic"].endswith("/fresh-" + secret)
        a_port = urls["anthropic"].rsplit(":", 1)[1].split("/")[0]
        o_port = urls["openai"].rsplit(":", 1)[1].split("/")[0]
        ports = ("--anthropic-port", a_port, "--openai-port", o_port)
        busy = run(*ports)  # the first run holds them
        assert busy.wait(timeout=60) == 3
        assert busy.stderr is not None and "in use" in busy.stderr.read()
        _reap(busy)
        first.stdin.close()
        assert first.wait(timeout=30) == 0
    finally:
        _reap(first)
    again = run(*ports)
    try:
        assert again.stdout is not None
        same = json.loads(again.stdout.readline())
        assert (same["anthropic"], same["openai"]) == (urls["anthropic"], urls["openai"])
        _post(same["anthropic"] + "/v1/messages", {"model": "m", "messages": []})
        assert [r.path for r in model.records] == ["/v1/messages"]
    finally:
        _reap(again)


def test_proxies_refuse_a_weak_secret(workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fresh_ls", "proxies", "--root", str(workspace)],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO), "FRESH_LS_PROXY_SECRET": "short"},
    )  # fmt: skip
    assert done.returncode == 2 and "FRESH_LS_PROXY_SECRET" in done.stderr
