// The status bar says what the sidecar is doing, the stale count, and the terminal proxy.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { overallState, statusBarText, statusBarTooltip, type FolderSidecar } from "../src/statusbar";

const running: FolderSidecar = { name: "shop", state: "running", pid: 41 };

describe("status bar", () => {
  it("counts stale views while running", () => {
    assert.equal(statusBarText({ folders: [running], stale: 2, sessions: 1 }), "$(history) 2 stale");
    assert.equal(statusBarText({ folders: [running], stale: 0, sessions: 0 }), "$(pass) fresh-ls");
  });

  it("says what the sidecar is doing when it is not running", () => {
    const at = (f: Partial<FolderSidecar>) => statusBarText({ folders: [{ ...running, ...f }], stale: 5, sessions: 1 });
    assert.equal(at({ state: "starting", error: undefined }), "$(loading~spin) fresh-ls starting");
    assert.equal(at({ state: "starting", error: "restarting (try 2)" }), "$(loading~spin) fresh-ls restarting");
    assert.equal(at({ state: "failed", error: "gave up" }), "$(error) fresh-ls stopped");
    assert.equal(at({ state: "stopped" }), "$(circle-slash) fresh-ls");
    assert.equal(statusBarText({ folders: [], stale: 0, sessions: 0 }), "$(circle-slash) fresh-ls");
  });

  it("any running folder makes the whole running", () => {
    assert.equal(overallState([{ ...running, state: "failed" }, running]), "running");
    assert.equal(overallState([{ ...running, state: "failed" }, { ...running, state: "starting" }]), "starting");
  });

  it("names the pid, and whether it was attached to", () => {
    const own = statusBarTooltip({ folders: [running], stale: 1, sessions: 1 });
    assert.equal(
      own,
      "fresh-ls: 1 stale view across 1 agent session.\nSidecar running, pid 41 (started by the extension).\nClick to open the agent views panel.",
    );
    const attached = statusBarTooltip({ folders: [{ ...running, attached: true, pid: 7 }], stale: 0, sessions: 2 });
    assert.match(attached, /attached to pid 7 \(a server a harness started\)/);
    const two = statusBarTooltip({ folders: [running, { name: "docs", state: "failed", error: "no python" }], stale: 0, sessions: 0 });
    assert.match(two, /Sidecar shop: running, pid 41/);
    assert.match(two, /Sidecar docs: stopped: no python/);
  });

  it("says when new terminals go through the proxy", () => {
    const on = { folders: [running], stale: 1, sessions: 1, proxy: "Terminal proxy: on." };
    assert.equal(statusBarText(on), "$(history) 1 stale · $(radio-tower) proxy");
    assert.match(statusBarTooltip(on), /Terminal proxy: on\./);
    assert.doesNotMatch(statusBarTooltip({ ...on, proxy: undefined }), /proxy/);
  });
});
