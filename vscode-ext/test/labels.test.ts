import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  changedByLabel,
  codeBlock,
  diffStats,
  diffSummary,
  escapeMarkdown,
  lensTitle,
  logLine,
  linesLabel,
  sessionDescription,
  STATUS_ICONS,
  statusIcon,
  unitDescription,
  unitLabel,
  unitName,
  unitTooltip,
  viewDescription,
  viewLabel,
  viewTooltip,
} from "../src/labels";
import { STATUS_ORDER } from "../src/protocol";
import { CHANGED_FILE, CHANGED_METHOD, DELETED, FRESH_INIT, MOVED } from "./fixtures";

describe("labels", () => {
  it("has an icon and colour for every status", () => {
    for (const s of STATUS_ORDER) {
      assert.ok(STATUS_ICONS[s].id, s);
      assert.ok(statusIcon(s).id, s);
    }
    assert.equal(new Set(STATUS_ORDER.map((s) => STATUS_ICONS[s].id)).size, STATUS_ORDER.length);
  });

  it("writes lines the contract's way", () => {
    assert.equal(linesLabel({ firstLine: 12, lastLine: 30 }), "lines 12-30");
    assert.equal(linesLabel({ firstLine: 3, lastLine: 3 }), "lines 3-3");
    assert.equal(linesLabel({ firstLine: 1, lastLine: 0 }), "no lines");
  });

  it("names units", () => {
    assert.equal(unitName(CHANGED_METHOD.units[0]), "method Cart.total");
    assert.equal(unitName(CHANGED_FILE.units[0]), "whole file");
    assert.equal(unitName({ kind: "text" }), "text");
    assert.equal(unitName({ kind: "symbol", name: "f" }), "f");
    assert.equal(unitLabel(CHANGED_METHOD.units[0]), "changed · method Cart.total");
  });

  it("describes views and units", () => {
    assert.equal(viewLabel(CHANGED_METHOD), "changed · call_7");
    assert.equal(viewDescription(CHANGED_METHOD), "cart.py lines 8-10");
    assert.equal(viewDescription(MOVED), "src/util.py lines 3-4 (edit result) · unsaved edits");
    assert.equal(unitDescription(CHANGED_METHOD.units[0], "cart.py"), "cart.py lines 8-10");
    assert.equal(unitDescription(MOVED.units[0], "src/util.py"), "src/util.py lines 3-4 → now lines 5-6");
    assert.equal(unitDescription(DELETED.units[0], "gone.py"), "gone.py lines 1-2");
    assert.equal(sessionDescription(1, 0), "1 view");
    assert.equal(sessionDescription(3, 2), "3 views · 2 stale");
  });

  it("says who changed the lines", () => {
    assert.equal(changedByLabel("self"), "this session's own write");
    assert.equal(changedByLabel("session:agent-2"), "agent session agent-2");
    assert.equal(changedByLabel("editor"), "a save from the editor");
    assert.match(changedByLabel("outside") ?? "", /no client reported/);
    assert.equal(changedByLabel(null), undefined);
    assert.equal(changedByLabel(undefined), undefined);
  });

  it("summarises diffs without counting headers", () => {
    const s = diffStats(CHANGED_METHOD.units[0].diff);
    assert.deepEqual(s, { added: 1, removed: 1, hunks: 1 });
    assert.equal(diffSummary(s), "+1 line −1 line in 1 hunk");
    assert.equal(diffSummary({ added: 3, removed: 0, hunks: 2 }), "+3 lines −0 lines in 2 hunks");
    assert.equal(diffSummary(diffStats(null)), "no line changes");
  });

  it("builds markdown tooltips with the diff in a fence that cannot be broken out of", () => {
    const t = viewTooltip(CHANGED_METHOD, "agent-1");
    assert.match(t, /^\*\*changed\*\* · view call\\_7 of session agent\\-1/);
    assert.match(t, /diff: \+1 line −1 line in 1 hunk/);
    assert.match(t, /```diff\n--- cart\.py lines 8-10 \(observed\)/);
    assert.match(t, /Click to compare/);
    const u = unitTooltip(CHANGED_METHOD.units[0], "cart.py");
    assert.match(u, /changed by a write no client reported/);
    assert.ok(!unitTooltip(FRESH_INIT.units[0], "cart.py").includes("```"));
    assert.match(viewTooltip(MOVED, "agent-2"), /unsaved edits/);

    const block = codeBlock("a ``` b ```` c", "diff");
    assert.ok(block.startsWith("`````diff\n"));
    assert.ok(block.endsWith("\n`````"));
    assert.equal(escapeMarkdown("a_b*[c]"), "a\\_b\\*\\[c\\]");
  });

  it("clips long diffs in tooltips", () => {
    const long = "--- a\n+++ b\n@@ -1,100 +1,100 @@\n" + Array.from({ length: 100 }, (_, i) => `-old ${i}\n+new ${i}`).join("\n") + "\n";
    const t = unitTooltip({ ...CHANGED_METHOD.units[0], diff: long }, "cart.py");
    assert.match(t, /… \d+ more lines/);
    assert.match(t, /\+100 lines −100 lines/);
  });

  it("titles lenses as the issue says", () => {
    assert.equal(lensTitle("agent-1"), "agent agent-1 saw an older version · Show diff");
  });
});

describe("output lines", () => {
  it("take the language client's style", () => {
    const at = new Date(2026, 11, 2, 5, 36, 7);
    assert.equal(logLine("ws: started", at), `[Info  - ${at.toLocaleTimeString()}] ws: started`);
    assert.match(logLine("x", at, "Error"), /^\[Error - /);
  });
});
