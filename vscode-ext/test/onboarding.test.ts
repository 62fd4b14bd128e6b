// The ways in: the first-run question and the hooks' install command.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { installHooksProcess, shouldAskTerminalProxy } from "../src/onboarding";

describe("onboarding", () => {
  it("asks once, and never someone who set the setting", () => {
    assert.equal(shouldAskTerminalProxy(false, undefined), true);
    assert.equal(shouldAskTerminalProxy(true, undefined), false);
    assert.equal(shouldAskTerminalProxy(false, false), false);
    assert.equal(shouldAskTerminalProxy(false, true), false);
  });

  it("installs with an interpreter that has fresh_ls through the CLI", () => {
    const run = installHooksProcess({ command: "/w/.venv/bin/python", source: "workspace venv", env: { PYTHONSAFEPATH: "1" } }, "/w");
    assert.deepEqual(run.args, ["-P", "-m", "fresh_ls", "install", "claude-code", "--root", "/w"]);
  });

  it("gives the bundled sidecar's hook its environment", () => {
    const env = { PYTHONPATH: "/ext/bundled/libs", PYTHONSAFEPATH: "1" };
    const run = installHooksProcess({ command: "python3.11", source: "bundled", env }, "/w");
    assert.equal(run.command, "python3.11");
    assert.deepEqual(run.args.slice(0, 2), ["-P", "-c"]);
    assert.equal(run.args[3], "/w");
    assert.deepEqual(JSON.parse(run.args[4]), ["env", "PYTHONPATH=/ext/bundled/libs", "PYTHONSAFEPATH=1", "python3.11", "-P", "-m", "fresh_ls"]);
    assert.deepEqual(run.env, env);
  });
});
