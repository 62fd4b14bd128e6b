"""Fills ``bundled/libs`` with the sidecar the extension ships: fresh-ls and its dependencies.

Run from ``vscode-ext/`` (``make bundle-sidecar`` does): installing the ``.vsix`` is then the
whole set-up, as in the Python tools extension template. The extension runs
``python3 -m fresh_ls serve`` with ``PYTHONPATH=bundled/libs`` when no interpreter with
fresh_ls of its own is configured or found.

Why each step:

- ``pip install --target bundled/libs ..``: fresh-ls from this repository (relative path, so
  the build works from any clone), with the dependencies pip resolves from the package index
  it is configured with. Several of them are compiled for this interpreter's CPython version
  and platform, which is why the ``.vsix`` is platform-targeted and ``bundled/bundle.json``
  records the version the extension must run it with.
- tree-sitter-language-pack carries about 170 grammars (184 MB); fresh-ls parses only the
  languages of ``fresh_ls.core.languages.SUPPORTED_LANGUAGES``, so the other grammars'
  shared objects are dropped (the pack loads a grammar only when it is asked for it).
- ``bin/`` (console scripts with this machine's interpreter in their shebang) is dropped.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

BUNDLED = Path("bundled")
LIBS = BUNDLED / "libs"
MANIFEST = BUNDLED / "bundle.json"


def supported_languages() -> frozenset[str]:
    """Read from the installed copy, so the bundle and the code it serves agree."""
    probe = (
        "import json, sys; from fresh_ls.core.languages import SUPPORTED_LANGUAGES as S; "
        "sys.stdout.write(json.dumps(sorted(S)))"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(LIBS.resolve()), "PYTHONSAFEPATH": "1"},
    ).stdout
    return frozenset(json.loads(out))


def prune_grammars(keep: frozenset[str]) -> int:
    bindings = LIBS / "tree_sitter_language_pack" / "bindings"
    dropped = 0
    for lib in bindings.glob("*.so"):
        if lib.name.split(".", 1)[0] not in keep:
            lib.unlink()
            dropped += 1
    return dropped


def main() -> None:
    if not Path("package.json").is_file():
        sys.exit("bundle_sidecar.py: run it from vscode-ext/")
    shutil.rmtree(BUNDLED, ignore_errors=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            "--target",
            str(LIBS),
            "..",
        ],
        check=True,
    )
    shutil.rmtree(LIBS / "bin", ignore_errors=True)
    keep = supported_languages()
    dropped = prune_grammars(keep)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    MANIFEST.write_text(
        json.dumps(
            {
                "python": version,
                "implementation": platform.python_implementation(),
                "machine": platform.machine(),
                "languages": sorted(keep),
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"bundled/libs: CPython {version}, {len(keep)} grammars kept, {dropped} dropped")


if __name__ == "__main__":
    main()
