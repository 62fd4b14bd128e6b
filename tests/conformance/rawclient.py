"""A tiny stdlib-only JSON-RPC client for the fresh-ls wire contract.

Written only from ../shared/design/PROTOCOL.md: it frames messages with the
LSP base protocol (``Content-Length: N\\r\\n\\r\\n`` + JSON body), sends requests
and notifications, collects server notifications, answers server-to-client
requests with a null result, and gives every call a timeout so that a missing
response fails the test instead of hanging it.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

#: The interpreter running the tests is the one with fresh-ls installed (the project's venv).
DEFAULT_PYTHON = sys.executable


class RpcError(Exception):
    """A JSON-RPC error response."""

    def __init__(self, error: dict[str, Any]):
        self.error = error
        self.code = error.get("code")
        self.message = error.get("message", "")
        super().__init__(f"{self.code}: {self.message}")


class RpcTimeout(TimeoutError):
    """No response arrived within the per-call timeout (or the server went away)."""


class RawClient:
    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        python: str = DEFAULT_PYTHON,
        extra_args: list[str] | None = None,
        timeout: float = 15.0,
    ) -> None:
        self.root = Path(root)
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._responses: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self._write_lock = threading.Lock()
        self._eof = False
        self._stderr_path = self.root.parent / f".fresh-ls-stderr-{os.getpid()}-{id(self)}.log"
        self._stderr = open(self._stderr_path, "wb")
        cmd = [python, "-m", "fresh_ls", "serve", "--root", str(root), "--stdio"]
        cmd += extra_args or []
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=str(self.root),
        )
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------- framing
    def _read_loop(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                headers: dict[str, str] = {}
                while True:
                    line = out.readline()
                    if not line:
                        raise EOFError
                    line = line.rstrip(b"\r\n")
                    if not line:
                        break
                    key, _, value = line.decode("ascii").partition(":")
                    headers[key.strip().lower()] = value.strip()
                length = int(headers["content-length"])
                body = b""
                while len(body) < length:
                    chunk = out.read(length - len(body))
                    if not chunk:
                        raise EOFError
                    body += chunk
                self._dispatch(json.loads(body.decode("utf-8")))
        except (EOFError, ValueError, OSError):
            pass
        finally:
            with self._lock:
                self._eof = True
                self._lock.notify_all()

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if "method" in msg and "id" in msg:
            # A server-to-client request: answer it so the server never waits on us.
            with self._lock:
                self.server_requests.append(msg)
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif "method" in msg:
            with self._lock:
                self.notifications.append(msg)
                self._lock.notify_all()
        else:
            with self._lock:
                self._responses[msg.get("id")] = msg
                self._lock.notify_all()

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send_body(self, body: bytes) -> None:
        """Frame an arbitrary (possibly malformed) body and send it."""
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _send(self, msg: dict[str, Any]) -> None:
        self.send_body(json.dumps(msg).encode("utf-8"))

    # ------------------------------------------------------------- calls
    def request_raw(
        self, method: str, params: Any = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a request; return the whole response message (result or error)."""
        rid = next(self._ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        return self.wait_response(rid, timeout)

    def wait_response(self, rid: Any, timeout: float | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        with self._lock:
            while rid not in self._responses:
                if self._eof:
                    raise RpcTimeout(
                        f"server closed its output before answering id {rid!r}; stderr:\n{self.stderr()}"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RpcTimeout(f"no response to id {rid!r} within the timeout")
                self._lock.wait(left)
            return self._responses.pop(rid)

    def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        """Send a request; return its result or raise RpcError."""
        resp = self.request_raw(method, params, timeout)
        if "error" in resp:
            raise RpcError(resp["error"])
        assert "result" in resp, resp
        return resp["result"]

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def wait_notification(
        self, method: str, predicate=None, timeout: float | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        with self._lock:
            seen = 0
            while True:
                for msg in self.notifications[seen:]:
                    if msg["method"] == method and (
                        predicate is None or predicate(msg.get("params"))
                    ):
                        return msg
                seen = len(self.notifications)
                left = deadline - time.monotonic()
                if left <= 0 or self._eof:
                    raise RpcTimeout(f"no {method} notification within the timeout")
                self._lock.wait(left)

    # ------------------------------------------------------------- lifecycle
    def initialize(self, initialization_options: dict[str, Any] | None = None) -> Any:
        params: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": {}}
        if initialization_options is not None:
            params["initializationOptions"] = initialization_options
        result = self.request("initialize", params, timeout=max(self.timeout, 30.0))
        self.notify("initialized", {})
        return result

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stderr(self) -> str:
        try:
            self._stderr.flush()
            return self._stderr_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def close(self) -> None:
        try:
            if self.alive() and not self._eof:
                try:
                    self.request("shutdown", None, timeout=5)
                except (RpcError, RpcTimeout, OSError):
                    pass
                try:
                    self.notify("exit")
                except OSError:
                    pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        finally:
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    if stream:
                        stream.close()
                except OSError:
                    pass
            self._stderr.close()
            try:
                self._stderr_path.unlink()
            except OSError:
                pass

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":  # manual probe: python rawclient.py ROOT METHOD JSON
    root, method, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    with RawClient(root) as c:
        c.initialize()
        print(json.dumps(c.request_raw(method, params), indent=2))
