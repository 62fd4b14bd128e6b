// The gutter's lines: from unified diffs whose hunk numbers are file line numbers.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { changedByShort, changedLines, gutterHover, gutterMarks, lineHints, markRanges, stepTo } from "../src/gutterlines";
import { FILE_BADGE, fileBadgeTooltip } from "../src/labels";
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

describe("the changed range, its hover and the end of its first line", () => {
  it("joins consecutive lines with the same viewers into one range with one hover", () => {
    const seen = { seenBy: ["agent-1 (call_7)"], changedBy: ["a save from the editor"] };
    const ranges = markRanges([
      { line: 4, ...seen },
      { line: 5, ...seen },
      { line: 6, seenBy: ["agent-2 (call_8)"], changedBy: [] },
      { line: 9, ...seen },
    ]);
    assert.deepEqual(ranges.map((r) => [r.firstLine, r.lastLine]), [[4, 5], [6, 6], [9, 9]]);
    assert.equal(ranges[0].hover, "fresh-ls: An agent saw an older version of these 2 lines: agent-1 (call_7). Changed by a save from the editor.");
    assert.match(ranges[1].hover, /of this line: agent-2 \(call_8\)\.$/);
  });

  it("says on the first changed line of each stale view who saw it older and who changed it", () => {
    const saved = { ...CHANGED_METHOD, units: [{ ...CHANGED_METHOD.units[0], changedBy: "editor" }] };
    assert.deepEqual(lineHints(folderOf({ "agent-1": [saved, FRESH_INIT] }), "cart.py"), [
      { line: 9, text: "agent-1 saw an older version · changed by a save" },
    ]);
    // Two sessions whose views start changing on the same line share it.
    assert.deepEqual(lineHints(folderOf({ "agent-2": [CHANGED_FILE], "agent-1": [CHANGED_METHOD] }), "cart.py"), [
      { line: 9, text: "agent-1, agent-2 saw an older version · changed outside the editor" },
    ]);
    assert.deepEqual(lineHints(folderOf({ "agent-1": [FRESH_INIT, MOVED] }), "cart.py"), []);
    assert.equal(changedByShort("session:claude-code-session-id:0123456789abcdef"), "changed by claude-code 01234567…");
    assert.equal(changedByShort(null), undefined);
  });

  it("steps to the next and previous change, wrapping around", () => {
    const starts = [4, 9, 20];
    assert.equal(stepTo(starts, 0, 1), 3);
    assert.equal(stepTo(starts, 3, 1), 8);
    assert.equal(stepTo(starts, 19, 1), 3);
    assert.equal(stepTo(starts, 8, -1), 3);
    assert.equal(stepTo(starts, 3, -1), 19);
    assert.equal(stepTo([], 3, 1), undefined);
  });

  it("marks files with a letter of its own, explained", () => {
    assert.equal(FILE_BADGE.length, 1);
    assert.ok(!"MUADRCI!".includes(FILE_BADGE), "a letter git's decorations use");
    assert.match(fileBadgeTooltip(2), /^S: 2 agent views of this file stale \(fresh-ls\)/);
    assert.match(fileBadgeTooltip(1), /1 agent view of/);
  });
});
