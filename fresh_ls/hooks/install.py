"""``fresh-ls install claude-code`` / ``uninstall``: our entries in Claude Code's settings,
and nothing else.

Claude Code reads hooks from ``.claude/settings.json`` in the project (or
``~/.claude/settings.json`` with ``--user``): ``{"hooks": {EVENT: [{"matcher": ...,
"hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}``. Other tools and the
user keep their own entries there, so the file is merged, never rewritten from a template:

- ours are recognized by their command alone (``... -P -m fresh_ls hook claude-code``, with or
  without ``-P``, or ``fresh-ls hook claude-code``), so an install replaces our earlier
  entries in their place (a new interpreter path, an older entry without ``-P``) and adds
  nothing twice;
- uninstall removes exactly the entries whose command is ours, then only the containers
  (a matcher group, an event's list, ``hooks``) that this removal left empty, and a file left
  holding nothing (``{}``: install created it);
- every other key keeps its value, its place and its spelling (``1e5`` stays ``1e5``); a file
  that is not a JSON object is refused, not overwritten; writes are atomic (a temp file
  renamed over it), and a symlinked file (a dotfile manager's) stays a symlink: its target
  is written.

The command names the interpreter that ran install (``sys.executable``) by its absolute
path, with ``-P`` (``fresh_ls.launch``: the repository the hook runs in is not on its
``sys.path``), so the hook works from any cwd and without ``fresh-ls`` on ``PATH``. With ``--mcp``
the MCP server ``fresh-ls mcp`` is added too: for the project in ``.mcp.json`` at its root
(and approved by name in ``enabledMcpjsonServers``, which Claude Code asks for before it
starts a project's MCP server), for the user under ``mcpServers`` of ``~/.claude.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fresh_ls.hooks.claude_code import TOOL_MATCHER
from fresh_ls.launch import python_command

MCP_NAME = "fresh-ls"
#: Seconds Claude Code waits for one hook call; a call takes milliseconds, and the hook
#: gives up on a wedged server itself after its own ``--timeout``.
HOOK_TIMEOUT_S = 15
_OURS = re.compile(r"(?:^|[\s'\"/])(?:-m\s+fresh_ls|fresh-ls)\s+hook\s+claude-code(?:\s|$)")
_OUR_MCP = re.compile(r"(?:-m\s+fresh_ls|fresh-ls)\s+mcp(?:\s|$)")

Settings = dict[str, Any]


def _argv(args: list[str], python: str | None, prefix: list[str] | None) -> list[str]:
    """``prefix + args`` (``["fresh-ls", ...]``, portable), else ``python -P -m fresh_ls``."""
    return [*prefix, *args] if prefix else python_command(*args, python=python)


def hook_command(python: str | None = None, prefix: list[str] | None = None) -> str:
    return shlex.join(_argv(["hook", "claude-code"], python, prefix))


def is_ours(command: Any) -> bool:
    return isinstance(command, str) and _OURS.search(command) is not None


def our_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    """The event groups install adds, with ``command``."""
    entry = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
    return {
        "PostToolUse": [{"matcher": TOOL_MATCHER, "hooks": [dict(entry)]}],
        "UserPromptSubmit": [{"hooks": [dict(entry)]}],
    }


def _is_our_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and is_ours(entry.get("command"))


def _groups_without_ours(
    groups: list[Any], replacement: list[dict[str, Any]] | None = None
) -> list[Any]:
    """An event's groups without our entries (a group left empty goes); ``replacement``
    (our groups) takes the place of the first group that held ours, or goes last."""
    kept_groups: list[Any] = []
    placed = replacement is None
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(entries, list) or not any(map(_is_our_entry, entries)):
            kept_groups.append(group)
            continue
        if not placed:
            kept_groups.extend(replacement or [])
            placed = True
        kept = [e for e in entries if not _is_our_entry(e)]
        if kept:
            kept_groups.append({**group, "hooks": kept})
    if not placed:
        kept_groups.extend(replacement or [])
    return kept_groups


def remove_hooks(settings: Settings) -> Settings:
    """``settings`` without our hook entries, and without the containers their removal
    left empty (and only those). Always a new object: callers compare it with the old."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings)
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups = _groups_without_ours(groups)
        if kept_groups or not groups or len(kept_groups) == len(groups):
            new_hooks[event] = kept_groups
    out = dict(settings)
    if new_hooks or not hooks:
        out["hooks"] = new_hooks
    else:
        del out["hooks"]
    return out


def add_hooks(settings: Settings, command: str) -> Settings:
    """``settings`` with our hook entries: an earlier entry of ours (another interpreter,
    one without ``-P``) is replaced where it stands, a new one goes last; ours left in an
    event we no longer use are removed. A new object, never ``settings`` changed."""
    hooks = settings.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ValueError('"hooks" is not a JSON object; fix it by hand first')
    ours = our_hooks(command)
    stale = remove_hooks({"hooks": {k: v for k, v in (hooks or {}).items() if k not in ours}})
    new_hooks: dict[str, Any] = {}
    for event, groups in (hooks or {}).items():
        if event not in ours:
            if event in stale.get("hooks", {}):
                new_hooks[event] = stale["hooks"][event]
            continue
        if not isinstance(groups, list):
            raise ValueError(f'"hooks.{event}" is not a list; fix it by hand first')
        new_hooks[event] = _groups_without_ours(groups, ours[event])
    for event, groups in ours.items():
        new_hooks.setdefault(event, groups)
    return {**settings, "hooks": new_hooks}


def mcp_entry(
    root: Path | None, python: str | None = None, prefix: list[str] | None = None
) -> dict[str, Any]:
    """A portable entry (``prefix``) names no root: ``fresh-ls mcp`` serves the folder Claude
    Code starts it in, the project, on every machine."""
    root_args = ["--root", str(root)] if root and not prefix else []
    command, *args = _argv(["mcp", *root_args], python, prefix)
    return {"type": "stdio", "command": command, "args": args}


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
    return _with_key(config, "mcpServers", {k: v for k, v in servers.items() if k != MCP_NAME})


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
    return _with_key(settings, "enabledMcpjsonServers", [n for n in names if n != MCP_NAME])


def _with_key(settings: Settings, key: str, rest: dict[str, Any] | list[Any]) -> Settings:
    """``settings`` with ``key`` set to what is left of it, or without the key when nothing
    is: uninstalling leaves no empty ``{}`` or ``[]`` behind that the user never wrote."""
    out = dict(settings)
    if rest:
        out[key] = rest
    else:
        del out[key]
    return out


# -- files -------------------------------------------------------------------------------


class RawNumber:
    """A JSON number with a fraction or an exponent, kept as written: a float would come
    back as ``100000.0`` for ``1e5`` and ``0.1`` for ``0.10``, a change in a file that is
    not ours to reformat. Equal when spelled alike."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RawNumber) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text


def dumps(data: Settings) -> str:
    """``data`` as the file's text: two-space indent, each ``RawNumber`` as it was written
    (each goes out as a unique placeholder string, then the placeholder is replaced)."""
    nonce = secrets.token_hex(8)
    raw: dict[str, str] = {}

    def placeholder(value: object) -> str:
        if not isinstance(value, RawNumber):
            raise TypeError(f"{type(value).__name__} is not JSON")
        key = f"{nonce}:{len(raw)}"
        raw[json.dumps(key)] = value.text
        return key

    text = json.dumps(data, indent=2, ensure_ascii=False, default=placeholder)
    for quoted, number in raw.items():
        text = text.replace(quoted, number)
    return text + "\n"


def read_json(path: Path) -> Settings | None:
    """The file's object, or None when it does not exist; ValueError when it is no object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    if not text.strip():
        return {}
    try:
        data = json.loads(text, parse_float=RawNumber)
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix it by hand first") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object; fix it by hand first")
    return data


def write_json(path: Path, data: Settings) -> None:
    """Write atomically; a symlink's target is what gets replaced, so the link stays."""
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(dumps(data))
        os.chmod(tmp, mode if mode is not None else 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def update(
    path: Path, change: Callable[[Settings], Settings], create: bool, drop_empty: bool = False
) -> bool:
    """Apply ``change`` to the file's object; True when the file changed. A missing file is
    created only when ``create``; with ``drop_empty`` (uninstall) a file that ``change``
    left holding nothing is removed (it held only our entries: install created it), and
    with it a ``.claude`` folder left empty."""
    before = read_json(path)
    if before is None and not create:
        return False
    after = change(before or {})
    if before is not None and after == before:
        return False
    if drop_empty and not after and not path.is_symlink():  # a link's target is not ours
        os.unlink(path)
        if path.parent.name == ".claude":
            with contextlib.suppress(OSError):
                path.parent.rmdir()
        return True
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


def install(
    t: Targets, mcp: bool, python: str | None = None, prefix: list[str] | None = None
) -> list[str]:
    """Add our entries (with ``prefix``, e.g. ``["fresh-ls"]``, the portable command; else
    ``python -P -m fresh_ls``); the files that changed."""
    changed = []
    command = hook_command(python, prefix)

    def settings_change(s: Settings) -> Settings:
        s = add_hooks(s, command)
        return approve_mcp(s) if mcp and t.project else s

    if update(t.settings, settings_change, create=True):
        changed.append(str(t.settings))
    entry = mcp_entry(t.mcp_root, python, prefix)
    if mcp and update(t.mcp, lambda c: add_mcp(c, entry), create=True):
        changed.append(str(t.mcp))
    return changed


def uninstall(t: Targets) -> list[str]:
    """Remove our entries (hooks, and the MCP server if ours); the files that changed."""
    changed = []

    def settings_change(s: Settings) -> Settings:
        s = remove_hooks(s)
        return unapprove_mcp(s) if t.project else s

    if update(t.settings, settings_change, create=False, drop_empty=True):
        changed.append(str(t.settings))
    if update(t.mcp, remove_mcp, create=False, drop_empty=True):
        changed.append(str(t.mcp))
    return changed
