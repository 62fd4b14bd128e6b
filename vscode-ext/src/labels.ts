// Words, icons and markdown for statuses, views and units. Pure: no `vscode` import.

import type { LineRange, Status, StaleUnit, StaleView } from "./protocol";
import { isStale } from "./protocol";

/** A codicon id and the theme colour id to paint it with. */
export interface IconSpec {
  id: string;
  color?: string;
}

export const STATUS_ICONS: Record<Status, IconSpec> = {
  fresh: { id: "pass", color: "testing.iconPassed" },
  moved: { id: "arrow-swap", color: "charts.blue" },
  changed: { id: "diff-modified", color: "editorWarning.foreground" },
  ambiguous: { id: "question", color: "charts.orange" },
  deleted: { id: "trash", color: "errorForeground" },
  unreadable: { id: "error", color: "errorForeground" },
};

/** One phrase per status, for tooltips. */
export const STATUS_MEANING: Record<Status, string> = {
  fresh: "the observed lines are unchanged and where they were",
  moved: "unchanged text, now at other line numbers",
  changed: "an edit overlaps the observed lines",
  ambiguous: "several candidates, none can be chosen",
  deleted: "the file or definition is gone",
  unreadable: "the file cannot be read as text",
};

export function statusIcon(status: Status): IconSpec {
  return STATUS_ICONS[status] ?? { id: "circle-outline" };
}

/** `lines 8-10`; an empty file's whole-file view (`lastLine` 0) is `no lines`. */
export function linesLabel(range: LineRange): string {
  if (range.lastLine < range.firstLine) return "no lines";
  return `lines ${range.firstLine}-${range.lastLine}`;
}

/** `cart.py lines 8-10`. */
export function pathLines(path: string, range: LineRange): string {
  return `${path} ${linesLabel(range)}`;
}

/** What a unit is called in the panel: `method Cart.total`, `text`, `whole file`. */
export function unitName(unit: Pick<StaleUnit, "kind" | "name" | "symbolKind">): string {
  if (unit.kind === "file") return "whole file";
  if (unit.kind === "symbol") {
    const name = unit.name ?? "definition";
    return unit.symbolKind ? `${unit.symbolKind} ${name}` : name;
  }
  return unit.name ? `text near ${unit.name}` : "text";
}

/** The lines of a range as a row says them after the path: `8-10`, `9`; an empty file's
 * whole-file view (`lastLine` 0) is `empty`. */
export function lineSpan(range: LineRange): string {
  if (range.lastLine < range.firstLine) return "empty";
  return range.firstLine === range.lastLine ? String(range.firstLine) : `${range.firstLine}-${range.lastLine}`;
}

/** Tree label of a view: where first (`cart.py:8-10`), so a default-width sidebar shows the
 * file and lines; the status and age follow in the description, the id in the tooltip. */
export function viewLabel(view: { path: string; observed: LineRange }): string {
  return `${view.path}:${lineSpan(view.observed)}`;
}

/** A unit's row: its name (`method Cart.total`); the status follows in the description. */
export function unitLabel(unit: StaleUnit): string {
  return unitName(unit);
}

/** When a view was read, in words: `read just now`, `read 5 minutes ago`, `read 2 hours ago`.
 * `observedAt` is in seconds since the epoch (the server's clock); a clock a little ahead of
 * ours reads as "just now", never as the future. Undefined for an older server's views. */
export function readAgo(observedAt: number | undefined, nowMs: number): string | undefined {
  if (observedAt === undefined || !Number.isFinite(observedAt)) return undefined;
  const minutes = Math.floor(Math.max(0, nowMs / 1000 - observedAt) / 60);
  if (minutes < 1) return "read just now";
  const plural = (n: number, unit: string) => `read ${n} ${unit}${n === 1 ? "" : "s"} ago`;
  if (minutes < 60) return plural(minutes, "minute");
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return plural(hours, "hour");
  return plural(Math.floor(hours / 24), "day");
}

/** Where a view's row says it is from: its file (grouped by session) or its session (grouped
 * by file, where the file is the row above). */
export type ViewContext = "path" | "session";

/** Description of a view row: status, then when it was read (`changed · read 5 minutes
 * ago`), then `edit result` or `unsaved edits`; under a file row, the session too. */
export function viewDescription(
  view: StaleView,
  opts: { nowMs?: number; context?: ViewContext; session?: string } = {},
): string {
  const parts: string[] = [view.status];
  if (opts.context === "session" && opts.session !== undefined) parts.push(sessionLabel(opts.session));
  const ago = opts.nowMs !== undefined ? readAgo(view.observedAt, opts.nowMs) : undefined;
  if (ago) parts.push(ago);
  if (view.kind === "editResult") parts.push("edit result");
  if (view.editorDirty) parts.push("unsaved edits");
  return parts.join(" · ");
}

/** Description of a unit row: status and lines seen, and where they are now when that differs. */
export function unitDescription(unit: StaleUnit, path: string): string {
  return `${unit.status} · ${unitWhere(unit, path)}`;
}

/** `cart.py lines 8-10`, with `→ now lines 12-14` when the unit moved. */
export function unitWhere(unit: StaleUnit, path: string): string {
  const seen = pathLines(path, unit.observed);
  if (!unit.current) return seen;
  if (unit.current.firstLine === unit.observed.firstLine && unit.current.lastLine === unit.observed.lastLine) {
    return seen;
  }
  return `${seen} → now ${linesLabel(unit.current)}`;
}

/** Names the proxy gives sessions from an agent's own header (`fresh_ls/proxy/shapes.py`),
 * by the header's name, and what the panel calls them. */
const SESSION_KINDS: Record<string, string> = {
  "claude-code-session-id": "claude-code",
  "session-id": "session",
  conversation: "conversation",
};
const MAX_SESSION_LABEL = 40;

/** A session's name as the panel shows it: the proxy's long ids shortened
 * (`claude-code-session-id:3f2a1b9c-…` → `claude-code 3f2a1b9c…`), any other name as it is
 * unless it is too long for a row. The full name is in the tooltip; nothing else changes. */
export function sessionLabel(session: string): string {
  const at = session.indexOf(":");
  const kind = at > 0 ? SESSION_KINDS[session.slice(0, at)] : undefined;
  if (kind) {
    const id = session.slice(at + 1);
    return `${kind} ${id.length > 12 ? `${id.slice(0, 8)}…` : id}`;
  }
  return session.length > MAX_SESSION_LABEL ? `${session.slice(0, MAX_SESSION_LABEL - 1)}…` : session;
}

/** The agent a session belongs to, without its opaque id: `claude-code` for
 * `claude-code-session-id:…`, any other name as it is (shortened when too long). */
export function agentName(session: string): string {
  const at = session.indexOf(":");
  const kind = at > 0 ? SESSION_KINDS[session.slice(0, at)] : undefined;
  if (kind) return kind;
  return session.length > MAX_SESSION_LABEL ? `${session.slice(0, MAX_SESSION_LABEL - 1)}…` : session;
}

/** When something started, as a row says it: `14:05` today, `Dec 3, 14:05` before. Local
 * time, as the clock in the corner shows it. */
export function clockLabel(atMs: number, nowMs: number): string {
  const at = new Date(atMs);
  const now = new Date(nowMs);
  const hm = `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
  const sameDay = at.getFullYear() === now.getFullYear() && at.getMonth() === now.getMonth() && at.getDate() === now.getDate();
  if (sameDay) return hm;
  const month = at.toLocaleString("en", { month: "short" });
  return `${month} ${at.getDate()}, ${hm}`;
}

/** A session row's label: the agent and when it started (its first view's `observedAt`,
 * seconds), `claude-code · started 14:05`; the full id is in the tooltip. */
export function sessionRowLabel(session: string, startedAt: number | undefined, nowMs: number): string {
  const name = agentName(session);
  return startedAt === undefined ? name : `${name} · started ${clockLabel(startedAt * 1000, nowMs)}`;
}

export function sessionDescription(views: number, stale: number): string {
  const v = `${views} ${views === 1 ? "view" : "views"}`;
  return stale > 0 ? `${v} · ${stale} stale` : v;
}

/** Who changed the lines, in words. */
export function changedByLabel(changedBy: string | null | undefined): string | undefined {
  if (changedBy === undefined || changedBy === null) return undefined;
  if (changedBy === "self") return "this session's own write";
  if (changedBy === "editor") return "a save from the editor";
  if (changedBy === "outside") return "a write no client reported (git, a formatter, another process)";
  if (changedBy.startsWith("session:")) return `agent session ${changedBy.slice("session:".length)}`;
  return changedBy;
}

export interface DiffStats {
  added: number;
  removed: number;
  hunks: number;
}

/** Counts the `+`/`-` lines and hunks of a unified diff (headers excluded). */
export function diffStats(diff: string | null | undefined): DiffStats {
  const stats: DiffStats = { added: 0, removed: 0, hunks: 0 };
  if (!diff) return stats;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++ ") || line.startsWith("--- ")) continue;
    if (line.startsWith("@@")) stats.hunks += 1;
    else if (line.startsWith("+")) stats.added += 1;
    else if (line.startsWith("-")) stats.removed += 1;
  }
  return stats;
}

export function diffSummary(stats: DiffStats): string {
  const lines = (n: number) => `${n} ${n === 1 ? "line" : "lines"}`;
  if (stats.added === 0 && stats.removed === 0) return "no line changes";
  return `+${lines(stats.added)} −${lines(stats.removed)} in ${stats.hunks} ${stats.hunks === 1 ? "hunk" : "hunks"}`;
}

/** Escapes text for a markdown paragraph. */
export function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_{}[\]()#+\-.!|<>~])/g, "\\$1");
}

/** A fenced code block whose fence is longer than any backtick run inside the text. */
export function codeBlock(text: string, language = ""): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  const body = text.endsWith("\n") ? text : `${text}\n`;
  return `${fence}${language}\n${body}${fence}`;
}

const MAX_TOOLTIP_DIFF_LINES = 40;

function clipDiff(diff: string): string {
  const lines = diff.split("\n");
  if (lines.length <= MAX_TOOLTIP_DIFF_LINES) return diff;
  return `${lines.slice(0, MAX_TOOLTIP_DIFF_LINES).join("\n")}\n… ${lines.length - MAX_TOOLTIP_DIFF_LINES} more lines`;
}

/** Markdown tooltip of a unit: status, where, who changed it, and the diff summary and diff. */
export function unitTooltip(unit: StaleUnit, path: string): string {
  const parts = [
    `**${unit.status}** · ${escapeMarkdown(unitName(unit))}`,
    `${escapeMarkdown(unitWhere(unit, path))}`,
    `_${STATUS_MEANING[unit.status] ?? unit.status}_`,
  ];
  const by = changedByLabel(unit.changedBy);
  if (by && isStale(unit.status)) parts.push(`changed by ${escapeMarkdown(by)}`);
  if (unit.diff) {
    parts.push(diffSummary(diffStats(unit.diff)));
    parts.push(codeBlock(clipDiff(unit.diff), "diff"));
  }
  return parts.join("\n\n");
}

/** Markdown tooltip of a view: status, path and lines, units, diff summary, who changed it. */
export function viewTooltip(view: StaleView, session: string, nowMs?: number): string {
  const parts = [
    `**${view.status}** · view ${escapeMarkdown(view.viewId)} of session ${escapeMarkdown(session)}`,
    escapeMarkdown(pathLines(view.path, view.observed) + (view.kind === "editResult" ? " (edit result)" : "")),
    `_${STATUS_MEANING[view.status] ?? view.status}_`,
  ];
  if (view.observedAt !== undefined && nowMs !== undefined) {
    const ago = readAgo(view.observedAt, nowMs);
    parts.push(`${ago} (${new Date(view.observedAt * 1000).toLocaleString()})`);
  }
  const total: DiffStats = { added: 0, removed: 0, hunks: 0 };
  const who = new Set<string>();
  for (const unit of view.units) {
    const s = diffStats(unit.diff);
    total.added += s.added;
    total.removed += s.removed;
    total.hunks += s.hunks;
    const by = isStale(unit.status) ? changedByLabel(unit.changedBy) : undefined;
    if (by) who.add(by);
  }
  if (who.size > 0) parts.push(`changed by ${Array.from(who, escapeMarkdown).join("; ")}`);
  if (total.hunks > 0) parts.push(`diff: ${diffSummary(total)}`);
  const diffs = view.units.filter((u) => u.diff).map((u) => u.diff as string);
  if (diffs.length > 0) parts.push(codeBlock(clipDiff(diffs.join("")), "diff"));
  if (view.status === "changed") parts.push("Click to compare what the agent saw with the file on disk.");
  if (view.editorDirty) parts.push("An editor buffer of this file has unsaved edits (the disk is what counts).");
  return parts.join("\n\n");
}

/** The letter on files with stale views (Explorer, tabs): not one of git's (M, U, A, D, R,
 * C, I) nor a count, which reads as a number of problems. */
export const FILE_BADGE = "S";

/** What the letter means, with the count: the decoration's tooltip. */
export function fileBadgeTooltip(n: number): string {
  const views = n === 1 ? "1 agent view" : `${n} agent views`;
  return `S: ${views} of this file stale (fresh-ls): an agent read it before it changed. Nothing is wrong with the file; the agent views panel says what each agent saw.`;
}

/** The CodeLens title of a stale view: `agent-1 saw an older version · Show diff`, `… of this
 * file …` for a file-level view. Several sessions (one lens for all) are named together. */
export function lensTitle(sessions: string | readonly string[], what?: string): string {
  const who = (typeof sessions === "string" ? [sessions] : sessions).map(sessionLabel);
  const agents = who.length === 1 ? who[0] : who.join(", ");
  return `${agents} saw an older version${what ? ` of ${what}` : ""} · Show diff`;
}

/** One output-channel line in the language client's own style (`[Info  - 5:36:07 AM] …`), so
 * the extension's lines and the client's read as one log. */
export function logLine(message: string, at: Date = new Date(), level: "Info" | "Warn" | "Error" = "Info"): string {
  return `[${level.padEnd(5)} - ${at.toLocaleTimeString()}] ${message}`;
}
