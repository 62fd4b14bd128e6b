"""The proxies of a root, for ``fresh-ls status``: read from their ``proxy*.json`` records.

Kept free of aiohttp and of the server, so ``status`` stays cheap to start.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from fresh_ls.processes import alive
from fresh_ls.report import plural


def proxy_records(state_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of the proxies running for a state dir (those whose process is gone are
    left out)."""
    found = []
    for path in sorted(Path(state_dir).glob("proxy*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and alive(record.get("pid")):
            found.append(record)
    return found


def with_proxies(status: dict[str, Any]) -> dict[str, Any]:
    """``fresh/status`` with ``proxies`` added (the running proxies of its state dir)."""
    state_dir = status.get("stateDir")
    return {**status, "proxies": proxy_records(state_dir) if state_dir else []}


def print_proxies(status: dict[str, Any], out: TextIO = sys.stdout) -> None:
    for record in status.get("proxies", []):
        sessions = record.get("sessions") or []
        print(
            f"proxy {record.get('url')} -> {record.get('upstream')} (pid {record.get('pid')}): "
            f"{plural(record.get('requests', 0), 'model request')}, "
            f"{record.get('rewritten', 0)} rewritten, {plural(len(sessions), 'session')}",
            file=out,
        )
        for session in sessions:
            extra = ""
            if session.get("searches"):
                extra += f", {plural(session['searches'], 'search result')}"
            if session.get("outside"):
                extra += f", {plural(session['outside'], 'result')} outside the root (not tracked)"
            print(
                f"  {session['session']}: {plural(session['requests'], 'request')}, "
                f"{session['rewritten']} rewritten, {plural(session['views'], 'view')}{extra}",
                file=out,
            )
