// The settings module reads exactly what the manifest declares, with its defaults.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { DEFAULTS, KEYS, readSettings, SECTION, type Settings } from "../src/config";

const ROOT = path.resolve(__dirname, "..", "..");
const SRC = path.join(ROOT, "src");
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
const declared: Record<string, { default?: unknown }> = manifest.contributes.configuration.properties;

describe("settings", () => {
  it("reads every key the manifest declares, and no other", () => {
    assert.deepEqual(
      Object.keys(declared).sort(),
      KEYS.map((k) => `${SECTION}.${k}`).sort(),
    );
  });

  it("has the manifest's defaults", () => {
    for (const key of KEYS) {
      const wanted = declared[`${SECTION}.${key}`].default;
      assert.deepEqual(DEFAULTS[key], wanted ?? (key === "python" ? "" : null), key);
    }
  });

  it("falls back to the default for a value of the wrong type", () => {
    const raw: Record<string, unknown> = {
      python: 3,
      budgetBytes: 1.5,
      policy: "sometimes",
      serverArgs: ["--x", 4],
      refreshSeconds: "often",
      codeLens: "yes",
      gutter: "no",
      endOfLine: "no",
      fileBadge: 1,
      terminalProxy: "on",
      proxyUpstreamAnthropic: 5,
    };
    assert.deepEqual(readSettings((k) => raw[k]), DEFAULTS);
  });

  it("keeps well-typed values", () => {
    const raw: Settings = {
      python: "/opt/py/bin/python",
      budgetBytes: 4096,
      policy: "all",
      serverArgs: ["--log-level", "debug"],
      refreshSeconds: 0,
      codeLens: false,
      gutter: false,
      endOfLine: false,
      fileBadge: false,
      terminalProxy: true,
      proxyUpstreamAnthropic: "http://127.0.0.1:9",
      proxyUpstreamOpenai: "http://127.0.0.1:9/v1",
    };
    assert.deepEqual(readSettings((k) => raw[k]), raw);
  });

  it("is the only module that reads the configuration", () => {
    for (const file of fs.readdirSync(SRC)) {
      if (file === "settings.ts") continue;
      const text = fs.readFileSync(path.join(SRC, file), "utf8");
      assert.doesNotMatch(text, /getConfiguration\(/, `${file} reads settings; use settings.ts`);
      if (file !== "config.ts") {
        assert.doesNotMatch(text, /["']\.fresh-ls["']/, `${file} names the state dir; import STATE_DIR from config.ts`);
      }
    }
  });
});
