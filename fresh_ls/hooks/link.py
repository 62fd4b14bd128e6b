"""The hook's connection to the running server: one blocking socket, a handful of
messages, then goodbye.

``fresh_ls.client.SyncClient`` does the same and more (spawning a server, notifications,
threads, typed errors), and its imports (``dataclasses`` with ``inspect``, ``subprocess``,
``threading``) cost about a fifth of a hook call, which Claude Code pays on every Read and
Edit (benchmarks/bench_hooks.py). So the hook speaks the few messages it needs here,
over the same framing (``fresh_ls.framing``) and the same ``endpoint.json``; the
protocol itself is the contract's, tested end to end in tests/hooks/.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
from pathlib import Path
from types import TracebackType
from typing import Any

from fresh_ls import steps
from fresh_ls.framing import LINE, FrameError, encode_frame, frame_steps
from fresh_ls.statedir import ENDPOINT_FILE, connect_endpoint, endpoint_target


class LinkError(Exception):
    """No answer (``code`` None: no server, a dead one, a broken stream) or an error
    answer (``code`` as the contract lists: -32010 outside the root, -32011 unreadable)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message + (f" (code {code})" if code is not None else ""))
        self.code = code


class Link:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._stream = sock.makefile("rwb")
        self._ids = itertools.count(1)

    @classmethod
    def open(cls, state_dir: Path, timeout: float) -> Link:
        """Connect to the server whose ``endpoint.json`` is in ``state_dir`` and shake
        hands with its token."""
        try:
            ep = json.loads((state_dir / ENDPOINT_FILE).read_text())
            address = str(ep["address"])
            kind, target = endpoint_target(address)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LinkError(f"cannot read {state_dir / ENDPOINT_FILE}: {exc}") from None
        try:
            sock = connect_endpoint(kind, target, timeout)
        except OSError as exc:
            raise LinkError(
                f"cannot connect to {address}: {exc}; is the server (pid {ep.get('pid')}) "
                "still running?"
            ) from None
        link = cls(sock)
        try:
            options = {"token": ep.get("token")} if ep.get("token") else {}
            link.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": None,
                    "capabilities": {},
                    "initializationOptions": options,
                },
            )
            link.notify("initialized", {})
        except LinkError:
            link.close()
            raise
        return link

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self._stream.write(encode_frame(json.dumps(message).encode("utf-8")))
            self._stream.flush()
        except OSError as exc:
            raise LinkError(f"cannot send: {exc}") from None

    def _take(self, want: int) -> bytes:
        return self._stream.readline() if want == LINE else self._stream.read(want)

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        msg_id = next(self._ids)
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            try:
                message = json.loads(steps.run(frame_steps(None), self._take))
            except EOFError:
                raise LinkError(f"{method}: the server closed the connection") from None
            except (OSError, ValueError, FrameError) as exc:
                raise LinkError(f"{method}: cannot read the answer: {exc}") from None
            if not isinstance(message, dict) or message.get("id") != msg_id:
                continue  # a notification (didInvalidate), not our answer
            if "error" in message:
                err = message["error"] if isinstance(message["error"], dict) else {}
                raise LinkError(f"{method}: {err.get('message', '')}", err.get("code"))
            return message.get("result")

    def close(self) -> None:
        with contextlib.suppress(LinkError):
            self.request("shutdown", None)
            self.notify("exit", None)
        for thing in (self._stream, self._sock):
            with contextlib.suppress(OSError):
                thing.close()

    def __enter__(self) -> Link:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
