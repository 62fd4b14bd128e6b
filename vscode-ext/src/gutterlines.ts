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
export function gutterHover(mark: GutterMark): string {
  const agents = mark.seenBy.length === 1 ? "An agent" : `${mark.seenBy.length} agent views`;
  let text = `fresh-ls: ${agents} saw an older version of this line: ${mark.seenBy.join(", ")}.`;
  if (mark.changedBy.length > 0) text += ` Changed by ${mark.changedBy.join("; ")}.`;
  return text;
}
