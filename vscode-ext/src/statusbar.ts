// What the status bar item says: what the sidecar is doing (starting, running here or
// attached to a harness's server, restarting, stopped), the stale count, and whether new
// terminals are routed through the proxy. Pure: no `vscode` import.

import type { ServerState } from "./model";

export interface FolderSidecar {
  name: string;
  state: ServerState;
  /** Why it is not running, or "restarting (try N)" while it recovers. */
  error?: string;
  pid?: number;
  /** A server someone else (a harness) started, which the extension attached to. */
  attached?: boolean;
}

export interface StatusSummary {
  folders: readonly FolderSidecar[];
  stale: number;
  sessions: number;
  /** Undefined when the terminal proxy is off; else a line for the tooltip. */
  proxy?: string;
}

type Overall = "none" | "starting" | "restarting" | "running" | "failed" | "stopped";

function restarting(f: FolderSidecar): boolean {
  return f.state === "starting" && /^restarting/.test(f.error ?? "");
}

/** One state for all folders: any running counts as running (its counts are real). */
export function overallState(folders: readonly FolderSidecar[]): Overall {
  if (folders.length === 0) return "none";
  if (folders.some((f) => f.state === "running")) return "running";
  if (folders.some(restarting)) return "restarting";
  if (folders.some((f) => f.state === "starting")) return "starting";
  if (folders.some((f) => f.state === "failed")) return "failed";
  return "stopped";
}

export function statusBarText(s: StatusSummary): string {
  const proxy = s.proxy !== undefined ? " · $(radio-tower) proxy" : "";
  switch (overallState(s.folders)) {
    case "running":
      return (s.stale > 0 ? `$(history) ${s.stale} stale` : "$(pass) fresh-ls") + proxy;
    case "restarting":
      return "$(loading~spin) fresh-ls restarting";
    case "starting":
      return "$(loading~spin) fresh-ls starting";
    case "failed":
      return "$(error) fresh-ls stopped";
    default:
      return "$(circle-slash) fresh-ls";
  }
}

function sidecarLine(f: FolderSidecar): string {
  const where = f.name ? `${f.name}: ` : "";
  switch (f.state) {
    case "running":
      return f.attached
        ? `${where}attached to pid ${f.pid ?? "?"} (a server a harness started)`
        : `${where}running, pid ${f.pid ?? "?"} (started by the extension)`;
    case "starting":
      return `${where}${restarting(f) ? f.error : "starting"}`;
    case "failed":
      return `${where}stopped: ${f.error ?? "see the fresh-ls output"}`;
    default:
      return `${where}stopped`;
  }
}

export function statusBarTooltip(s: StatusSummary): string {
  const lines: string[] = [];
  if (overallState(s.folders) === "running") {
    const sessions = `${s.sessions} agent ${s.sessions === 1 ? "session" : "sessions"}`;
    const views = `${s.stale} stale ${s.stale === 1 ? "view" : "views"}`;
    lines.push(`fresh-ls: ${views} across ${sessions}.`);
  } else if (s.folders.length === 0) {
    lines.push("fresh-ls: open a folder to start the sidecar.");
  } else {
    lines.push("fresh-ls: the sidecar is not running.");
  }
  const one = s.folders.length === 1;
  for (const f of s.folders) lines.push(`Sidecar ${sidecarLine(one ? { ...f, name: "" } : f)}.`);
  if (s.proxy !== undefined) lines.push(s.proxy);
  lines.push("Click to open the agent views panel.");
  return lines.join("\n");
}
