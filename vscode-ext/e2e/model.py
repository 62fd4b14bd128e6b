"""The scripted model for the terminal-proxy end-to-end test: the agent started in a VS Code
terminal reads ``cart.py`` and answers; nothing here knows the proxy is in between.

    python model.py ROOT RECORDS_JSON   # prints {"url": ...}; runs until stdin closes,
                                        # then writes what each model request carried

It reuses the repository's scripted model server (tests/proxy/scripted_model.py), which
speaks the Anthropic Messages stream Claude Code expects.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.proxy.scripted_model import Reply, ScriptedModel  # noqa: E402


def main() -> int:
    root = Path(sys.argv[1])
    out = Path(sys.argv[2])
    script = [
        Reply(tool="Read", input={"file_path": str(root / "cart.py")}),
        Reply(text="cart.py defines Cart with a total() method."),
    ]
    model = ScriptedModel(script, root)  # type: ignore[arg-type]
    model.start()
    print(json.dumps({"url": model.url}), flush=True)
    try:
        sys.stdin.read()
    finally:
        records = [
            {"path": r.path, "turn": r.turn, "headers": sorted(r.headers)}
            for r in model.model_requests
        ]
        out.write_text(json.dumps(records))
        model.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
