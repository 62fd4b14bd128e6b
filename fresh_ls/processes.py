"""Whether a process named in a record (``proxy.json``, a file lock's holder) still runs."""

from __future__ import annotations

import os


def alive(pid: object) -> bool:
    """True when ``pid`` names a running process (one of another user counts: it exists)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
