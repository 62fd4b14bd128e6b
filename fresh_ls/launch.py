"""How fresh-ls starts another fresh-ls: the one argv builder every launcher uses.

Without -P, ``python -m fresh_ls`` puts the working directory first on ``sys.path``. Run in
a repository whose top level holds a ``json.py``, a ``rapidfuzz/`` or an ``aiohttp/``, that
file is imported instead of the real module and runs with the user's rights, before any agent
asks whether the folder is trusted; ordinary projects (a ``logging.py``, a vendored ``mcp/``)
break it too, with an error that names neither the file nor the cause. ``-P`` (Python 3.11+)
leaves the working directory off ``sys.path``, so a repository's files stay data. The
client's ``spawn`` (and with it the server of the proxy, ``run``, ``proxies`` and the MCP
server), and the MCP and hook entries ``install`` writes, all take their argv from here;
``tests/security`` checks that nothing in ``fresh_ls/`` builds one without ``-P``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

#: The console script ``pip install`` puts on ``PATH``: it runs with its own ``bin`` folder on
#: ``sys.path``, never the working directory, so it needs no ``-P``.
CONSOLE_SCRIPT = "fresh-ls"


def python_command(*args: str, python: str | None = None) -> list[str]:
    """``[python, "-P", "-m", "fresh_ls", *args]``, with this interpreter by default."""
    return [python or sys.executable, "-P", "-m", "fresh_ls", *args]


def portable_prefix() -> list[str] | None:
    """``["fresh-ls"]`` when the console script is on ``PATH`` here: a command that works on
    any machine where fresh-ls is installed, for files a team shares (a project's
    ``.claude/settings.json``, ``.mcp.json``), where this clone's interpreter path would
    break everyone else. None when it is not on ``PATH`` (the command would fail here)."""
    return [CONSOLE_SCRIPT] if shutil.which(CONSOLE_SCRIPT) else None


#: A detached server's log is moved to ``<log>.1`` (the one before kept) past this size.
LOG_ROTATE_BYTES = 1 << 20


def start_detached(argv: list[str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a session of its own, stdin from ``/dev/null``, stdout and stderr
    appended to ``log`` (0600), holding none of our pipes.

    Why each: its own session keeps the terminal's Ctrl-C and hangup (meant for the agent
    that started it) from reaching a server other agents still use; holding none of our
    pipes lets a caller waiting for our output (a shell's ``$(...)``, a test's
    ``capture_output``) end when we do, not when the server idles out. A thread waits for
    it, so it leaves no zombie if it ends while we run; once we end, init adopts it.
    """
    with contextlib.suppress(OSError):
        if log.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(log, log.with_name(log.name + ".1"))
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(fd)
    threading.Thread(target=proc.wait, daemon=True, name="fresh-ls-reap").start()
    return proc
