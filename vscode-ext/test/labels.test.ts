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
  readAgo,
  sessionLabel,
  sessionRowLabel,
  agentName,
  clockLabel,
  viewDescription,
  viewLabel,
  viewTooltip,
} from "../src/labels";
import { STATUS_ORDER } from "../src/protocol";
import { CHANGED_FILE, CHANGED_METHOD, DELETED, FRESH_INIT, MOVED } from "./fixtures";

describe("session rows", () => {
  const now = new Date(2026, 11, 4, 15, 30).getTime();
  it("name the agent and when it started, never the opaque id", () => {
    const started = new Date(2026, 11, 4, 14, 5).getTime() / 1000;
    assert.equal(sessionRowLabel("claude-code-session-id:83eea4f5-0d1e-4b7a-9c1f-2a3b4c5d6e7f", started, now), "claude-code · started 14:05");
    assert.equal(sessionRowLabel("agent-1", started, now), "agent-1 · started 14:05");
    assert.equal(sessionRowLabel("agent-1", undefined, now), "agent-1");
    assert.equal(agentName("x".repeat(60)).length, 40);
  });
  it("give the day for a start before today", () => {
    assert.equal(clockLabel(new Date(2026, 11, 3, 9, 7).getTime(), now), "Dec 3, 09:07");
    assert.equal(clockLabel(new Date(2026, 11, 4, 0, 0).getTime(), now), "00:00");
  });
});

describe("session labels", () => {
  const table: [string, string][] = [
    ["agent-1", "agent-1"],
    ["claude-code-session-id:3f2a1b9c-5d6e-4f70-8a9b-0c1d2e3f4a5b", "claude-code 3f2a1b9c…"],
    ["session-id:abc", "session abc"],
    ["conversation:0123456789abcdef", "conversation 01234567…"],
    ["not-a-kind:0123456789abcdef0123", "not-a-kind:0123456789abcdef0123"],
    ["x".repeat(41), `${"x".repeat(39)}…`],
  ];
  for (const [name, label] of table) {
    it(`${name} → ${label}`, () => assert.equal(sessionLabel(name), label));
  }
  it("names sessions by their labels in the CodeLens", () => {
    assert.equal(lensTitle(["claude-code-session-id:3f2a1b9c-5d6e", "agent-1"]), "claude-code 3f2a1b9c…, agent-1 saw an older version · Show diff");
    assert.equal(lensTitle("agent-2", "this file"), "agent-2 saw an older version of this file · Show diff");
  });
});

describe("read N minutes ago", () => {
  const at = 1_700_000_000;
  const table: [number, string][] = [
    [0, "read just now"],
    [59, "read just now"],
    [-30, "read just now"], // the server's clock a little ahead of ours
    [60, "read 1 minute ago"],
    [5 * 60 + 59, "read 5 minutes ago"],
    [3600, "read 1 hour ago"],
    [5 * 3600, "read 5 hours ago"],
    [86400 * 3, "read 3 days ago"],
  ];
  for (const [seconds, words] of table) {
    it(`${seconds} s → ${words}`, () => assert.equal(readAgo(at, (at + seconds) * 1000), words));
  }
  it("says nothing without a time", () => assert.equal(readAgo(undefined, 0), undefined));
});

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
    assert.equal(unitLabel(CHANGED_METHOD.units[0]), "method Cart.total");
  });

  it("describes views and units", () => {
    // file:lines first (what fits a default-width sidebar), status and age after; no id.
    assert.equal(viewLabel(CHANGED_METHOD), "cart.py:8-10");
    assert.equal(viewLabel({ path: "a.py", observed: { firstLine: 4, lastLine: 4 } }), "a.py:4");
    assert.equal(viewLabel({ path: "empty.txt", observed: { firstLine: 1, lastLine: 0 } }), "empty.txt:empty");
    assert.equal(viewDescription(CHANGED_METHOD), "changed");
    assert.equal(viewDescription(MOVED), "moved · edit result · unsaved edits");
    const read = { ...CHANGED_METHOD, observedAt: 1_000_000 };
    assert.equal(viewDescription(read, { nowMs: 1_000_000_000 + 5 * 60_000 }), "changed · read 5 minutes ago");
    assert.equal(
      viewDescription(read, { nowMs: 1_000_000_000, context: "session", session: "agent-1" }),
      "changed · agent-1 · read just now",
    );
    // An older server sends no observedAt: nothing is said.
    assert.equal(viewDescription(CHANGED_METHOD, { nowMs: 1 }), "changed");
    assert.equal(unitDescription(CHANGED_METHOD.units[0], "cart.py"), "changed · cart.py lines 8-10");
    assert.equal(unitDescription(MOVED.units[0], "src/util.py"), "moved · src/util.py lines 3-4 → now lines 5-6");
    assert.equal(unitDescription(DELETED.units[0], "gone.py"), "deleted · gone.py lines 1-2");
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
    assert.equal(lensTitle("agent-1"), "agent-1 saw an older version · Show diff");
  });
});

describe("output lines", () => {
  it("take the language client's style", () => {
    const at = new Date(2026, 11, 2, 5, 36, 7);
    assert.equal(logLine("ws: started", at), `[Info  - ${at.toLocaleTimeString()}] ws: started`);
    assert.match(logLine("x", at, "Error"), /^\[Error - /);
  });
});
