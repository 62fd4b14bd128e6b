// Which lines of an open file the gutter marks: the lines an agent saw in an older version.
// Pure: no `vscode` import (gutter.ts paints them).

import { changedByLabel, sessionLabel } from "./labels";
import type { FolderState } from "./model";
import { naturalCompare, sortViews } from "./model";

export interface GutterMark {
  /** 1-based line of the file as it is now. */
  line: number;
  /** Who saw the older version, for the hover: `agent-1 (call_7)`. */
  seenBy: string[];
  /** Who changed it, in words (from `changedBy`), when known. */
  changedBy: string[];
}

/**
 * The current-file lines of a unit's unified diff that are new or rewritten (`+` lines),
 * and, for lines only removed, the line where they were (the one after the removal, or the
 * last line when they were at the end). Hunk numbers are file line numbers (the contract).
 */
export function changedLines(diff: string | null | undefined): number[] {
  if (!diff) return [];
  const out = new Set<number>();
  let line = 0;
  let inHunk = false;
  let removedAt: number | undefined;
  // A removal followed by added lines is a rewrite, marked by those (a `+` line clears it);
  // a bare one marks where it was.
  const flushRemoval = () => {
    if (removedAt !== undefined) out.add(Math.max(1, removedAt));
    removedAt = undefined;
  };
  for (const text of diff.split("\n")) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(text);
    if (hunk) {
      flushRemoval();
      line = Number(hunk[1]);
      // `+N,0`: nothing is left; the hunk's lines were after line N.
      if (hunk[2] === "0") line += 1;
      inHunk = true;
      continue;
    }
    if (!inHunk || text.startsWith("--- ") || text.startsWith("+++ ")) continue;
    if (text.startsWith("+")) {
      removedAt = undefined;
      out.add(line);
      line += 1;
    } else if (text.startsWith("-")) {
      if (removedAt === undefined) removedAt = line;
    } else if (text.startsWith(" ")) {
      flushRemoval();
      line += 1;
    } else if (text.startsWith("\\")) {
      // "\ No newline at end of file"
    } else {
      flushRemoval();
      inHunk = false;
    }
  }
  flushRemoval();
  return Array.from(out).sort((a, b) => a - b);
}

/** Gutter marks of one file (by root-relative path): every `changed` unit of every session,
 * merged per line. */
export function gutterMarks(folder: FolderState | undefined, relPath: string): GutterMark[] {
  if (!folder) return [];
  const byLine = new Map<number, GutterMark>();
  for (const session of Array.from(folder.views.keys()).sort(naturalCompare)) {
    for (const view of sortViews(folder.views.get(session) ?? [])) {
      if (view.path !== relPath) continue;
      for (const unit of view.units) {
        if (unit.status !== "changed") continue;
        for (const line of changedLines(unit.diff)) {
          const mark = byLine.get(line) ?? { line, seenBy: [], changedBy: [] };
          const who = `${sessionLabel(session)} (${view.viewId})`;
          if (!mark.seenBy.includes(who)) mark.seenBy.push(who);
          const by = changedByLabel(unit.changedBy);
          if (by && !mark.changedBy.includes(by)) mark.changedBy.push(by);
          byLine.set(line, mark);
        }
      }
    }
  }
  return Array.from(byLine.values()).sort((a, b) => a.line - b.line);
}

/** The hover of a marked line (markdown-free text). */
export function gutterHover(mark: Pick<GutterMark, "seenBy" | "changedBy">, lines = 1): string {
  const agents = mark.seenBy.length === 1 ? "An agent" : `${mark.seenBy.length} agent views`;
  const what = lines === 1 ? "this line" : `these ${lines} lines`;
  let text = `fresh-ls: ${agents} saw an older version of ${what}: ${mark.seenBy.join(", ")}.`;
  if (mark.changedBy.length > 0) text += ` Changed by ${mark.changedBy.join("; ")}.`;
  return text;
}

/** A run of marked lines with the same viewers and authors: one decoration, so its hover
 * shows anywhere over the whole changed range. */
export interface MarkRange {
  firstLine: number;
  lastLine: number;
  hover: string;
  seenBy: string[];
  changedBy: string[];
}

export function markRanges(marks: readonly GutterMark[]): MarkRange[] {
  const out: MarkRange[] = [];
  const key = (m: Pick<GutterMark, "seenBy" | "changedBy">) => JSON.stringify([m.seenBy, m.changedBy]);
  for (const mark of marks) {
    const last = out[out.length - 1];
    if (last && last.lastLine === mark.line - 1 && key(last) === key(mark)) {
      last.lastLine = mark.line;
    } else {
      out.push({ firstLine: mark.line, lastLine: mark.line, hover: "", seenBy: mark.seenBy, changedBy: mark.changedBy });
    }
  }
  for (const r of out) r.hover = gutterHover(r, r.lastLine - r.firstLine + 1);
  return out;
}

/** Who changed the lines, as the end of a line says it: short. */
export function changedByShort(changedBy: string | null | undefined): string | undefined {
  if (changedBy === undefined || changedBy === null) return undefined;
  if (changedBy === "self") return "changed by its own write";
  if (changedBy === "editor") return "changed by a save";
  if (changedBy === "outside") return "changed outside the editor";
  if (changedBy.startsWith("session:")) return `changed by ${sessionLabel(changedBy.slice("session:".length))}`;
  return `changed by ${changedBy}`;
}

export interface LineHint {
  /** 1-based line of the file now: the first changed line of a stale view. */
  line: number;
  text: string;
}

/** The end-of-line text of a file: on the first changed line of each stale view, who saw an
 * older version and who changed it (`agent-1 saw an older version · changed by a save`);
 * views whose first changed line is the same share it. */
export function lineHints(folder: FolderState | undefined, relPath: string): LineHint[] {
  if (!folder) return [];
  const byLine = new Map<number, { who: string[]; by: string[] }>();
  for (const session of Array.from(folder.views.keys()).sort(naturalCompare)) {
    for (const view of sortViews(folder.views.get(session) ?? [])) {
      if (view.path !== relPath) continue;
      const changed = view.units.filter((u) => u.status === "changed");
      const lines = changed.flatMap((u) => changedLines(u.diff));
      if (lines.length === 0) continue;
      const first = Math.min(...lines);
      const hint = byLine.get(first) ?? { who: [], by: [] };
      const who = sessionLabel(session);
      if (!hint.who.includes(who)) hint.who.push(who);
      for (const u of changed) {
        const by = changedByShort(u.changedBy);
        if (by && !hint.by.includes(by)) hint.by.push(by);
      }
      byLine.set(first, hint);
    }
  }
  return Array.from(byLine, ([line, h]) => ({
    line,
    text: [`${h.who.join(", ")} saw an older version`, ...h.by].join(" · "),
  })).sort((a, b) => a.line - b.line);
}

/** The 0-based line to go to from `current` among marked `lines` (1-based, sorted):
 * the next one after it (or the previous one before it), wrapping around the file. */
export function stepTo(lines: readonly number[], current: number, direction: 1 | -1): number | undefined {
  const zero = lines.map((l) => l - 1);
  if (zero.length === 0) return undefined;
  if (direction === 1) return zero.find((l) => l > current) ?? zero[0];
  return [...zero].reverse().find((l) => l < current) ?? zero[zero.length - 1];
}
