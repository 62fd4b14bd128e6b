// The ways in, for a new user: what the empty panel, the first-run prompt and the "Install
// Claude Code Hooks" command say and run. Pure: no `vscode` import (extension.ts shows them).

import type { Interpreter } from "./launch";

/** The globalState key that remembers the first-run question was answered. */
export const ASKED_TERMINAL_PROXY = "freshLs.askedTerminalProxy";

export const FIRST_RUN_PROMPT =
  "fresh-ls: route the agents you start in VS Code terminals (claude, pi, aider, codex) through fresh-ls, so their file views show up in the agent views panel and stale code never reaches their model?";
export const FIRST_RUN_YES = "Route Terminal Agents";
export const FIRST_RUN_NO = "Not Now";

/** Whether to ask: never asked before and the user never set `freshLs.terminalProxy`
 * themselves (either way: someone who turned it off decided already). */
export function shouldAskTerminalProxy(asked: boolean, userValue: unknown): boolean {
  return !asked && userValue === undefined;
}

/**
 * The process that adds fresh-ls's Claude Code hooks to the folder's `.claude/settings.json`,
 * with the interpreter the sidecar runs on. The hook command written there must run on its
 * own from Claude Code: an interpreter that imports `fresh_ls` by itself is named as it is
 * (`fresh_ls install`); the bundled sidecar needs its environment (`PYTHONPATH` to the
 * bundle), so the command is given as an `env …` prefix through the installer's own API.
 */
export function installHooksProcess(interp: Interpreter, root: string): { command: string; args: string[]; env: Record<string, string> } {
  const needsEnv = Object.keys(interp.env).some((k) => k !== "PYTHONSAFEPATH");
  if (!needsEnv) {
    return { command: interp.command, args: ["-P", "-m", "fresh_ls", "install", "claude-code", "--root", root], env: interp.env };
  }
  const prefix = [
    "env",
    ...Object.entries(interp.env).map(([k, v]) => `${k}=${v}`),
    interp.command,
    "-P",
    "-m",
    "fresh_ls",
  ];
  const script = [
    "import json, sys",
    "from pathlib import Path",
    "from fresh_ls.hooks.install import install, targets",
    "print(json.dumps(install(targets(Path(sys.argv[1]), False), False, prefix=json.loads(sys.argv[2]))))",
  ].join("; ");
  return { command: interp.command, args: ["-P", "-c", script, root, JSON.stringify(prefix)], env: interp.env };
}
