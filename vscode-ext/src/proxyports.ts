// Where the terminal proxy of a workspace folder listens, chosen once and kept in the state
// dir, so the base URLs a terminal was given stay valid: the proxy is restarted on the same
// ports with the same secret after an upstream change, a sidecar restart or a new window.
// Pure: no `vscode` import (terminal.ts reads and writes the file and starts the process).

import type { ProxyUrls } from "./terminalenv";

/** The record's name in the folder's state dir (mode 0600: it holds the URLs' secret). */
export const PORTS_FILE = "terminal-proxy.json";
/** The variable `fresh_ls proxies` reads the secret from (not an argument: other users of
 * the machine can read a process's arguments, not its environment). */
export const SECRET_VARIABLE = "FRESH_LS_PROXY_SECRET";
/** `fresh_ls proxies` exits with this when a port it was given is in use. */
export const PORT_IN_USE_EXIT = 3;

export interface PortsRecord {
  anthropicPort: number;
  openaiPort: number;
  secret: string;
}

const SECRET_RE = /^[A-Za-z0-9_-]{16,}$/;

function isPort(n: unknown): n is number {
  return typeof n === "number" && Number.isInteger(n) && n > 0 && n < 65536;
}

/** The record in the file's text, or undefined when there is none or it is not one. */
export function parsePortsRecord(text: string | undefined): PortsRecord | undefined {
  if (!text) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!data || typeof data !== "object") return undefined;
  const d = data as Record<string, unknown>;
  if (!isPort(d.anthropicPort) || !isPort(d.openaiPort) || d.anthropicPort === d.openaiPort) return undefined;
  if (typeof d.secret !== "string" || !SECRET_RE.test(d.secret)) return undefined;
  return { anthropicPort: d.anthropicPort, openaiPort: d.openaiPort, secret: d.secret };
}

export interface LaunchPorts {
  anthropicPort: number;
  openaiPort: number;
  secret: string;
  /** The ports are the recorded ones (so a failure to bind them means they must change). */
  reused: boolean;
}

/** What to start the proxies with: the recorded ports and secret, else free ports (0) and a
 * new secret (`newSecret`). `avoidRecorded`: the recorded ports are in use, take free ones
 * (the secret stays: only the ports move). */
export function choosePorts(record: PortsRecord | undefined, newSecret: () => string, avoidRecorded = false): LaunchPorts {
  if (record && !avoidRecorded) return { ...record, reused: true };
  return { anthropicPort: 0, openaiPort: 0, secret: record?.secret ?? newSecret(), reused: false };
}

/** `--anthropic-port N --openai-port M` (0: a free one). */
export function portArgs(ports: Pick<LaunchPorts, "anthropicPort" | "openaiPort">): string[] {
  return ["--anthropic-port", String(ports.anthropicPort), "--openai-port", String(ports.openaiPort)];
}

/** The port of a base URL `http://127.0.0.1:PORT/…`. */
export function urlPort(url: string): number | undefined {
  const m = /^http:\/\/127\.0\.0\.1:(\d+)\//.exec(url.endsWith("/") ? url : `${url}/`);
  return m ? Number(m[1]) : undefined;
}

/** The record to keep after the proxies said where they listen. */
export function recordOf(urls: ProxyUrls, secret: string): PortsRecord | undefined {
  const anthropicPort = urlPort(urls.anthropic);
  const openaiPort = urlPort(urls.openai);
  if (!isPort(anthropicPort) || !isPort(openaiPort)) return undefined;
  return { anthropicPort, openaiPort, secret };
}

export function sameRecord(a: PortsRecord | undefined, b: PortsRecord | undefined): boolean {
  return !!a && !!b && a.anthropicPort === b.anthropicPort && a.openaiPort === b.openaiPort && a.secret === b.secret;
}

/** The terminals that hold a folder's base URL other than the one its proxy serves now
 * (a terminal given no URL, opened while the proxy was off, is not one: it was never routed). */
export function staleTerminals<T extends { name: string; anthropicUrl?: string }>(terminals: readonly T[], current: string): T[] {
  return terminals.filter((t) => t.anthropicUrl !== undefined && t.anthropicUrl !== current);
}

/** The offer to relaunch them, naming them. */
export function relaunchMessage(folder: string, names: readonly string[]): string {
  const which = names.map((n) => `“${n}”`).join(", ");
  const these = names.length === 1 ? `Terminal ${which} still points` : `Terminals ${which} still point`;
  return `fresh-ls: the terminal proxy for ${folder} had to move to other ports (the ones it kept were in use). ${these} at the old ones: an agent started there cannot reach its model until the terminal is relaunched.`;
}
