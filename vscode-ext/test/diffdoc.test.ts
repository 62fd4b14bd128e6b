import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  budgetLine,
  diffTitle,
  OBSERVED_SCHEME,
  numberedView,
  observedTitle,
  parseViewDocUri,
  viewDocUri,
  observedUri,
  parseObservedUri,
  parseProjectionUri,
  PROJECTION_SCHEME,
  projectionText,
  RENDERED_RULE,
  projectionUri,
  spliceObserved,
  splitLines,
} from "../src/diffdoc";
import { currentRange } from "../src/model";
import { CART_AFTER, CART_BEFORE, CHANGED_FILE, CHANGED_METHOD, TOTAL_OBSERVED } from "./fixtures";

describe("observed-view URIs", () => {
  it("round-trip folder, session, view and path", () => {
    const ref = { folder: "file:///w s/ä", session: "agent 1&x=y", viewId: "call/7?", path: "src/cart.py" };
    const parts = observedUri(ref);
    assert.equal(parts.scheme, OBSERVED_SCHEME);
    assert.equal(parts.path, "/src/cart.py", "the path gives the tab its name and language");
    assert.deepEqual(parseObservedUri(parts), { ...ref, alone: false });
    assert.deepEqual(parseObservedUri(observedUri({ ...ref, alone: true })), { ...ref, alone: true });
  });

  it("refuses URIs that are not ours", () => {
    assert.throws(() => parseObservedUri({ path: "/x", query: "folder=a" }), /not a fresh-ls observed-view URI/);
  });

  it("names projection documents per session", () => {
    const parts = projectionUri({ folder: "file:///ws", session: "agent/1" });
    assert.equal(parts.scheme, PROJECTION_SCHEME);
    assert.equal(parts.path, "/projection-agent_1.txt");
    assert.deepEqual(parseProjectionUri(parts), { folder: "file:///ws", session: "agent/1" });
    assert.throws(() => parseProjectionUri({ query: "" }));
  });
});

describe("the diff's left side", () => {
  it("splits lines at LF, keeping endings and lone CRs", () => {
    assert.deepEqual(splitLines(""), []);
    assert.deepEqual(splitLines("a\r\nb\rc\nd"), ["a\r\n", "b\rc\n", "d"]);
  });

  it("is the current file with the view's current lines replaced by what the agent saw", () => {
    const left = spliceObserved(CART_AFTER, TOTAL_OBSERVED, currentRange(CHANGED_METHOD));
    assert.equal(left, CART_BEFORE);
  });

  it("is the observed text alone for a whole-file view or without a range", () => {
    assert.equal(spliceObserved(CART_AFTER, CART_BEFORE, currentRange(CHANGED_FILE)), CART_BEFORE);
    assert.equal(spliceObserved(CART_AFTER, TOTAL_OBSERVED, null), TOTAL_OBSERVED);
  });

  it("keeps the lines around a moved view in place", () => {
    const now = "# header\n# more\n" + CART_AFTER;
    const left = spliceObserved(now, TOTAL_OBSERVED, { firstLine: 10, lastLine: 12 });
    assert.equal(left, "# header\n# more\n" + CART_BEFORE);
  });

  it("clamps ranges past the end and handles a missing final newline", () => {
    assert.equal(spliceObserved("a\nb\n", "X\n", { firstLine: 2, lastLine: 99 }), "a\nX\n");
    assert.equal(spliceObserved("a\nb\nc", "X", { firstLine: 2, lastLine: 2 }), "a\nX\nc");
    assert.equal(spliceObserved("a\n", "X\n", { firstLine: 5, lastLine: 6 }), "a\nX\n");
    assert.equal(spliceObserved("", "X\n", { firstLine: 1, lastLine: 0 }), "X\n");
  });
});

describe("titles and texts", () => {
  it("titles the diff with the file, the lines and the session", () => {
    assert.equal(diffTitle("src/cart.py", { firstLine: 8, lastLine: 10 }, "agent-1"), "cart.py lines 8-10: seen by agent-1 ↔ on disk");
    assert.equal(observedTitle("cart.py", { firstLine: 1, lastLine: 0 }, "a"), "cart.py no lines as a saw it");
  });

  it("shows the rendered projection verbatim, and says so when it is empty", () => {
    const rendered = "[E-1] cart.py lines 1-1 (1 lines, 2 bytes)\nx\n";
    const plan = {
      planId: "p-1",
      markers: [{ viewId: "call_7", text: "[fresh-ls] call_7 showed cart.py lines 8-10; see [E-1]." }],
      omitted: [{ viewIds: ["call_2"], path: "big.py", reason: "over-budget", bytes: 9000 }],
      usedBytes: rendered.length,
      budgetBytes: 4096,
      rendered,
    };
    const text = projectionText("agent-1", plan);
    // After the rule, exactly `rendered`: what a harness appends.
    assert.equal(text.slice(text.indexOf(RENDERED_RULE) + RENDERED_RULE.length), rendered);
    assert.match(text, /^# fresh-ls projection for session agent-1: plan p-1, \d+ bytes of 4096 bytes used\./);
    assert.match(text, /#   call_7: \[fresh-ls\] call_7 showed cart\.py lines 8-10/);
    assert.match(text, /#   big\.py \(over-budget, 9000 bytes\) for call_2/);
    const empty = projectionText("agent-1", { ...plan, markers: [], omitted: [], rendered: "", usedBytes: 0 });
    assert.match(empty, /nothing to project/);
    assert.doesNotMatch(empty, /---- rendered/);
    assert.equal(budgetLine(412, 131072), "412 bytes of 131072 bytes");
  });
});

describe("the view document (what the agent saw, alone)", () => {
  it("is titled with whose view it is, with no extension a language could be guessed from", () => {
    const parts = viewDocUri({ folder: "file:///ws", session: "agent-1", viewId: "call_7", path: "web/price.ts", observed: { firstLine: 8, lastLine: 10 } });
    assert.equal(parts.scheme, "fresh-ls-view");
    assert.equal(parts.path, "/agent-1 saw price.ts lines 8-10");
    assert.deepEqual(parseViewDocUri(parts), { folder: "file:///ws", session: "agent-1", viewId: "call_7" });
    assert.throws(() => parseViewDocUri({ query: "x=1" }));
  });

  it("numbers each line with its line in the file", () => {
    const text = numberedView({ path: "a.ts", firstLine: 9, lastLine: 10, text: "x();\r\n}\n" }, "s", "v", "deleted");
    assert.equal(text, "# a.ts lines 9-10 as agent session s saw it (view v); now deleted. Read-only.\n 9 │ x();\n10 │ }\n");
    assert.match(numberedView({ path: "e", firstLine: 1, lastLine: 0, text: "" }, "s", "v"), /e no lines/);
  });
});
