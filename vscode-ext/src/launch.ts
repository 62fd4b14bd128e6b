// How the sidecar is launched: the interpreter, its arguments, the options sent in
// `initialize`, the endpoint file, and the message when `fresh_ls` is missing.
// Pure: no `vscode` import.

import type { Endpoint, InitializationOptions, Policy } from "./protocol";

export type InterpreterSource = "setting" | "python extension" | "default";

export interface Interpreter {
  command: string;
  source: InterpreterSource;
}

export const DEFAULT_PYTHON = "python3";

/**
 * `freshLs.python` when set, else the Python extension's active interpreter when that
 * extension is installed and names one, else `python3`.
 */
export function chooseInterpreter(
  setting: string | undefined,
  fromPythonExtension: string | undefined,
  vars: { workspaceFolder: string; home: string },
): Interpreter {
  const configured = setting?.trim();
  if (configured) return { command: expandVariables(configured, vars), source: "setting" };
  if (fromPythonExtension?.trim()) return { command: fromPythonExtension.trim(), source: "python extension" };
  return { command: DEFAULT_PYTHON, source: "default" };
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~`, as in VS Code settings. */
export function expandVariables(value: string, vars: { workspaceFolder: string; home: string }): string {
  let out = value.replace(/\$\{workspaceFolder\}/g, vars.workspaceFolder).replace(/\$\{userHome\}/g, vars.home);
  if (out === "~" || out.startsWith("~/")) out = vars.home + out.slice(1);
  return out;
}

/** `python -m fresh_ls serve --root ROOT --stdio --listen`: the editor over stdio, harnesses on the endpoint. */
export function serverArgs(root: string, extra: readonly string[] = []): string[] {
  return ["-m", "fresh_ls", "serve", "--root", root, "--stdio", "--listen", ...extra];
}

/** Run before launching: prints the version, or fails when `fresh_ls` is not importable. */
export const CHECK_ARGS: readonly string[] = ["-c", "import fresh_ls, sys; sys.stdout.write(fresh_ls.__version__)"];

export interface CheckFailure {
  /** `ENOENT` when the interpreter itself was not found. */
  code?: string | number | null;
  stderr?: string;
}

export interface LaunchProblem {
  message: string;
  /** The shell command that fixes it, when there is one. */
  fix?: string;
}

function quote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The message shown when the check fails: what is wrong and how to fix it. */
export function launchProblem(interp: Interpreter, failure: CheckFailure): LaunchProblem {
  const where =
    interp.source === "setting"
      ? "the interpreter set in freshLs.python"
      : interp.source === "python extension"
        ? "the Python extension's active interpreter"
        : "the default interpreter";
  if (failure.code === "ENOENT") {
    return {
      message:
        `fresh-ls: ${where} (${interp.command}) was not found. ` +
        `Set freshLs.python to a Python 3.11+ interpreter that has the fresh-ls package.`,
    };
  }
  const stderr = (failure.stderr ?? "").trim();
  if (/ModuleNotFoundError|No module named/.test(stderr)) {
    const fix = `${quote(interp.command)} -m pip install fresh-ls`;
    return {
      message:
        `fresh-ls: the package fresh_ls is not installed for ${where} (${interp.command}). ` +
        `Install it with \`${fix}\` (or \`pip install -e .\` in a fresh-ls clone), ` +
        `or set freshLs.python to an interpreter that has it.`,
      fix,
    };
  }
  const last = stderr.split("\n").filter(Boolean).pop() ?? `exit code ${String(failure.code)}`;
  return {
    message: `fresh-ls: ${where} (${interp.command}) cannot import fresh_ls: ${last}`,
  };
}

export interface LaunchSettings {
  budgetBytes?: number | null;
  policy?: string | null;
}

/** `initializationOptions` for `initialize`: the settings that are set, and the token if any. */
export function initializationOptions(settings: LaunchSettings, token?: string): InitializationOptions {
  const out: InitializationOptions = {};
  if (token) out.token = token;
  const budget = settings.budgetBytes;
  if (typeof budget === "number" && Number.isInteger(budget) && budget >= 0) out.budgetBytes = budget;
  if (settings.policy === "stale" || settings.policy === "all") out.policy = settings.policy as Policy;
  return out;
}

/** Parses `endpoint.json`; undefined when it is not a complete endpoint. */
export function parseEndpoint(text: string): Endpoint | undefined {
  try {
    const data = JSON.parse(text) as Partial<Endpoint>;
    if (typeof data.address !== "string" || typeof data.token !== "string" || typeof data.pid !== "number") {
      return undefined;
    }
    if (!parseAddress(data.address)) return undefined;
    return { address: data.address, token: data.token, pid: data.pid };
  } catch {
    return undefined;
  }
}

export type Address = { kind: "unix"; path: string } | { kind: "tcp"; host: string; port: number };

export function parseAddress(address: string): Address | undefined {
  if (address.startsWith("unix:")) {
    const path = address.slice("unix:".length);
    return path ? { kind: "unix", path } : undefined;
  }
  if (address.startsWith("tcp:")) {
    const rest = address.slice("tcp:".length);
    const at = rest.lastIndexOf(":");
    if (at <= 0) return undefined;
    const port = Number(rest.slice(at + 1));
    if (!Number.isInteger(port) || port <= 0 || port > 65535) return undefined;
    return { kind: "tcp", host: rest.slice(0, at), port };
  }
  return undefined;
}

/**
 * What "Copy harness endpoint" puts on the clipboard: the endpoint file's JSON (address, token,
 * pid) plus where it lives and the root, so a harness can connect or re-read it later.
 */
export function endpointClipboard(ep: Endpoint, endpointFile: string, root: string): string {
  return `${JSON.stringify({ address: ep.address, token: ep.token, pid: ep.pid, endpointFile, root }, null, 2)}\n`;
}

/** Settings whose change restarts the servers. */
export const RESTART_SETTINGS: readonly string[] = ["freshLs.python", "freshLs.budgetBytes", "freshLs.policy", "freshLs.serverArgs"];
