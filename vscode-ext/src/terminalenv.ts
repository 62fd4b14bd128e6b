// What the terminal proxy puts in the environment of new integrated terminals, and how its
// process is started and read. Pure: no `vscode` import (terminal.ts does the editor's part).
//
// With `freshLs.terminalProxy` on, the extension runs `fresh_ls proxies` per workspace folder
// (the two proxies of `fresh-ls run`, one for Anthropic's request shape and one for
// OpenAI's) and points `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL` of new terminals at them, so
// an agent started there (claude, pi, aider, codex with a base URL) shows up as a session.

import { freshLsArgs } from "./launch";

/** The variables set for new terminals, and the shape each one routes. */
export const PROXY_VARIABLES = {
  anthropic: "ANTHROPIC_BASE_URL",
  openai: "OPENAI_BASE_URL",
} as const;

export interface ProxyUrls {
  anthropic: string;
  openai: string;
  /** Where each goes on (the agent's own base URL before, or the public API). */
  anthropicUpstream?: string;
  openaiUpstream?: string;
  pid?: number;
}

/** `python -P -m fresh_ls proxies …` for a root: stops with its stdin (the extension holds the
 * pipe, so a crashed extension host leaves no stray proxy). Empty upstream settings leave
 * the choice to the proxy (the variable in its environment, else the public API). */
export function proxiesArgs(root: string, upstreams: { anthropic?: string; openai?: string } = {}): string[] {
  const args = freshLsArgs("proxies", "--root", root, "--exit-with-stdin");
  if (upstreams.anthropic?.trim()) args.push("--anthropic-upstream", upstreams.anthropic.trim());
  if (upstreams.openai?.trim()) args.push("--openai-upstream", upstreams.openai.trim());
  return args;
}

/** The first line `fresh_ls proxies` prints, or undefined when it is not that line. */
export function parseProxiesLine(line: string): ProxyUrls | undefined {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!data || typeof data !== "object") return undefined;
  const d = data as Record<string, unknown>;
  // A proxy's base URL carries its per-run secret as its path (only its agent may use it).
  const url = (v: unknown): v is string => typeof v === "string" && /^http:\/\/127\.0\.0\.1:\d+\/fresh-[A-Za-z0-9_-]+$/.test(v);
  if (!url(d.anthropic) || !url(d.openai)) return undefined;
  return {
    anthropic: d.anthropic,
    openai: d.openai,
    anthropicUpstream: typeof d.anthropicUpstream === "string" ? d.anthropicUpstream : undefined,
    openaiUpstream: typeof d.openaiUpstream === "string" ? d.openaiUpstream : undefined,
    pid: typeof d.pid === "number" ? d.pid : undefined,
  };
}

/** Variable → value for a folder's new terminals. */
export function terminalVariables(urls: ProxyUrls): Record<string, string> {
  return { [PROXY_VARIABLES.anthropic]: urls.anthropic, [PROXY_VARIABLES.openai]: urls.openai };
}

/** The collection's description (VS Code shows it in the terminal's environment hover). */
export function collectionDescription(folder: string): string {
  return `fresh-ls routes the model requests of agents started in this terminal through its local proxy for ${folder}, so they never send stale code (freshLs.terminalProxy).`;
}

/** One line of the status bar tooltip. */
export function proxyTooltipLine(folders: readonly { name: string; urls: ProxyUrls }[]): string {
  if (folders.length === 0) return "Terminal proxy: on, starting.";
  const parts = folders.map(
    (f) => `${f.name}: ${PROXY_VARIABLES.anthropic}=${f.urls.anthropic} (to ${f.urls.anthropicUpstream ?? "?"}), ${PROXY_VARIABLES.openai}=${f.urls.openai} (to ${f.urls.openaiUpstream ?? "?"})`,
  );
  return `Terminal proxy: on. New VS Code terminals send agents' model requests through fresh-ls. ${parts.join("; ")}.`;
}
