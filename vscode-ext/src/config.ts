// The extension's settings and the state dir's names, in one place (pure: no `vscode`).
//
// Every `freshLs.*` setting the manifest declares is read here, with its default, and
// nowhere else: `settings.ts` feeds it from VS Code, the tests feed it from a plain map, and
// a test checks these keys against package.json's `contributes.configuration`.

import type { Policy } from "./protocol";

/** The configuration section (`freshLs.python`, ...). */
export const SECTION = "freshLs";

/** The server's state dir under a root, and the endpoint file it writes there (the Python
 * side names them in `fresh_ls/statedir.py`; a test checks they agree). */
export const STATE_DIR = ".fresh-ls";
export const ENDPOINT_FILE = "endpoint.json";

export interface Settings {
  /** An interpreter with `fresh_ls`, or "" to find one. */
  python: string;
  /** The projection budget sent at initialize and per request; null: the server's own. */
  budgetBytes: number | null;
  policy: Policy;
  serverArgs: string[];
  /** The safety-net poll of `fresh/status`, 0 for none. */
  refreshSeconds: number;
  codeLens: boolean;
  /** Mark the lines agents saw in an older version in the gutter of open files. */
  gutter: boolean;
  /** Say at the end of a stale view's first changed line who saw it older and who changed it. */
  endOfLine: boolean;
  /** The letter S on files (Explorer, tabs) with stale views. */
  fileBadge: boolean;
  /** Route the model requests of agents in new integrated terminals through the proxy. */
  terminalProxy: boolean;
  /** Where the terminal proxy sends each request shape; "" for the proxy's default. */
  proxyUpstreamAnthropic: string;
  proxyUpstreamOpenai: string;
}

export const DEFAULTS: Settings = {
  python: "",
  budgetBytes: null,
  policy: "stale",
  serverArgs: [],
  refreshSeconds: 3,
  codeLens: true,
  gutter: true,
  endOfLine: true,
  fileBadge: true,
  terminalProxy: false,
  proxyUpstreamAnthropic: "",
  proxyUpstreamOpenai: "",
};

/** The keys under `freshLs.` (the manifest must declare exactly these). */
export const KEYS = Object.keys(DEFAULTS) as (keyof Settings)[];

/** Settings from raw values (`get(key)` is undefined when unset); a value of the wrong type
 * falls back to the default rather than reaching the server. */
export function readSettings(get: (key: keyof Settings) => unknown): Settings {
  const python = get("python");
  const budget = get("budgetBytes");
  const policy = get("policy");
  const args = get("serverArgs");
  const refresh = get("refreshSeconds");
  const lens = get("codeLens");
  const gutter = get("gutter");
  const flag = (key: "endOfLine" | "fileBadge"): boolean => {
    const v = get(key);
    return typeof v === "boolean" ? v : DEFAULTS[key];
  };
  const text = (key: "proxyUpstreamAnthropic" | "proxyUpstreamOpenai"): string => {
    const v = get(key);
    return typeof v === "string" ? v.trim() : "";
  };
  return {
    python: typeof python === "string" ? python.trim() : DEFAULTS.python,
    budgetBytes: typeof budget === "number" && Number.isInteger(budget) && budget >= 0 ? budget : null,
    policy: policy === "all" || policy === "stale" ? policy : DEFAULTS.policy,
    serverArgs: Array.isArray(args) && args.every((a) => typeof a === "string") ? [...args] : [],
    refreshSeconds: typeof refresh === "number" && Number.isFinite(refresh) ? refresh : DEFAULTS.refreshSeconds,
    codeLens: typeof lens === "boolean" ? lens : DEFAULTS.codeLens,
    gutter: typeof gutter === "boolean" ? gutter : DEFAULTS.gutter,
    endOfLine: flag("endOfLine"),
    fileBadge: flag("fileBadge"),
    terminalProxy: get("terminalProxy") === true,
    proxyUpstreamAnthropic: text("proxyUpstreamAnthropic"),
    proxyUpstreamOpenai: text("proxyUpstreamOpenai"),
  };
}

/** The settings a folder in Restricted Mode (not trusted) may not set: each can make the
 * extension run a program or send the user's API key where the folder says. package.json's
 * `capabilities.untrustedWorkspaces.restrictedConfigurations` names the same keys (a test
 * checks), so VS Code ignores their workspace values too; `readSettingsIn` makes sure. */
export const RESTRICTED_KEYS: readonly (keyof Settings)[] = ["python", "serverArgs", "proxyUpstreamAnthropic", "proxyUpstreamOpenai"];

/** What Restricted Mode turns off, as the panel and the log say it. */
export const RESTRICTED_NOTE =
  "This folder is in Restricted Mode (not trusted), so fresh-ls runs only the sidecar bundled " +
  "with the extension: never a workspace .venv or the Python extension's interpreter, and " +
  "this folder's values of freshLs.python, freshLs.serverArgs, freshLs.proxyUpstreamAnthropic " +
  "and freshLs.proxyUpstreamOpenai are ignored (your user settings of the last three still " +
  "apply). Trust the folder to use them.";

/** Settings as `readSettings`, where a folder that is not `trusted` gets only the user's
 * own value (`userValue`: the global level, never the workspace's or the folder's) of each
 * `RESTRICTED_KEYS` setting. */
export function readSettingsIn(
  trusted: boolean,
  get: (key: keyof Settings) => unknown,
  userValue: (key: keyof Settings) => unknown,
): Settings {
  return readSettings((key) => (!trusted && RESTRICTED_KEYS.includes(key) ? userValue(key) : get(key)));
}
