// The pure modules must never import `vscode`: node's test runner loads them directly.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { ClientMethods, ServerMethods, STATUS_ORDER, worse } from "../src/protocol";

const SRC = path.resolve(__dirname, "..", "..", "src");
const PURE = [
  "protocol.ts",
  "protocol.generated.ts",
  "config.ts",
  "labels.ts",
  "model.ts",
  "diffdoc.ts",
  "launch.ts",
  "debounce.ts",
  "recovery.ts",
  "dirty.ts",
  "gutterlines.ts",
  "terminalenv.ts",
  "proxyports.ts",
  "onboarding.ts",
];

describe("pure modules", () => {
  for (const file of PURE) {
    it(`${file} does not import vscode`, () => {
      const text = fs.readFileSync(path.join(SRC, file), "utf8");
      assert.doesNotMatch(text, /from\s+["']vscode["']|require\(["']vscode["']\)/);
      for (const m of text.matchAll(/from\s+["']\.\/([\w-]+)["']/g)) {
        assert.ok(PURE.includes(`${m[1]}.ts`), `${file} imports ./${m[1]}, which is not a pure module`);
      }
    });
  }

  it("spells each method once", () => {
    const names = [...Object.values(ClientMethods), ...Object.values(ServerMethods)];
    assert.equal(new Set(names).size, names.length);
    for (const n of names) assert.match(n, /^fresh\/[a-zA-Z]+$/);
    for (const file of fs.readdirSync(SRC)) {
      if (file === "protocol.ts" || file === "protocol.generated.ts") continue;
      const text = fs.readFileSync(path.join(SRC, file), "utf8");
      assert.doesNotMatch(text, /["']fresh\/[a-zA-Z]+["']/, `${file} spells a method name; import it from protocol.ts`);
    }
  });

  it("orders statuses worst last", () => {
    assert.deepEqual(STATUS_ORDER, ["fresh", "moved", "changed", "ambiguous", "deleted", "unreadable"]);
    assert.equal(worse("moved", "changed"), "changed");
    assert.equal(worse("deleted", "ambiguous"), "deleted");
  });
});
