"""How `fresh-ls run` routes the agents it knows through its proxies, without user config.

Most agents take their model's base URL from ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``,
which ``run`` sets. Codex does not for its built-in ``openai`` provider: it ignores
``OPENAI_BASE_URL`` there and goes straight to the public API (offline, it hangs in
"Reconnecting..."). Codex takes ``-c key=value`` overrides on its command line (TOML values,
above its config file, written nowhere), so ``run`` adds them after ``codex``:

- the user's provider is the built-in one (no ``model_provider``, or ``"openai"``): a
  provider of fresh-ls's own (``model_providers.fresh-ls``: the proxy's base URL, the
  Responses API, the key from ``OPENAI_API_KEY`` as the built-in one reads it), selected
  with ``model_provider``;
- the user's provider is their own (``[model_providers.NAME]`` with a ``base_url``): only
  that provider's ``base_url`` is overridden, to the proxy, and the proxy's upstream is the
  user's ``base_url`` (unless ``--openai-upstream`` says otherwise).

The user's ``config.toml`` is read, never written.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The provider id ``run`` adds for Codex's built-in provider.
CODEX_PROVIDER = "fresh-ls"
BUILTIN_PROVIDERS = frozenset({"openai"})


def is_codex(argv: list[str]) -> bool:
    return bool(argv) and Path(argv[0]).name in ("codex", "codex.js")


def codex_config(env: Mapping[str, str]) -> dict[str, Any]:
    """The user's Codex config (``$CODEX_HOME/config.toml``, else ``~/.codex``); {} when
    absent or unreadable (Codex then uses its defaults too)."""
    home = env.get("CODEX_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".codex"
    )
    try:
        with open(os.path.join(home, "config.toml"), "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _own_provider(config: Mapping[str, Any]) -> tuple[str, str] | None:
    """(name, base_url) of the user's own provider, or None for the built-in one."""
    name = config.get("model_provider")
    if not isinstance(name, str) or name in BUILTIN_PROVIDERS:
        return None
    providers = config.get("model_providers")
    entry = providers.get(name) if isinstance(providers, Mapping) else None
    base = entry.get("base_url") if isinstance(entry, Mapping) else None
    return (name, base) if isinstance(base, str) and base else None


def codex_upstream(argv: list[str], env: Mapping[str, str]) -> str | None:
    """The OpenAI upstream a Codex run should use when ``--openai-upstream`` is not given:
    the user's own provider's ``base_url`` (None: the default)."""
    if not is_codex(argv):
        return None
    own = _own_provider(codex_config(env))
    return own[1] if own else None


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def routed(argv: list[str], openai_url: str, env: Mapping[str, str]) -> list[str]:
    """``argv`` with what routes its agent through the proxies (unchanged for an agent that
    reads the variables ``run`` sets)."""
    if not is_codex(argv):
        return argv
    own = _own_provider(codex_config(env))
    if own is not None:
        overrides = ["-c", f"model_providers.{own[0]}.base_url={_toml_string(openai_url)}"]
    else:
        provider = (
            f'{{name = "fresh-ls", base_url = {_toml_string(openai_url)}, '
            'env_key = "OPENAI_API_KEY", wire_api = "responses"}'
        )
        overrides = [
            "-c",
            f"model_providers.{CODEX_PROVIDER}={provider}",
            "-c",
            f'model_provider="{CODEX_PROVIDER}"',
        ]
    return [argv[0], *overrides, *argv[1:]]
