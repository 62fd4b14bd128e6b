"""Freed memory stays in a long-running fresh-ls process instead of going back to the OS,
and the server's cyclic garbage collector runs less often.

A ``policy: all`` answer is half a megabyte and a proxied model request 200 KB or more;
each is copied a few times on its way (joined, encoded, framed). glibc's malloc serves such
blocks with fresh ``mmap`` pages (or trims them off the heap again when they are freed),
so every copy faults its pages in anew: 0.8 ms for one 500 KB string on the benchmark
machine, against 0.04 ms when the pages are reused, which was a third of an unchanged
``policy: all`` answer over stdio. The server (``server.app.serve``) and the proxy
(``proxy.serve.running_proxy``, so ``run`` and ``proxies`` too) ask glibc once, at start,
to serve blocks under ``MMAP_BELOW`` from the heap and to keep up to ``TRIM_ABOVE`` of
free heap before giving it back: a bounded amount of memory held, in exchange for no page
faults on the hot path. Elsewhere (no glibc, no ``mallopt``) nothing changes.

The cyclic collector (``collect_less_often``, called by the server only: the proxy's
process measured no difference with it and keeps CPython's defaults): a ``policy: all``
plan after an edit makes some thousands of short-lived objects (omissions, markers,
entries, sets of view ids), and with CPython's default thresholds (a young collection every
700 new objects) the server paid 1.1-1.7 ms of each such request collecting them, beside an
answer of 25-30 ms (two servers side by side, one with each setting, requests interleaved).
Almost none of them is in a cycle: reference counting frees them. So young collections run
every ``GC_THRESHOLDS[0]`` objects, and the older generations after ``GC_THRESHOLDS[1:]``
of the younger one's: a bounded amount of cyclic garbage (at most that many objects) waits
a little longer; nothing is left uncollected.
"""

from __future__ import annotations

import gc
import sys

#: glibc's ``mallopt`` parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: Blocks below this come from the heap, whose pages are reused.
MMAP_BELOW = 16 << 20
#: Free memory at the heap's top is given back to the OS only past this much.
TRIM_ABOVE = 64 << 20
#: ``gc.set_threshold``'s arguments in a long-running fresh-ls process (see the module).
GC_THRESHOLDS = (20_000, 20, 20)


def collect_less_often() -> None:
    """Run the cyclic collector less often (see the module): young collections every
    ``GC_THRESHOLDS[0]`` new objects instead of 700."""
    gc.set_threshold(*GC_THRESHOLDS)


def keep_freed_memory() -> bool:
    """Ask the C allocator to reuse freed pages (see the module); whether it agreed."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_BELOW)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_ABOVE)
    )
