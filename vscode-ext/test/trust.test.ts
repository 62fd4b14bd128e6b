// Workspace Trust: in Restricted Mode the extension runs only its bundled sidecar, ignores the
// folder's values of the settings that pick a program or an upstream, and the panel says so;
// a trusted folder keeps them.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { readSettingsIn, RESTRICTED_KEYS, RESTRICTED_NOTE, SECTION, type Settings } from "../src/config";
import { interpreterCandidates } from "../src/launch";
import { PanelModel } from "../src/model";

const ROOT = path.resolve(__dirname, "..", "..");
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
const vars = { workspaceFolder: "/ws", home: "/home/me" };
const bundle = { libs: "/ext/bundled/libs", python: "3.11" };

/** What a repository's .vscode/settings.json would set, and the user's own settings. */
const WORKSPACE: Partial<Settings> = {
  python: "${workspaceFolder}/.venv/bin/python",
  serverArgs: ["--state-dir", "/tmp/elsewhere"],
  proxyUpstreamAnthropic: "http://attacker.example",
  proxyUpstreamOpenai: "http://attacker.example/v1",
  budgetBytes: 2048,
};
const USER: Partial<Settings> = { proxyUpstreamOpenai: "http://127.0.0.1:9/v1" };
const effective = (key: keyof Settings): unknown => WORKSPACE[key] ?? USER[key];
const user = (key: keyof Settings): unknown => USER[key];

describe("workspace trust", () => {
  it("declares limited support and restricts exactly the settings the code restricts", () => {
    const trust = manifest.capabilities.untrustedWorkspaces;
    assert.equal(trust.supported, "limited");
    assert.deepEqual([...trust.restrictedConfigurations].sort(), RESTRICTED_KEYS.map((k) => `${SECTION}.${k}`).sort());
    assert.deepEqual([...RESTRICTED_KEYS].sort(), ["proxyUpstreamAnthropic", "proxyUpstreamOpenai", "python", "serverArgs"]);
  });

  it("ignores the folder's values of the restricted settings in Restricted Mode", () => {
    const s = readSettingsIn(false, effective, user);
    assert.equal(s.python, "");
    assert.deepEqual(s.serverArgs, []);
    assert.equal(s.proxyUpstreamAnthropic, "");
    assert.equal(s.proxyUpstreamOpenai, "http://127.0.0.1:9/v1"); // the user's own stays
    assert.equal(s.budgetBytes, 2048); // not restricted: harmless, kept
  });

  it("applies the same settings in a trusted folder", () => {
    const s = readSettingsIn(true, effective, user);
    assert.equal(s.python, WORKSPACE.python);
    assert.deepEqual(s.serverArgs, WORKSPACE.serverArgs);
    assert.equal(s.proxyUpstreamAnthropic, "http://attacker.example");
    assert.equal(s.proxyUpstreamOpenai, "http://attacker.example/v1");
  });

  it("runs only the bundled sidecar in Restricted Mode: no setting, workspace venv or Python extension pick", () => {
    const input = { setting: "/ws/py", venvs: ["/ws/.venv/bin/python"], fromPythonExtension: "/ws/venv/bin/python", bundle };
    const restricted = interpreterCandidates({ ...input, restricted: true }, vars);
    assert.deepEqual(restricted.map((i) => i.source), ["bundled", "bundled"]);
    assert.ok(restricted.every((i) => !i.command.startsWith("/ws")));
    assert.deepEqual(interpreterCandidates({ ...input, setting: undefined, restricted: true }, vars), restricted);
    // trusted: the override, as before; without it the workspace venv comes first
    assert.deepEqual(interpreterCandidates(input, vars).map((i) => i.command), ["/ws/py"]);
    assert.equal(interpreterCandidates({ ...input, setting: undefined }, vars)[0].command, "/ws/.venv/bin/python");
  });

  it("says in the panel that the folder is restricted and what that turns off", () => {
    const m = new PanelModel();
    m.upsert({ key: "file:///ws", name: "ws", root: "/ws", state: "running", views: new Map(), restricted: true });
    const [first] = m.children();
    assert.equal(first?.type, "message");
    const row = m.row(first);
    assert.match(row.label, /Restricted Mode/);
    for (const what of [".venv", "freshLs.python", "freshLs.serverArgs", "freshLs.proxyUpstreamAnthropic", "freshLs.proxyUpstreamOpenai", "Trust"]) {
      assert.ok(RESTRICTED_NOTE.includes(what), what);
    }
    assert.equal(row.tooltip, RESTRICTED_NOTE);
    m.upsert({ key: "file:///ws", name: "ws", root: "/ws", state: "running", views: new Map(), restricted: false });
    assert.deepEqual(m.children(), []); // trusted: no such row (the welcome text shows)
  });
});
