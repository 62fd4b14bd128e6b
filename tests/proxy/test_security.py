"""The proxy under attack (issue 21): only its agent may use it, and every wait and size is
bounded. Each test starts the real proxy (a child process, or in this process when a limit is
set smaller) on 127.0.0.1 with a scripted or a misbehaving upstream."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.proxy.conftest import REPO

SECRET_TEXT = "API_TOKEN = 'only-the-owner-may-read-this'\n"


def read_body(path: Path, result: str, call_id: str = "toolu_01", tool: str = "Read") -> Any:
    """An Anthropic request whose history holds one tool call on ``path`` and its result."""
    args = {"file_path": str(path)} if tool == "Read" else {"command": f"tail -n 3 {path}"}
    return {
        "model": "m",
        "tools": [{"name": tool}],
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": args}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
            },
        ],
    }


def send(
    url: str,
    body: Any = None,
    method: str = "POST",
    headers: dict[str, str] | None = None,
    data: bytes | None = None,
    timeout: float = 30,
) -> tuple[int, dict[str, Any] | None]:
    """One request; its status and JSON answer (None when it is not JSON)."""
    payload = (
        data if data is not None else (json.dumps(body).encode() if body is not None else None)
    )
    req = urllib.request.Request(
        url,
        data=payload,
        method=method,
        headers={"content-type": "application/json", "x-api-key": "k", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


def raw_exchange(host: str, port: int, head: bytes, timeout: float = 10) -> bytes:
    """Send ``head`` (a request line and headers, maybe no body) and read what comes back."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(head)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
                if b"\r\n\r\n" in b"".join(chunks):
                    break
        except TimeoutError:
            pass
        return b"".join(chunks)


def origin_of(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname and parts.port
    return parts.hostname, parts.port


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


class Hung:
    """An upstream on 127.0.0.1 that misbehaves: ``hang`` (reads the request, never
    answers), ``drop`` (closes at once), ``garbage`` (answers bytes that are no HTTP)."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(512)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            if self.how == "hang":
                self.held.append(conn)
            elif self.how == "drop":
                conn.recv(65536)
                conn.close()
            else:
                conn.recv(65536)
                conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\nthis is no HTTP\r\n\r\n")
                conn.close()

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def hung() -> Iterator[Any]:
    made: list[Hung] = []

    def make(how: str) -> Hung:
        made.append(Hung(how))
        return made[-1]

    yield make
    for each in made:
        each.close()


# -- High 1: a proxy only its agent can use ---------------------------------------------------


def test_only_the_agent_with_the_secret_is_served(
    workspace: Path, start_model, start_proxy
) -> None:
    """Another local process that knows the port but not the base URL's secret gets 403 in
    the API's format, and nothing reaches the upstream; so do a foreign ``Host`` (DNS
    rebinding), a CORS preflight and any request with an ``Origin``. The agent's base URL
    (the one printed and kept in proxy.json, mode 0600) is served, the secret removed."""
    secret = workspace / "secret.py"
    secret.write_text(SECRET_TEXT)
    model = start_model([])
    proxy = start_proxy(workspace, model.url)
    host, port = origin_of(proxy.url)
    assert urlsplit(proxy.url).path.startswith("/fresh-")
    assert proxy.record()["url"] == proxy.url
    assert oct((workspace / ".fresh-ls" / "proxy.json").stat().st_mode & 0o777) == "0o600"
    body = read_body(secret, "1\tAPI_TOKEN = 'forged'\n2\t")
    bare = f"http://{host}:{port}"
    status, answer = send(bare + "/v1/messages", body)
    assert status == 403 and answer is not None
    assert answer["type"] == "error" and answer["error"]["type"] == "permission_error"
    wrong = bare + "/fresh-" + "A" * len(urlsplit(proxy.url).path.removeprefix("/fresh-"))
    assert send(wrong + "/v1/messages", body)[0] == 403
    assert send(proxy.url + "x/v1/messages", body)[0] == 403  # a longer segment is no match
    rebound = {"Host": f"evil.example:{port}"}
    assert send(proxy.url + "/v1/messages", body, headers=rebound)[0] == 403
    assert (
        send(proxy.url + "/v1/messages", body, headers={"Host": f"127.0.0.1:{port + 1}"})[0] == 403
    )
    assert send(proxy.url + "/v1/messages", body, headers={"Origin": "http://x.example"})[0] == 403
    status, answer = send(proxy.url + "/v1/messages", method="OPTIONS")
    assert status == 403 and answer is not None and "error" in answer
    assert model.records == []  # nothing of it went upstream
    # Decided on the headers: a refused request that announces a body never sends is
    # answered at once (the proxy does not wait for the body).
    head = (
        f"POST /v1/messages HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"
    ).encode()
    assert raw_exchange(host, port, head).startswith(b"HTTP/1.1 403")
    for name in ("localhost", "127.0.0.1"):
        status, _ = send(proxy.url.replace("127.0.0.1", name) + "/v1/messages", body)
        assert status == 200
    assert [r.path for r in model.records] == ["/v1/messages", "/v1/messages"]
    assert "/fresh-" not in json.dumps([r.headers for r in model.records])
    assert urlsplit(proxy.url).path not in proxy.stop()


RUN_CHILD = """
import json, os, urllib.error, urllib.request
from urllib.parse import urlsplit
def status(url):
    req = urllib.request.Request(url, data=b'{"model": "m", "messages": []}',
        headers={"content-type": "application/json"})
    try:
        return urllib.request.urlopen(req, timeout=30).status
    except urllib.error.HTTPError as exc:
        return exc.code
out = {}
for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
    url = os.environ[name]
    parts = urlsplit(url)
    out[name] = [parts.path, status(url + "/v1/messages"),
                 status(f"http://{parts.netloc}/v1/messages")]
print(json.dumps(out))
"""


def _cli(*args: str, **kw: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "fresh_ls", *args], text=True, env=env, **kw)


def test_run_and_proxies_hand_out_the_secret(workspace: Path, start_model) -> None:
    """``run``'s variables and ``proxies``' line carry the secret: with it a request is
    served, without it (same port) refused."""
    model = start_model([])
    up = ["--anthropic-upstream", model.url, "--openai-upstream", model.url]
    run = _cli(
        "run",
        "--root",
        str(workspace),
        *up,
        "--",
        sys.executable,
        "-c",
        RUN_CHILD,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = run.communicate(timeout=90)
    assert run.returncode == 0, err
    seen = json.loads(out)
    for path, served, bare in seen.values():
        assert path.startswith("/fresh-") and (served, bare) == (200, 403)
    pair = _cli(
        "proxies",
        "--root",
        str(workspace),
        *up,
        "--exit-with-stdin",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert pair.stdout is not None
        line = json.loads(pair.stdout.readline())
        for name in ("anthropic", "openai"):
            assert urlsplit(line[name]).path.startswith("/fresh-")
            assert send(line[name] + "/v1/messages", {"model": "m", "messages": []})[0] == 200
            bare = "http://" + urlsplit(line[name]).netloc
            assert send(bare + "/v1/messages", {"model": "m", "messages": []})[0] == 403
    finally:
        assert pair.stdin is not None
        pair.stdin.close()
        pair.wait(30)
