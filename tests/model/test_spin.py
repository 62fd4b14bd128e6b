"""The write guard of ``fresh-ls mcp`` as a Promela model (``docs/guard.pml``), checked
exhaustively by spin: no edit loses an update; and each of its mutants (the check, the
second read, the lock taken away) is found to lose one. Skipped with a clear message where
spin or a C compiler is not installed (spin is the Debian package ``spin``)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ._run import FULL

MODEL = Path(__file__).resolve().parents[2] / "docs" / "guard.pml"
pytestmark = pytest.mark.timeout(600 if FULL else 120)


def _verify(tmp_path: Path, *defines: str) -> str:
    spin, cc = shutil.which("spin"), shutil.which("cc") or shutil.which("gcc")
    if spin is None or cc is None:
        pytest.skip("spin and a C compiler are needed (apt-get install spin gcc)")
    extra = ["-DMAXV=4"] if FULL else []
    subprocess.run([spin, *extra, *defines, "-a", str(MODEL)], cwd=tmp_path, check=True,
                   capture_output=True, timeout=60)  # fmt: skip
    subprocess.run([cc, "-O1", "-DSAFETY", "-o", "pan", "pan.c"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    done = subprocess.run(["./pan", "-m100000"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=500)  # fmt: skip
    return done.stdout


def test_no_edit_loses_an_update(tmp_path: Path) -> None:
    out = _verify(tmp_path)
    assert re.search(r"errors: 0\b", out), out
    assert "depth reached" in out and "search depth too small" not in out, out


@pytest.mark.parametrize("mutant", ["NOGUARD", "NOREREAD", "NOLOCK"])
def test_spin_finds_the_loss_in_each_mutant(tmp_path: Path, mutant: str) -> None:
    out = _verify(tmp_path, f"-D{mutant}")
    assert "assertion violated" in out and re.search(r"errors: [1-9]", out), out
