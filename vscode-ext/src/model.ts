// The agent views tree as plain data: folders → sessions → views → units, and what each row
// shows. Pure: no `vscode` import (tree.ts maps `RowSpec` onto vscode.TreeItem).

import {
  escapeMarkdown,
  lensTitle,
  readAgo,
  sessionDescription,
  sessionRowLabel,
  statusIcon,
  unitDescription,
  unitLabel,
  unitTooltip,
  viewDescription,
  viewLabel,
  viewTooltip,
  type IconSpec,
} from "./labels";
import { RESTRICTED_NOTE } from "./config";
import { changedLines } from "./gutterlines";
import type { LineRange, SessionSummary, StaleUnit, StaleView, Status, StatusResult } from "./protocol";
import { STATUS_ORDER, isStale } from "./protocol";

export type ServerState = "starting" | "running" | "stopped" | "failed";

/** What the extension knows about one workspace folder's server. */
export interface FolderState {
  /** The folder's URI as a string: the key everywhere. */
  key: string;
  name: string;
  /** The folder's path on disk (the server's root). */
  root: string;
  state: ServerState;
  /** Why the server is not running, with the fix. */
  error?: string;
  /** The folder is in Restricted Mode (not trusted): the panel says what that turns off. */
  restricted?: boolean;
  status?: StatusResult;
  /** Views per session, from `fresh/stale`. */
  views: Map<string, StaleView[]>;
}

export type Node =
  | { type: "folder"; folder: string }
  | { type: "message"; folder: string; text: string; tooltip?: string; icon: IconSpec }
  | { type: "session"; folder: string; session: string }
  /** Sessions by how recently they last read something (shown when they span two or more). */
  | { type: "recency"; folder: string; group: Recency }
  | { type: "file"; folder: string; path: string }
  /** `under: "file"`: the row sits under its file (grouped by file), not under its session. */
  | { type: "view"; folder: string; session: string; viewId: string; under?: "file" }
  | { type: "unit"; folder: string; session: string; viewId: string; unitId: string };

export interface ClickAction {
  command: string;
  title: string;
  args: unknown[];
}

/** Everything a tree row shows, independent of the editor API. */
export interface RowSpec {
  id: string;
  label: string;
  description?: string;
  /** Markdown. */
  tooltip?: string;
  icon?: IconSpec;
  collapsible: "none" | "collapsed" | "expanded";
  contextValue: string;
  click?: ClickAction;
}

/** Command ids, shared by package.json contributions, the tree and the lenses. */
export const Commands = {
  refresh: "freshLs.refresh",
  restart: "freshLs.restartServer",
  showProjection: "freshLs.showProjection",
  copyEndpoint: "freshLs.copyEndpoint",
  forgetSession: "freshLs.forgetSession",
  openView: "freshLs.openView",
  useBundled: "freshLs.useBundledSidecar",
  terminalProxyOn: "freshLs.terminalProxyOn",
  terminalProxyOff: "freshLs.terminalProxyOff",
  onlyStale: "freshLs.showOnlyStale",
  allViews: "freshLs.showAllViews",
  groupByFile: "freshLs.groupByFile",
  groupBySession: "freshLs.groupBySession",
  openViewRow: "freshLs.openViewRow",
  copyMarker: "freshLs.copyMarker",
  forgetView: "freshLs.forgetView",
  showLogs: "freshLs.showLogs",
  openSettings: "freshLs.openSettings",
  getStarted: "freshLs.getStarted",
  installClaudeHooks: "freshLs.installClaudeHooks",
  forgetAll: "freshLs.forgetAll",
  forgetOlderSessions: "freshLs.forgetOlderSessions",
  nextStaleChange: "freshLs.nextStaleChange",
  previousStaleChange: "freshLs.previousStaleChange",
  focusPanel: "freshLs.views.focus",
} as const;

/** `publisher.name` in package.json: how VS Code names this extension. */
export const EXTENSION_ID = "fresh-ls.fresh-ls";

/** The getting-started walkthrough (package.json `contributes.walkthroughs`), by full id. */
export const WALKTHROUGH = `${EXTENSION_ID}#getStarted`;

/** Context keys the view title's toggles read (package.json `when` clauses). */
export const ContextKeys = { onlyStale: "freshLs.onlyStale", groupBy: "freshLs.groupBy" } as const;

/** What a click on a view (or unit) does. */
export interface ViewTarget {
  folder: string;
  session: string;
  viewId: string;
  unitId?: string;
}

/** How the panel lists views: every view or only the stale ones; under their sessions or
 * under their files. The view title's filter and group buttons set them. */
export interface PanelOptions {
  onlyStale: boolean;
  groupBy: "session" | "file";
}

export const DEFAULT_OPTIONS: PanelOptions = { onlyStale: false, groupBy: "session" };

export class PanelModel {
  private readonly folders = new Map<string, FolderState>();
  options: PanelOptions = { ...DEFAULT_OPTIONS };

  /** `now` in milliseconds: the clock "read 5 minutes ago" is measured against. */
  constructor(private readonly now: () => number = () => Date.now()) {}

  /** Folders in the order they were set (the workspace's order). */
  list(): FolderState[] {
    return Array.from(this.folders.values());
  }

  get(folder: string): FolderState | undefined {
    return this.folders.get(folder);
  }

  upsert(state: FolderState): void {
    this.folders.set(state.key, state);
  }

  remove(folder: string): void {
    this.folders.delete(folder);
  }

  /** Replaces the status and the views of every session it names; drops sessions it does not. */
  setSnapshot(folder: string, status: StatusResult, views: Map<string, StaleView[]>): void {
    const f = this.folders.get(folder);
    if (!f) return;
    f.status = status;
    f.views = views;
  }

  /** Replaces one session's views (after a `fresh/didInvalidate`), keeping its summary true. */
  setSessionViews(folder: string, session: string, views: StaleView[]): void {
    const f = this.folders.get(folder);
    if (!f) return;
    f.views.set(session, views);
    if (f.status) {
      const summary = { session, views: views.length, stale: views.filter((v) => isStale(v.status)).length };
      const others = f.status.sessions.filter((s) => s.session !== session);
      f.status = { ...f.status, sessions: views.length > 0 ? sortSessions([...others, summary]) : others };
    }
    if (views.length === 0) f.views.delete(session);
  }

  sessions(folder: string): SessionSummary[] {
    return this.folders.get(folder)?.status?.sessions ?? [];
  }

  /** A session's views as the panel lists them: worst first, only stale ones if so filtered. */
  views(folder: string, session: string): StaleView[] {
    return sortViews(this.folders.get(folder)?.views.get(session) ?? []).filter(
      (v) => !this.options.onlyStale || isStale(v.status),
    );
  }

  /** Files with listed views (by path), each with its views and their sessions, worst first. */
  files(folder: string): { path: string; views: { session: string; view: StaleView }[] }[] {
    const byPath = new Map<string, { session: string; view: StaleView }[]>();
    const f = this.folders.get(folder);
    for (const session of Array.from(f?.views.keys() ?? []).sort(naturalCompare)) {
      for (const view of this.views(folder, session)) {
        const list = byPath.get(view.path) ?? [];
        list.push({ session, view });
        byPath.set(view.path, list);
      }
    }
    return Array.from(byPath, ([path, views]) => ({
      path,
      views: views.sort((a, b) => compareViews(a.view, b.view) || naturalCompare(a.session, b.session)),
    })).sort((a, b) => naturalCompare(a.path, b.path));
  }

  view(folder: string, session: string, viewId: string): StaleView | undefined {
    return this.folders.get(folder)?.views.get(session)?.find((v) => v.viewId === viewId);
  }

  /** Views whose code changed, went or cannot be placed (not `fresh`, not `moved`: a moved
   * view still holds the current text, only at other line numbers): what turns the status
   * bar yellow. */
  attentionCount(): number {
    let n = 0;
    for (const f of this.folders.values()) {
      for (const views of f.views.values()) n += views.filter((v) => v.status !== "fresh" && v.status !== "moved").length;
    }
    return n;
  }

  /** Stale views over every running folder (what the status bar shows). */
  staleCount(): number {
    let n = 0;
    for (const f of this.folders.values()) {
      for (const s of f.status?.sessions ?? []) n += s.stale;
    }
    return n;
  }

  sessionCount(): number {
    let n = 0;
    for (const f of this.folders.values()) n += f.status?.sessions.length ?? 0;
    return n;
  }

  anyRunning(): boolean {
    return this.list().some((f) => f.state === "running");
  }

  /** The rows under `node` (the top level when undefined). */
  children(node?: Node): Node[] {
    if (!node) {
      const folders = this.list();
      if (folders.length === 1) return this.folderChildren(folders[0]);
      return folders.map((f) => ({ type: "folder", folder: f.key }) as Node);
    }
    switch (node.type) {
      case "folder": {
        const f = this.folders.get(node.folder);
        return f ? this.folderChildren(f) : [];
      }
      case "file":
        return (this.files(node.folder).find((f) => f.path === node.path)?.views ?? []).map(
          ({ session, view }) => ({ type: "view", folder: node.folder, session, viewId: view.viewId, under: "file" }) as Node,
        );
      case "recency": {
        const f = this.folders.get(node.folder);
        if (!f) return [];
        return this.folderChildren(f, true)
          .filter((n) => n.type === "session" && recencyOf(sessionTimes(f.views.get(n.session) ?? []).lastAt, this.now()) === node.group);
      }
      case "session":
        return this.views(node.folder, node.session).map((v) => ({
          type: "view",
          folder: node.folder,
          session: node.session,
          viewId: v.viewId,
        }));
      case "view": {
        const view = this.view(node.folder, node.session, node.viewId);
        return (view?.units ?? []).map((u) => ({
          type: "unit",
          folder: node.folder,
          session: node.session,
          viewId: node.viewId,
          unitId: u.unitId,
        }));
      }
      default:
        return [];
    }
  }

  private folderChildren(f: FolderState, ungrouped = false): Node[] {
    const rows = this.stateChildren(f, ungrouped);
    return f.restricted ? [restrictedRow(f.key), ...rows] : rows;
  }

  private stateChildren(f: FolderState, ungrouped = false): Node[] {
    if (f.state === "failed") {
      return [
        {
          type: "message",
          folder: f.key,
          text: "fresh-ls is not running",
          tooltip: f.error,
          icon: { id: "error", color: "errorForeground" },
        },
      ];
    }
    if (f.state === "starting" && !f.status) {
      return [{ type: "message", folder: f.key, text: "starting the sidecar…", icon: { id: "loading~spin" } }];
    }
    if (f.state === "stopped" && !f.status) {
      return [{ type: "message", folder: f.key, text: "the sidecar is stopped", icon: { id: "debug-stop" } }];
    }
    // No sessions: an empty list, so the view shows its welcome text.
    const sessions = f.status?.sessions ?? [];
    if (sessions.length === 0) return [];
    const rows: Node[] =
      this.options.groupBy === "file"
        ? this.files(f.key).map((file) => ({ type: "file", folder: f.key, path: file.path }) as Node)
        : sessions
            .filter((s) => !this.options.onlyStale || this.views(f.key, s.session).length > 0)
            .map((s) => ({ type: "session", folder: f.key, session: s.session }) as Node);
    if (this.options.groupBy !== "file" && !ungrouped) {
      const groups = groupByRecency(
        rows.map((r) => (r as { session: string }).session),
        (session) => sessionTimes(f.views.get(session) ?? []).lastAt,
        this.now(),
      );
      if (groups.length > 1) return groups.map((g) => ({ type: "recency", folder: f.key, group: g.group }) as Node);
    }
    if (rows.length === 0 && this.options.onlyStale) {
      // Filtered down to nothing: say so, rather than the welcome text of an empty panel.
      return [{ type: "message", folder: f.key, text: "no stale views", tooltip: "Every view is fresh. “Show All Views” lists them.", icon: { id: "pass", color: "testing.iconPassed" } }];
    }
    return rows;
  }

  /** What `node`'s row shows. */
  row(node: Node): RowSpec {
    switch (node.type) {
      case "folder": {
        const f = this.folders.get(node.folder);
        const sessions = f?.status?.sessions ?? [];
        const stale = sessions.reduce((n, s) => n + s.stale, 0);
        return {
          id: `folder:${node.folder}`,
          label: f?.name ?? node.folder,
          description: f?.state === "running" ? sessionCount(sessions.length, stale) : f?.state,
          tooltip: f?.error ?? f?.root,
          icon: { id: "root-folder" },
          collapsible: "expanded",
          contextValue: "folder",
        };
      }
      case "recency": {
        const n = this.children(node).length;
        return {
          id: `recency:${node.folder}:${node.group}`,
          label: RECENCY_LABELS[node.group],
          description: `${n} ${n === 1 ? "session" : "sessions"}`,
          icon: { id: node.group === "older" ? "history" : "clock" },
          collapsible: node.group === "older" ? "collapsed" : "expanded",
          contextValue: `recency.${node.group}`,
        };
      }
      case "message":
        return {
          id: `message:${node.folder}:${node.text}`,
          label: node.text,
          tooltip: node.tooltip,
          icon: node.icon,
          collapsible: "none",
          contextValue: "message",
        };
      case "session": {
        const summary = this.sessions(node.folder).find((s) => s.session === node.session);
        const views = summary?.views ?? 0;
        const stale = summary?.stale ?? 0;
        const nowMs = this.now();
        const times = sessionTimes(this.folders.get(node.folder)?.views.get(node.session) ?? []);
        const when = [
          times.startedAt !== undefined ? `started ${new Date(times.startedAt * 1000).toLocaleString()}` : undefined,
          times.lastAt !== undefined ? `last ${readAgo(times.lastAt, nowMs)}` : undefined,
        ].filter(Boolean);
        return {
          id: `session:${node.folder}:${node.session}`,
          label: sessionRowLabel(node.session, times.startedAt, nowMs),
          description: sessionDescription(views, stale),
          tooltip: `Agent session **${escapeMarkdown(node.session)}**: ${sessionDescription(views, stale)}${when.length ? `\n\n${when.join(" · ")}` : ""}`,
          icon: stale > 0 ? { id: "hubot", color: "editorWarning.foreground" } : { id: "hubot" },
          collapsible: "expanded",
          contextValue: "session",
        };
      }
      case "file": {
        const listed = this.files(node.folder).find((f) => f.path === node.path)?.views ?? [];
        const stale = listed.filter((v) => isStale(v.view.status)).length;
        const sessions = new Set(listed.map((v) => v.session)).size;
        const description = `${sessionDescription(listed.length, stale)} · ${sessions} ${sessions === 1 ? "session" : "sessions"}`;
        return {
          id: `file:${node.folder}:${node.path}`,
          label: node.path,
          description,
          tooltip: `**${node.path}**: ${description}`,
          icon: stale > 0 ? { id: "file", color: "editorWarning.foreground" } : { id: "file" },
          collapsible: "expanded",
          contextValue: "file",
        };
      }
      case "view": {
        const view = this.view(node.folder, node.session, node.viewId);
        if (!view) {
          return { id: viewRowId(node), label: node.viewId, collapsible: "none", contextValue: "view" };
        }
        const nowMs = this.now();
        return {
          id: viewRowId(node),
          label: viewLabel(view),
          description: viewDescription(view, {
            nowMs,
            context: node.under === "file" ? "session" : "path",
            session: node.session,
          }),
          tooltip: viewTooltip(view, node.session, nowMs),
          icon: statusIcon(view.status),
          // One unit that covers the view says nothing new: no need to open it.
          collapsible: view.units.length > 1 || isStale(view.status) ? "collapsed" : "none",
          contextValue: `view.${view.status}`,
          click: openViewAction({ folder: node.folder, session: node.session, viewId: node.viewId }),
        };
      }
      case "unit": {
        const view = this.view(node.folder, node.session, node.viewId);
        const unit = view?.units.find((u) => u.unitId === node.unitId);
        if (!view || !unit) {
          return { id: unitRowId(node), label: node.unitId, collapsible: "none", contextValue: "unit" };
        }
        return {
          id: unitRowId(node),
          label: unitLabel(unit),
          description: unitDescription(unit, view.path),
          tooltip: unitTooltip(unit, view.path),
          icon: statusIcon(unit.status),
          collapsible: "none",
          contextValue: `unit.${unit.status}`,
          click: openViewAction({
            folder: node.folder,
            session: node.session,
            viewId: node.viewId,
            unitId: node.unitId,
          }),
        };
      }
    }
  }
}

function sessionCount(sessions: number, stale: number): string {
  const s = `${sessions} ${sessions === 1 ? "session" : "sessions"}`;
  return stale > 0 ? `${s} · ${stale} stale` : s;
}

function viewRowId(node: { folder: string; session: string; viewId: string }): string {
  return `view:${node.folder}:${node.session}:${node.viewId}`;
}

function unitRowId(node: { folder: string; session: string; viewId: string; unitId: string }): string {
  return `unit:${node.folder}:${node.session}:${node.viewId}:${node.unitId}`;
}

/** The first row of a folder in Restricted Mode: what is off, and why (the tooltip). */
export function restrictedRow(folder: string): Node {
  return {
    type: "message",
    folder,
    text: "Restricted Mode: bundled sidecar only, this folder's fresh-ls settings ignored",
    tooltip: RESTRICTED_NOTE,
    icon: { id: "shield", color: "problemsWarningIcon.foreground" },
  };
}

export function openViewAction(target: ViewTarget): ClickAction {
  return { command: Commands.openView, title: "Open view", args: [target] };
}

function rank(status: Status): number {
  return STATUS_ORDER.indexOf(status);
}

/** Worst first, then by path and first line, then by id: a stable order. */
export function sortViews(views: StaleView[]): StaleView[] {
  return [...views].sort(compareViews);
}

export function compareViews(a: StaleView, b: StaleView): number {
  return (
    rank(b.status) - rank(a.status) ||
    a.path.localeCompare(b.path) ||
    a.observed.firstLine - b.observed.firstLine ||
    naturalCompare(a.viewId, b.viewId)
  );
}

/** `call_9` before `call_10`: ids and session names carry counters, compared as numbers. */
export function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true }) || (a < b ? -1 : a > b ? 1 : 0);
}

export function sortSessions(sessions: SessionSummary[]): SessionSummary[] {
  return [...sessions].sort((a, b) => naturalCompare(a.session, b.session));
}

/** What a click on a view or unit opens. */
export type OpenPlan =
  | { kind: "diff"; select?: LineRange }
  | { kind: "file"; select: LineRange }
  | { kind: "observed" };

/**
 * changed → the diff between what the agent saw and the file; fresh or moved → the file at
 * the lines (they are unchanged); deleted, ambiguous, unreadable → what the agent saw, alone.
 */
export function openPlan(view: StaleView, unitId?: string): OpenPlan {
  const unit: StaleUnit | undefined = unitId ? view.units.find((u) => u.unitId === unitId) : undefined;
  const status = unit?.status ?? view.status;
  const current = unit ? unit.current : currentRange(view);
  if (status === "changed") return { kind: "diff", select: current ?? undefined };
  if (status === "fresh" || status === "moved") {
    return { kind: "file", select: current ?? unit?.observed ?? view.observed };
  }
  // A view with a definition gone (or ambiguous) but other lines still found: the diff shows both.
  if (!unit && (status === "deleted" || status === "ambiguous") && current) return { kind: "diff", select: current };
  return { kind: "observed" };
}

export type Recency = "hour" | "today" | "older";

export const RECENCY_LABELS: Record<Recency, string> = {
  hour: "Active in the last hour",
  today: "Earlier today",
  older: "Before today",
};

/** Which recency group a session's last read (seconds) falls in, by the local day. A session
 * without a time (an older server's) counts as recent: nothing says it is old. */
export function recencyOf(lastAt: number | undefined, nowMs: number): Recency {
  if (lastAt === undefined) return "hour";
  const ms = lastAt * 1000;
  if (nowMs - ms < 3_600_000) return "hour";
  const at = new Date(ms);
  const now = new Date(nowMs);
  const sameDay = at.getFullYear() === now.getFullYear() && at.getMonth() === now.getMonth() && at.getDate() === now.getDate();
  return sameDay ? "today" : "older";
}

/** Sessions by recency group, newest group first, each keeping the given order; empty groups left out. */
export function groupByRecency(
  sessions: readonly string[],
  lastAt: (session: string) => number | undefined,
  nowMs: number,
): { group: Recency; sessions: string[] }[] {
  const order: Recency[] = ["hour", "today", "older"];
  return order
    .map((group) => ({ group, sessions: sessions.filter((s) => recencyOf(lastAt(s), nowMs) === group) }))
    .filter((g) => g.sessions.length > 0);
}

/** Sessions whose last read is more than `hours` before `nowMs` (those without a time are
 * never "old"): what "Forget Sessions Older Than…" drops. */
export function sessionsOlderThan(views: ReadonlyMap<string, readonly StaleView[]>, nowMs: number, hours: number): string[] {
  const cutoff = nowMs / 1000 - hours * 3600;
  return Array.from(views.keys())
    .filter((s) => {
      const last = sessionTimes(views.get(s) ?? []).lastAt;
      return last !== undefined && last < cutoff;
    })
    .sort(naturalCompare);
}

/** When a session started and last read something (its views' `observedAt`, seconds). */
export function sessionTimes(views: readonly StaleView[]): { startedAt?: number; lastAt?: number } {
  const at = views.map((v) => v.observedAt).filter((t): t is number => typeof t === "number" && Number.isFinite(t));
  return at.length === 0 ? {} : { startedAt: Math.min(...at), lastAt: Math.max(...at) };
}

/** Where a view's lines are now: the span of its units' current ranges (null when none has one). */
export function currentRange(view: StaleView): LineRange | null {
  let first = Infinity;
  let last = -Infinity;
  for (const u of view.units) {
    if (!u.current) continue;
    first = Math.min(first, u.current.firstLine);
    last = Math.max(last, u.current.lastLine);
  }
  return Number.isFinite(first) ? { firstLine: first, lastLine: last } : null;
}

export interface LensSpec {
  /** 1-based line of the definition now. */
  line: number;
  session: string;
  viewId: string;
  unitId: string;
  title: string;
}

/**
 * CodeLenses for one file: one per stale view, so each names its agent and opens its own
 * diff. A view of a definition (a symbol unit that changed) gets its lens at the line the
 * definition starts on now, a session's several views of one definition share theirs; a
 * file-level or text view gets its lens at its first changed line ("… of this file"). Lenses
 * on one line sit side by side.
 */
export function lensesFor(folder: FolderState | undefined, relPath: string): LensSpec[] {
  if (!folder) return [];
  const out = new Map<string, LensSpec>();
  const sessions = Array.from(folder.views.keys()).sort(naturalCompare);
  for (const session of sessions) {
    for (const view of sortViews(folder.views.get(session) ?? [])) {
      if (view.path !== relPath) continue;
      for (const unit of view.units) {
        if (unit.status !== "changed") continue;
        if (unit.kind === "symbol") {
          if (!unit.current) continue;
          const key = `${session}\u0000def\u0000${unit.name ?? unit.unitId}`;
          const found = out.get(key);
          if (found) {
            found.line = Math.min(found.line, unit.current.firstLine);
            continue;
          }
          out.set(key, { line: unit.current.firstLine, session, viewId: view.viewId, unitId: unit.unitId, title: lensTitle(session) });
        } else {
          const first = changedLines(unit.diff)[0] ?? unit.current?.firstLine;
          const key = `${session}\u0000view\u0000${view.viewId}`;
          if (first === undefined || out.has(key)) continue;
          out.set(key, { line: first, session, viewId: view.viewId, unitId: unit.unitId, title: lensTitle(session, unit.kind === "file" ? "this file" : "these lines") });
        }
      }
    }
  }
  return Array.from(out.values()).sort((a, b) => a.line - b.line || naturalCompare(a.session, b.session) || naturalCompare(a.viewId, b.viewId));
}

/** Files with views that need attention (not fresh, not moved), with how many: the Explorer
 * decorates them. Keyed by root-relative path. */
export function staleFiles(folder: FolderState | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (!folder) return out;
  for (const views of folder.views.values()) {
    for (const v of views) {
      if (v.status === "fresh" || v.status === "moved") continue;
      out.set(v.path, (out.get(v.path) ?? 0) + 1);
    }
  }
  return out;
}

/** The root-relative path with `/` separators of an absolute path inside `root`, else undefined. */
export function relativePath(root: string, absolute: string): string | undefined {
  const norm = (p: string) => p.replace(/\\/g, "/").replace(/\/+$/, "");
  const r = norm(root);
  const a = norm(absolute);
  if (a === r || !a.startsWith(`${r}/`)) return undefined;
  return a.slice(r.length + 1);
}
