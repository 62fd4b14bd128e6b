"""The proxy under attack (issue 21): only its agent may use it, and every wait and size is
bounded. Each test starts the real proxy (a child process, or in this process when a limit is
set smaller) on 127.0.0.1 with a scripted or a misbehaving upstream."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiohttp import ClientSession

from fresh_ls.proxy.limits import Limits
from fresh_ls.proxy.serve import running_proxy
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


# -- Medium 5: upstream timeouts; a client that gives up cancels the upstream call -----------


def _half_open(host: str, port: int, head: bytes, timeout: float = 2) -> socket.socket | None:
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.sendall(head)
        return sock
    except OSError:
        return None


def _wait(check: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return bool(check())


def test_clients_that_give_up_cancel_the_upstream_call(workspace: Path, hung, start_proxy) -> None:
    """105 clients give up on a hung upstream: the proxy drops their upstream connections
    (its open fds come back down) and a new request still reaches the upstream."""
    up = hung("hang")
    proxy = start_proxy(workspace, up.url)
    pid = proxy.proc.pid
    host, port = origin_of(proxy.url)
    path = urlsplit(proxy.url).path
    baseline = open_fds(pid)
    head = f"GET {path}/v1/models HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
    clients = [_half_open(host, port, head) for _ in range(105)]
    assert _wait(lambda: up.accepted >= 100, 30), up.accepted
    for sock in clients:
        if sock is not None:
            sock.close()
    assert _wait(lambda: open_fds(pid) <= baseline + 5, 15), (baseline, open_fds(pid))
    before = up.accepted
    late = _half_open(host, port, head)
    try:
        assert _wait(lambda: up.accepted > before, 15)  # the pool was not left full
    finally:
        if late is not None:
            late.close()


async def test_a_hung_upstream_read_times_out_as_504(workspace: Path, hung) -> None:
    up = hung("hang")
    limits = Limits(upstream_read_timeout=1.0)
    async with (
        running_proxy(workspace, up.url, limits=limits) as (_proxy, url),
        ClientSession() as http,
        http.post(url + "/v1/messages", json={"model": "m", "messages": []}) as resp,
    ):
        answer = await resp.json()
        assert resp.status == 504
        assert answer["type"] == "error" and "no answer within 1 s" in answer["error"]["message"]


# -- Medium 6: shell reads open only regular files, size first ---------------------------------


def test_tail_of_a_fifo_does_not_block_the_proxy(workspace: Path, start_model, start_proxy) -> None:
    fifo = workspace / "pipe.log"
    os.mkfifo(fifo)
    model = start_model([])
    proxy = start_proxy(workspace, model.url)
    body = read_body(fifo, "a\nb\nc\n", tool="Bash")
    status, _ = send(proxy.url + "/v1/messages", body, timeout=20)
    assert status == 200
    assert send(proxy.url + "/v1/models", method="GET", timeout=20)[0] == 200


def test_tail_of_a_huge_log_is_not_read_whole(workspace: Path, start_model, start_proxy) -> None:
    """``tail -n 3`` of a 300 MB log: the proxy does not read (and hold) the whole file."""
    log = workspace / "big.log"
    with log.open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)
        handle.seek(0, os.SEEK_END)
        handle.write(b"\nx\ny\nz\n")
    model = start_model([])
    proxy = start_proxy(workspace, model.url)
    pid = proxy.proc.pid
    send(proxy.url + "/v1/messages", {"model": "m", "messages": []})  # warm
    before = peak_rss_kib(pid)
    status, _ = send(proxy.url + "/v1/messages", read_body(log, "x\ny\nz\n", tool="Bash"))
    assert status == 200
    assert peak_rss_kib(pid) - before < 64 * 1024, (before, peak_rss_kib(pid))


# -- Medium 8: the decompressed size is capped while decompressing ------------------------------


def test_a_gzip_bomb_is_refused_with_413(workspace: Path, start_model, start_proxy) -> None:
    """600 MiB of JSON whitespace gzipped to well under 1 MiB: refused (413, in the API's
    format) once past the body limit, without ever being expanded whole."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(b'{"model": "m", "messages": []')]
    block = b" " * (1 << 20)
    parts += [packer.compress(block) for _ in range(600)]
    parts += [packer.compress(b"}"), packer.flush()]
    bomb = b"".join(parts)
    assert len(bomb) < 1 << 20
    model = start_model([])
    proxy = start_proxy(workspace, model.url)
    pid = proxy.proc.pid
    send(proxy.url + "/v1/messages", {"model": "m", "messages": []})  # warm
    before = peak_rss_kib(pid)
    status, answer = send(
        proxy.url + "/v1/messages", data=bomb, headers={"content-encoding": "gzip"}
    )
    assert status == 413 and answer is not None
    assert answer["error"]["type"] == "request_too_large"
    assert peak_rss_kib(pid) - before < 450 * 1024
    assert len(model.model_requests) == 1  # only the warm-up went upstream


# -- Medium 9: header/body timeouts and a connection cap ---------------------------------------


def test_a_flood_of_half_sent_requests_does_not_starve_a_real_one(
    workspace: Path, start_model, start_proxy
) -> None:
    """1,100 connections that never finish their headers (on a proxy with the usual limit
    of 1,024 open files) do not keep the agent's request out."""
    model = start_model([])
    proxy = start_proxy(workspace, model.url)
    pid = proxy.proc.pid
    _soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (1024, hard))
    host, port = origin_of(proxy.url)
    path = urlsplit(proxy.url).path
    half = f"POST {path}/v1/messages HTTP/1.1\r\nHost: {host}:{port}\r\nContent-".encode()
    flood = [_half_open(host, port, half, timeout=1) for _ in range(1100)]
    try:
        status, _ = send(proxy.url + "/v1/messages", {"model": "m", "messages": []}, timeout=15)
        assert status == 200
        assert open_fds(pid) < 400
    finally:
        for sock in flood:
            if sock is not None:
                sock.close()


async def test_a_body_that_never_arrives_times_out(workspace: Path, start_model) -> None:
    model = start_model([])
    limits = Limits(body_timeout=1.0)
    async with running_proxy(workspace, model.url, limits=limits) as (_proxy, url):
        host, port = origin_of(url)
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(
            f"POST {urlsplit(url).path}/v1/messages HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
        )
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(65536), 30)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408")
        assert model.records == []


# -- Medium 11: a deadline on the sidecar ------------------------------------------------------


def test_a_stopped_sidecar_fails_closed_in_seconds(
    workspace: Path, start_model, start_proxy
) -> None:
    """A sidecar that is alive but stopped (SIGSTOP): a request with a new tool result gets
    a 503 in the API's format within the deadline (10 s), not a hang."""
    (workspace / "a.py").write_text("x = 1\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen(
        [sys.executable, "-P", "-m", "fresh_ls", "serve", "--root", str(workspace), "--listen"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert _wait(lambda: (workspace / ".fresh-ls" / "endpoint.json").exists(), 30)
        model = start_model([])
        proxy = start_proxy(workspace, model.url)
        first = read_body(workspace / "a.py", "1\tx = 1\n2\t", call_id="toolu_1")
        assert send(proxy.url + "/v1/messages", first)[0] == 200
        server.send_signal(signal.SIGSTOP)
        second = read_body(workspace / "a.py", "1\tx = 1\n2\t", call_id="toolu_2")
        started = time.monotonic()
        status, answer = send(proxy.url + "/v1/messages", second, timeout=40)
        assert status == 503 and answer is not None
        assert "did not answer within 10 s" in answer["error"]["message"]
        assert time.monotonic() - started < 30  # a generous bound: the deadline is 10 s
        assert len(model.model_requests) == 1  # fail closed: nothing sent
    finally:
        server.send_signal(signal.SIGCONT)
        server.terminate()
        server.wait(30)


# -- Low: upstream failures, logs without credentials, a prompt stop --------------------------


@pytest.mark.parametrize("how", ["drop", "garbage"])
def test_a_broken_upstream_is_a_502_in_the_api_format(
    workspace: Path, hung, start_proxy, how: str
) -> None:
    up = hung(how)
    proxy = start_proxy(workspace, up.url)
    status, answer = send(proxy.url + "/v1/messages", {"model": "m", "messages": []})
    assert status == 502 and answer is not None
    assert answer["type"] == "error" and answer["error"]["type"] == "api_error"
    status, answer = send(proxy.url + "/v1/chat/completions", {"model": "m", "messages": []})
    assert status == 502 and answer is not None and "error" in answer
    stderr = proxy.stop()
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if "upstream" in line]
    assert len(lines) == 2, stderr  # one line per failed request


def test_logged_requests_hold_no_query_keys_or_credential_headers(
    workspace: Path, start_model, start_proxy, tmp_path: Path
) -> None:
    model = start_model([])
    logs = tmp_path / "logs"
    proxy = start_proxy(workspace, model.url, "--log-requests", str(logs))
    status, _ = send(
        proxy.url + "/v1/messages?key=QUERY-SECRET-1&beta=true",
        {"model": "m", "messages": []},
        headers={"x-credential": "HEADER-SECRET-2", "x-goog-api-key": "HEADER-SECRET-3"},
    )
    assert status == 200
    assert model.records[-1].query == "key=QUERY-SECRET-1&beta=true"  # upstream gets them
    (logged,) = sorted(logs.iterdir())
    text = logged.read_text()
    for secret in (
        "QUERY-SECRET-1",
        "HEADER-SECRET-2",
        "HEADER-SECRET-3",
        urlsplit(proxy.url).path,
    ):
        assert secret not in text
    assert json.loads(text)["path"] == "/v1/messages?key=<removed>&beta=true"


def test_sigterm_with_hung_requests_stops_promptly(workspace: Path, hung, start_proxy) -> None:
    up = hung("hang")
    proxy = start_proxy(workspace, up.url)
    host, port = origin_of(proxy.url)
    head = f"GET {urlsplit(proxy.url).path}/v1/models HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
    clients = [_half_open(host, port, head.encode()) for _ in range(3)]
    try:
        assert _wait(lambda: up.accepted >= 3, 30)
        started = time.monotonic()
        proxy.proc.send_signal(signal.SIGTERM)
        proxy.proc.wait(20)
        assert time.monotonic() - started < 15  # generous: it lets requests finish for 2 s
        assert not (workspace / ".fresh-ls" / "proxy.json").exists()
    finally:
        for sock in clients:
            if sock is not None:
                sock.close()
