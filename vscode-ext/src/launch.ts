// How the sidecar is launched: which interpreter (an override, a workspace venv, the Python
// extension's, or the sidecar bundled in the .vsix), its arguments and environment, the
// options sent in `initialize`, the endpoint file, and the message when none works.
// Pure: no `vscode` import.

import type { Endpoint, InitializationOptions, Policy } from "./protocol";

export type InterpreterSource = "setting" | "workspace venv" | "python extension" | "bundled";

export interface Interpreter {
  command: string;
  source: InterpreterSource;
  /** Added to the sidecar's environment (and its check's). */
  env: Record<string, string>;
}

/** `bundled/bundle.json`, written by `scripts/bundle_sidecar.py` next to `bundled/libs`. */
export interface Bundle {
  /** `bundled/libs`, absolute. */
  libs: string;
  /** The CPython `major.minor` its compiled modules are built for, e.g. "3.11". */
  python: string;
}

export const DEFAULT_PYTHON = "python3";

/** Every interpreter runs with the opened folder kept off `sys.path` (PYTHONSAFEPATH, 3.11+):
 * the sidecar starts with the folder as its working directory, and a folder holding a
 * `fresh_ls/` directory (a fresh-ls clone, or a hostile repository) must not decide which
 * code runs. An interpreter finds fresh_ls "on its own" only through its installed packages. */
const SAFE_PATH = { PYTHONSAFEPATH: "1" } as const;

/** The interpreter flags of every launch (the sidecar, its check, the terminal proxy): `-P`
 * keeps the working directory, the opened folder, off `sys.path` even where PYTHONSAFEPATH is
 * dropped from the environment, so a folder's `json.py` or `aiohttp/` is never imported in
 * place of the real module. The Python side builds its own children the same way
 * (`fresh_ls/launch.py`). */
export const SAFE_FLAGS: readonly string[] = ["-P"];

/** `python -P -m fresh_ls ARGS`: the one argv builder for every fresh-ls the extension starts. */
export function freshLsArgs(...args: string[]): string[] {
  return ["-P", "-m", "fresh_ls", ...args];
}

/** The virtualenvs of a folder that may hold fresh_ls (checked in this order). */
export function venvPythons(root: string): string[] {
  return [".venv", "venv"].map((d) => `${root}/${d}/bin/python`);
}

/**
 * The interpreters to try, in order; the first whose check passes runs the sidecar.
 * `freshLs.python`, when set, is the only one: an override is never second-guessed. Else a
 * workspace virtualenv, then the Python extension's active interpreter, each only when it
 * imports fresh_ls on its own; then the sidecar bundled in the extension (`python3.X` for the
 * version it was built for, then `python3`, with `PYTHONPATH=bundled/libs`). Without a bundle
 * (a development build), plain `python3`. `restricted` (a folder in Restricted Mode, not
 * trusted): the bundled sidecar only, since the setting, a workspace virtualenv and the Python
 * extension's pick may all come from the folder itself.
 */
export function interpreterCandidates(
  input: {
    setting?: string;
    /** Workspace virtualenv interpreters that exist. */
    venvs?: readonly string[];
    fromPythonExtension?: string;
    bundle?: Bundle;
    restricted?: boolean;
  },
  vars: { workspaceFolder: string; home: string },
): Interpreter[] {
  const out: Interpreter[] = [];
  const configured = input.setting?.trim();
  if (!input.restricted) {
    if (configured) return [{ command: expandVariables(configured, vars), source: "setting", env: { ...SAFE_PATH } }];
    for (const v of input.venvs ?? []) out.push({ command: v, source: "workspace venv", env: { ...SAFE_PATH } });
    const ext = input.fromPythonExtension?.trim();
    if (ext && !out.some((c) => c.command === ext)) out.push({ command: ext, source: "python extension", env: { ...SAFE_PATH } });
  }
  const bundle = input.bundle;
  if (bundle) {
    const env = { ...SAFE_PATH, PYTHONPATH: bundle.libs, PYTHONNOUSERSITE: "1" };
    out.push({ command: `python${bundle.python}`, source: "bundled", env });
    out.push({ command: DEFAULT_PYTHON, source: "bundled", env });
  } else {
    out.push({ command: DEFAULT_PYTHON, source: "bundled", env: { ...SAFE_PATH } });
  }
  return out;
}

/** Parses `bundle.json`; undefined when it is not one. */
export function parseBundle(text: string, libs: string): Bundle | undefined {
  try {
    const data = JSON.parse(text) as { python?: unknown };
    return typeof data.python === "string" && /^\d+\.\d+$/.test(data.python) ? { libs, python: data.python } : undefined;
  } catch {
    return undefined;
  }
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~`, as in VS Code settings. */
export function expandVariables(value: string, vars: { workspaceFolder: string; home: string }): string {
  let out = value.replace(/\$\{workspaceFolder\}/g, vars.workspaceFolder).replace(/\$\{userHome\}/g, vars.home);
  if (out === "~" || out.startsWith("~/")) out = vars.home + out.slice(1);
  return out;
}

/** `python -P -m fresh_ls serve --root ROOT --stdio --listen`: the editor over stdio, harnesses on the endpoint. */
export function serverArgs(root: string, extra: readonly string[] = []): string[] {
  return freshLsArgs("serve", "--root", root, "--stdio", "--listen", ...extra);
}

/** Run before launching: prints fresh_ls's version and the interpreter's `major.minor`, or
 * fails when `fresh_ls` is not importable. The version matters for the bundle, whose compiled
 * modules load only in the CPython they were built for. */
export const CHECK_ARGS: readonly string[] = [
  ...SAFE_FLAGS,
  "-c",
  "import fresh_ls, sys; sys.stdout.write(fresh_ls.__version__ + ' %d.%d' % sys.version_info[:2])",
];

export interface CheckFailure {
  /** `ENOENT` when the interpreter itself was not found. */
  code?: string | number | null;
  stderr?: string;
  /** The interpreter's `major.minor`, when it ran but is not the bundle's. */
  python?: string;
}

/** What a passing check printed: fresh_ls's version, or a failure for a bundle-version mismatch. */
export function checkOutput(
  interp: Interpreter,
  stdout: string,
  bundle?: Bundle,
): { ok: true; version: string } | { ok: false; failure: CheckFailure } {
  const [version = "", python = ""] = stdout.trim().split(/\s+/);
  if (interp.source === "bundled" && bundle && python !== bundle.python) {
    return { ok: false, failure: { code: "version", python } };
  }
  return { ok: true, version };
}

/** What the user can do about a launch problem, as buttons. */
export type LaunchAction = "useBundled" | "openSettings" | "showOutput";

export interface LaunchProblem {
  message: string;
  actions?: LaunchAction[];
}

/** The command title that clears `freshLs.python` (package.json declares it). */
export const USE_BUNDLED_TITLE = "fresh-ls: Use Bundled Sidecar";
const OVERRIDE_HINT =
  `Run “${USE_BUNDLED_TITLE}” to clear the setting and use the sidecar that ships with the ` +
  "extension, or set freshLs.python to an interpreter that has fresh_ls (in a fresh-ls clone, " +
  "`make` creates `.venv/bin/python`).";

/**
 * The message shown when no candidate passed: what is wrong and a command that fixes it.
 * `interp` is the last candidate tried: the override, or the bundled sidecar's `python3`.
 * No message suggests `pip install fresh-ls`: that name is not a published package.
 */
export function launchProblem(interp: Interpreter, failure: CheckFailure, bundle?: Bundle): LaunchProblem {
  const stderr = (failure.stderr ?? "").trim();
  const last = stderr.split("\n").filter(Boolean).pop() ?? `exit code ${String(failure.code)}`;
  if (interp.source === "setting") {
    const what =
      failure.code === "ENOENT"
        ? "was not found"
        : /ModuleNotFoundError|No module named/.test(stderr)
          ? "cannot import fresh_ls"
          : `cannot import fresh_ls (${last})`;
    return {
      message: `fresh-ls: the interpreter set in freshLs.python (${interp.command}) ${what}. ${OVERRIDE_HINT}`,
      actions: ["useBundled", "openSettings", "showOutput"],
    };
  }
  const need = bundle ? `CPython ${bundle.python}` : "Python 3.11+";
  const names = bundle ? `neither python${bundle.python} nor ${DEFAULT_PYTHON} is` : `${DEFAULT_PYTHON} is not`;
  const found =
    failure.code === "ENOENT"
      ? `${names} on PATH`
      : failure.code === "version"
        ? `${interp.command} is Python ${failure.python ?? "?"}`
        : `${interp.command} failed: ${last}`;
  return {
    message:
      `fresh-ls: the sidecar bundled with the extension needs ${need}, but ${found}. ` +
      `Install ${need} and run “fresh-ls: Restart Server”, or set freshLs.python to an ` +
      "interpreter that has fresh_ls (in a fresh-ls clone, `make` creates `.venv/bin/python`).",
    actions: ["openSettings", "showOutput"],
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

/** The hosts a TCP endpoint may name. */
export const LOOPBACK_HOSTS: readonly string[] = ["127.0.0.1", "localhost"];

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
    const host = rest.slice(0, at);
    // The endpoint file sits in the folder, so a repository can ship one: only a loopback
    // port (the only kind the server binds) is believed (fresh_ls/statedir.py does the same).
    if (!LOOPBACK_HOSTS.includes(host)) return undefined;
    return { kind: "tcp", host, port };
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
