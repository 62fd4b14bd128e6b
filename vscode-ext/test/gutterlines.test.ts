// The gutter's lines: from unified diffs whose hunk numbers are file line numbers.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { changedLines, gutterHover, gutterMarks } from "../src/gutterlines";
import type { FolderState } from "../src/model";
import type { StaleView } from "../src/protocol";
import { CHANGED_FILE, CHANGED_METHOD, FRESH_INIT, MOVED } from "./fixtures";

const header = "--- a.py lines 1-9 (observed)\n+++ a.py lines 1-9 (current)\n";

function folderOf(views: Record<string, StaleView[]>): FolderState {
  return { key: "file:///ws", name: "ws", root: "/ws", state: "running", views: new Map(Object.entries(views)) };
}

describe("changed lines of a diff", () => {
  const table: [string, string, number[]][] = [
    ["a line rewritten in place", CHANGED_METHOD.units[0].diff as string, [9]],
    ["a rewrite inside a whole-file view's hunk", CHANGED_FILE.units[0].diff as string, [9]],
    ["two lines added", `${header}@@ -3,2 +3,4 @@\n a\n+b\n+c\n d\n`, [4, 5]],
    ["a line removed: marks the line that took its place", `${header}@@ -3,3 +3,2 @@\n a\n-b\n c\n`, [4]],
    ["lines removed at the end: the line after the last kept", `${header}@@ -8,2 +7,0 @@\n-x\n-y\n`, [8]],
    ["a line removed at the top", `${header}@@ -1,2 +1,1 @@\n-x\n y\n`, [1]],
    ["two hunks", `${header}@@ -2 +2 @@\n-a\n+A\n@@ -9 +9,2 @@\n z\n+w\n`, [2, 10]],
    ["no newline at the end", `${header}@@ -5 +5 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n`, [5]],
    ["nothing", "", []],
  ];
  for (const [what, diff, lines] of table) {
    it(what, () => assert.deepEqual(changedLines(diff), lines));
  }
  it("ignores a null diff (a moved or fresh unit)", () => assert.deepEqual(changedLines(null), []));
});

describe("gutter marks of a file", () => {
  it("marks changed units of every session, merged per line, and nothing of fresh or moved ones", () => {
    const marks = gutterMarks(folderOf({ "agent-2": [CHANGED_FILE, MOVED], "agent-1": [CHANGED_METHOD, FRESH_INIT] }), "cart.py");
    assert.deepEqual(marks, [
      { line: 9, seenBy: ["agent-1 (call_7)", "agent-2 (call_8)"], changedBy: ["a write no client reported (git, a formatter, another process)"] },
    ]);
    assert.match(gutterHover(marks[0]), /2 agent views saw an older version of this line: agent-1 \(call_7\), agent-2 \(call_8\)\. Changed by a write/);
  });

  it("marks nothing in other files or without a folder", () => {
    assert.deepEqual(gutterMarks(folderOf({ "agent-1": [CHANGED_METHOD] }), "other.py"), []);
    assert.deepEqual(gutterMarks(undefined, "cart.py"), []);
  });
});
