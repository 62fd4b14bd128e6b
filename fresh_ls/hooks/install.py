"""``fresh-ls install claude-code`` / ``uninstall``: our entries in Claude Code's settings,
and nothing else.

Claude Code reads hooks from ``.claude/settings.json`` in the project (or
``~/.claude/settings.json`` with ``--user``): ``{"hooks": {EVENT: [{"matcher": ...,
"hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}``. Other tools and the
user keep their own entries there, so the file is merged, never rewritten from a template:

- ours are recognized by their command alone (``... -m fresh_ls hook claude-code``), so an
  install replaces our earlier entries (a new interpreter path, say) and adds nothing twice;
- uninstall removes exactly the entries whose command is ours, then only the containers
  (a matcher group, an event's list, ``hooks``) that this removal left empty;
- every other key keeps its value and its place; a file that is not a JSON object is
  refused, not overwritten; writes are atomic (a temp file renamed over it).

The command names the interpreter that ran install (``sys.executable``) by its absolute
path, so the hook works from any cwd and without ``fresh-ls`` on ``PATH``. With ``--mcp``
the MCP server ``fresh-ls mcp`` is added too: for the project in ``.mcp.json`` at its root
(and approved by name in ``enabledMcpjsonServers``, which Claude Code asks for before it
starts a project's MCP server), for the user under ``mcpServers`` of ``~/.claude.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fresh_ls.hooks.claude_code import TOOL_MATCHER

MCP_NAME = "fresh-ls"
#: Seconds Claude Code waits for one hook call; a call takes milliseconds, and the hook
#: gives up on a wedged server itself after its own ``--timeout``.
HOOK_TIMEOUT_S = 15
_OURS = re.compile(r"(?:^|[\s'\"/])(?:-m\s+fresh_ls|fresh-ls)\s+hook\s+claude-code(?:\s|$)")
_OUR_MCP = re.compile(r"(?:-m\s+fresh_ls|fresh-ls)\s+mcp(?:\s|$)")

Settings = dict[str, Any]


def hook_command(python: str | None = None) -> str:
    return f"{shlex.quote(python or sys.executable)} -m fresh_ls hook claude-code"


def is_ours(command: Any) -> bool:
    return isinstance(command, str) and _OURS.search(command) is not None


def our_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    """The event groups install adds, with ``command``."""
    entry = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
    return {
        "PostToolUse": [{"matcher": TOOL_MATCHER, "hooks": [dict(entry)]}],
        "UserPromptSubmit": [{"hooks": [dict(entry)]}],
    }


def remove_hooks(settings: Settings) -> Settings:
    """``settings`` without our hook entries, and without the containers their removal
    left empty (and only those)."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list):
                kept_groups.append(group)
                continue
            kept = [e for e in entries if not (isinstance(e, dict) and is_ours(e.get("command")))]
            if len(kept) == len(entries):
                kept_groups.append(group)
            elif kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups or not groups or len(kept_groups) == len(groups):
            new_hooks[event] = kept_groups
    out = dict(settings)
    if new_hooks or not hooks:
        out["hooks"] = new_hooks
    else:
        del out["hooks"]
    return out


def add_hooks(settings: Settings, command: str) -> Settings:
    """``settings`` with our hook entries (any earlier ones of ours replaced)."""
    out = remove_hooks(settings)
    hooks = out.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ValueError('"hooks" is not a JSON object; fix it by hand first')
    hooks = dict(hooks or {})
    for event, groups in our_hooks(command).items():
        current = hooks.get(event, [])
        if not isinstance(current, list):
            raise ValueError(f'"hooks.{event}" is not a list; fix it by hand first')
        hooks[event] = [*current, *groups]
    out["hooks"] = hooks
    return out


def mcp_entry(root: Path | None, python: str | None = None) -> dict[str, Any]:
    args = ["-m", "fresh_ls", "mcp", *(["--root", str(root)] if root else [])]
    return {"type": "stdio", "command": python or sys.executable, "args": args}


def _is_our_mcp(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    return _OUR_MCP.search(" ".join(words)) is not None


def add_mcp(config: Settings, entry: dict[str, Any]) -> Settings:
    servers = config.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError('"mcpServers" is not a JSON object; fix it by hand first')
    present = servers.get(MCP_NAME)
    if present is not None and not _is_our_mcp(present):
        raise ValueError(f'an MCP server named "{MCP_NAME}" that is not fresh-ls is configured')
    return {**config, "mcpServers": {**servers, MCP_NAME: entry}}


def remove_mcp(config: Settings) -> Settings:
    servers = config.get("mcpServers")
    if not isinstance(servers, dict) or not _is_our_mcp(servers.get(MCP_NAME)):
        return config
    rest = {k: v for k, v in servers.items() if k != MCP_NAME}
    out = dict(config)
    if rest:
        out["mcpServers"] = rest
    else:
        del out["mcpServers"]
    return out


def approve_mcp(settings: Settings) -> Settings:
    names = settings.get("enabledMcpjsonServers", [])
    if not isinstance(names, list):
        raise ValueError('"enabledMcpjsonServers" is not a list; fix it by hand first')
    return (
        settings if MCP_NAME in names else {**settings, "enabledMcpjsonServers": [*names, MCP_NAME]}
    )


def unapprove_mcp(settings: Settings) -> Settings:
    names = settings.get("enabledMcpjsonServers")
    if not isinstance(names, list) or MCP_NAME not in names:
        return settings
    rest = [n for n in names if n != MCP_NAME]
    out = dict(settings)
    if rest:
        out["enabledMcpjsonServers"] = rest
    else:
        del out["enabledMcpjsonServers"]
    return out


# -- files -------------------------------------------------------------------------------


def read_json(path: Path) -> Settings | None:
    """The file's object, or None when it does not exist; ValueError when it is no object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix it by hand first") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object; fix it by hand first")
    return data


def write_json(path: Path, data: Settings) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        os.chmod(tmp, mode if mode is not None else 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def update(path: Path, change: Callable[[Settings], Settings], create: bool) -> bool:
    """Apply ``change`` to the file's object; True when the file changed. A missing file is
    created only when ``create``."""
    before = read_json(path)
    if before is None and not create:
        return False
    after = change(before or {})
    if before is not None and after == before:
        return False
    write_json(path, after)
    return True


@dataclass(frozen=True)
class Targets:
    """The files of one scope."""

    settings: Path
    mcp: Path
    mcp_root: Path | None  # the root ``fresh-ls mcp`` serves (None: its own cwd)
    project: bool


def targets(root: Path, user: bool, home: Path | None = None) -> Targets:
    if user:
        home = home or Path.home()
        return Targets(home / ".claude" / "settings.json", home / ".claude.json", None, False)
    return Targets(root / ".claude" / "settings.json", root / ".mcp.json", root, True)


def install(t: Targets, mcp: bool, python: str | None = None) -> list[str]:
    """Add our entries; the files that changed."""
    changed = []
    command = hook_command(python)

    def settings_change(s: Settings) -> Settings:
        s = add_hooks(s, command)
        return approve_mcp(s) if mcp and t.project else s

    if update(t.settings, settings_change, create=True):
        changed.append(str(t.settings))
    if mcp and update(t.mcp, lambda c: add_mcp(c, mcp_entry(t.mcp_root, python)), create=True):
        changed.append(str(t.mcp))
    return changed


def uninstall(t: Targets) -> list[str]:
    """Remove our entries (hooks, and the MCP server if ours); the files that changed."""
    changed = []

    def settings_change(s: Settings) -> Settings:
        s = remove_hooks(s)
        return unapprove_mcp(s) if t.project else s

    if update(t.settings, settings_change, create=False):
        changed.append(str(t.settings))
    if update(t.mcp, remove_mcp, create=False):
        changed.append(str(t.mcp))
    return changed
