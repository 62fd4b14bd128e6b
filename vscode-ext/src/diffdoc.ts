// The documents behind "Show diff" and "Show projection": their URIs and their text.
// Pure: no `vscode` import (providers.ts turns these parts into vscode.Uri).
//
// The left side of the diff is "the file as the agent believes it is": the current file with
// the lines where the view's code is now replaced by the text the agent saw. Against the real
// file on the right, the diff then shows exactly what changed since the agent looked, in
// context, with file line numbers on both sides above the view.

import { linesLabel } from "./labels";
import type { LineRange } from "./protocol";

export const OBSERVED_SCHEME = "fresh-ls-observed";
export const PROJECTION_SCHEME = "fresh-ls-projection";
/** What the agent saw, alone (a deleted, ambiguous or unreadable view): read-only, plain
 * text, so no language server parses a fragment of code and fills Problems with it. */
export const VIEW_SCHEME = "fresh-ls-view";

export interface UriParts {
  scheme: string;
  path: string;
  query: string;
}

export interface ObservedRef {
  /** The workspace folder's URI string. */
  folder: string;
  session: string;
  viewId: string;
  /** Root-relative path of the viewed file (gives the tab its name and language). */
  path: string;
  /** Whole observed text alone instead of spliced into the current file. */
  alone?: boolean;
}

export function observedUri(ref: ObservedRef): UriParts {
  const q = new URLSearchParams({ folder: ref.folder, session: ref.session, view: ref.viewId });
  if (ref.alone) q.set("alone", "1");
  return { scheme: OBSERVED_SCHEME, path: `/${ref.path.replace(/^\/+/, "")}`, query: q.toString() };
}

export function parseObservedUri(parts: { path: string; query: string }): ObservedRef {
  const q = new URLSearchParams(parts.query);
  const folder = q.get("folder");
  const session = q.get("session");
  const viewId = q.get("view");
  if (!folder || !session || !viewId) {
    throw new Error(`not a fresh-ls observed-view URI (query ${JSON.stringify(parts.query)})`);
  }
  return { folder, session, viewId, path: parts.path.replace(/^\/+/, ""), alone: q.get("alone") === "1" };
}

export interface ProjectionRef {
  folder: string;
  session: string;
}

export function projectionUri(ref: ProjectionRef): UriParts {
  const q = new URLSearchParams({ folder: ref.folder, session: ref.session });
  // A name per session, so two projections open side by side; `.txt`: the text is prompt text.
  const name = ref.session.replace(/[^A-Za-z0-9._-]+/g, "_") || "session";
  return { scheme: PROJECTION_SCHEME, path: `/projection-${name}.txt`, query: q.toString() };
}

export function parseProjectionUri(parts: { query: string }): ProjectionRef {
  const q = new URLSearchParams(parts.query);
  const folder = q.get("folder");
  const session = q.get("session");
  if (!folder || !session) throw new Error(`not a fresh-ls projection URI (query ${JSON.stringify(parts.query)})`);
  return { folder, session };
}

export interface ViewDocRef {
  folder: string;
  session: string;
  viewId: string;
  /** Root-relative path of the viewed file. */
  path: string;
  observed: LineRange;
}

/**
 * The tab is titled with whose view it is (`agent-1 saw cart.ts lines 8-10`); the name ends
 * with no file extension, so no language is guessed from it.
 */
export function viewDocUri(ref: ViewDocRef): UriParts {
  const q = new URLSearchParams({ folder: ref.folder, session: ref.session, view: ref.viewId });
  const name = ref.path.split("/").pop() || ref.path;
  const title = `${ref.session} saw ${name} ${linesLabel(ref.observed)}`.replace(/[/\\]/g, "_");
  return { scheme: VIEW_SCHEME, path: `/${title}`, query: q.toString() };
}

export function parseViewDocUri(parts: { query: string }): { folder: string; session: string; viewId: string } {
  const q = new URLSearchParams(parts.query);
  const folder = q.get("folder");
  const session = q.get("session");
  const viewId = q.get("view");
  if (!folder || !session || !viewId) throw new Error(`not a fresh-ls view URI (query ${JSON.stringify(parts.query)})`);
  return { folder, session, viewId };
}

/**
 * The text of a view document: a header that says whose view it is and what became of it,
 * then each observed line under its own line number in the file (the editor's gutter
 * counts from 1; these are the numbers the agent's tool showed).
 */
export function numberedView(
  seen: { path: string; firstLine: number; lastLine: number; text: string },
  session: string,
  viewId: string,
  status?: string,
): string {
  const lines = splitLines(seen.text).map((l) => l.replace(/\r?\n$/, ""));
  const width = String(Math.max(seen.firstLine + lines.length - 1, 1)).length;
  const head =
    `# ${seen.path} ${linesLabel(seen)} as agent session ${session} saw it (view ${viewId})` +
    `${status ? `; now ${status}` : ""}. Read-only.\n`;
  const body = lines.map((l, i) => `${String(seen.firstLine + i).padStart(width)} │ ${l}\n`).join("");
  return head + body;
}

/** Splits text into lines the contract's way: a line ends at LF and keeps its ending. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/(?<=\n)/);
  return lines;
}

/**
 * The current file with lines `range.firstLine..range.lastLine` (1-based, inclusive; clamped)
 * replaced by `observed`. With no range, the observed text alone.
 */
export function spliceObserved(current: string, observed: string, range: LineRange | null): string {
  if (!range) return observed;
  const lines = splitLines(current);
  const first = Math.max(1, Math.min(range.firstLine, lines.length + 1));
  const last = Math.min(Math.max(range.lastLine, first - 1), lines.length);
  const before = lines.slice(0, first - 1);
  const after = lines.slice(last);
  let middle = observed;
  // Keep the file's line structure: the spliced text must end with a newline when more follows.
  if (after.length > 0 && middle !== "" && !middle.endsWith("\n")) middle += "\n";
  // The observed text may be the file's last lines with a newline the file no longer has
  // (or the reverse); no such difference is invented at the splice point.
  return before.join("") + middle + after.join("");
}

/** The diff editor's title: what the agent saw on the left, the disk on the right. */
export function diffTitle(path: string, observed: LineRange, session: string): string {
  const name = path.split("/").pop() || path;
  return `${name} ${linesLabel(observed)}: seen by ${session} ↔ on disk`;
}

/** The title of the read-only document with what the agent saw, alone. */
export function observedTitle(path: string, observed: LineRange, session: string): string {
  return `${path} ${linesLabel(observed)} as ${session} saw it`;
}

/** What "Show projection" needs of a `fresh/project` result. */
export interface ProjectionSummary {
  planId: string;
  markers: { viewId: string; text: string }[];
  omitted: { viewIds: string[]; path: string; name?: string; reason: string; bytes?: number }[];
  usedBytes: number;
  budgetBytes: number;
  rendered: string;
}

/** The rule between the plan and the rendered text: everything after it is exactly
 * `rendered`, byte for byte, what a harness appends at the end of the prompt. */
export const RENDERED_RULE = "# ---- rendered: appended at the end of the prompt, exactly what follows ----\n";

/**
 * The text of the "Show projection" document: the plan (id, budget used, the marker that
 * replaces each view's tool result, what was left out and why) as `#` lines, then `rendered`
 * after `RENDERED_RULE`.
 */
export function projectionText(session: string, result: ProjectionSummary): string {
  const head = [
    `# fresh-ls projection for session ${session}: plan ${result.planId}, ` +
      `${budgetLine(result.usedBytes, result.budgetBytes)} used.`,
  ];
  if (result.markers.length > 0) {
    head.push("# markers (each replaces that view's tool result in the prompt):");
    for (const m of result.markers) head.push(`#   ${m.viewId}: ${m.text.replace(/\n/g, " ")}`);
  }
  if (result.omitted.length > 0) {
    head.push("# left out:");
    for (const o of result.omitted) {
      const what = `${o.path}${o.name ? ` ${o.name}` : ""}`;
      head.push(`#   ${what} (${o.reason}${o.bytes !== undefined ? `, ${o.bytes} bytes` : ""}) for ${o.viewIds.join(", ")}`);
    }
  }
  if (result.rendered === "") {
    head.push("# nothing to project: every view is fresh under this policy, or the session has no views.");
    return `${head.join("\n")}\n`;
  }
  return `${head.join("\n")}\n${RENDERED_RULE}${result.rendered}`;
}

/** One line for the status bar or a notification: `412 bytes of 131072 bytes`. */
export function budgetLine(usedBytes: number, budgetBytes: number): string {
  return `${usedBytes} bytes of ${budgetBytes} bytes`;
}
