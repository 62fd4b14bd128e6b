"""``fresh_ls.heap``: the server and the proxy ask glibc to reuse freed pages."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="mallopt is glibc's",
)
def test_glibc_takes_the_settings() -> None:
    # in a child, so this test process's allocator is left as it was
    code = "from fresh_ls.heap import keep_freed_memory; print(keep_freed_memory())"
    out = subprocess.run(
        [sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "True"


def test_the_collector_runs_less_often_in_a_server() -> None:
    # in a child: the thresholds are the process's
    code = (
        "import gc; from fresh_ls.heap import GC_THRESHOLDS, collect_less_often; "
        "before = gc.get_threshold(); collect_less_often(); "
        "print(before != GC_THRESHOLDS, gc.get_threshold() == GC_THRESHOLDS)"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "True"]
