import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { debounce } from "../src/debounce";
import {
  CHECK_ARGS,
  chooseInterpreter,
  DEFAULT_PYTHON,
  endpointClipboard,
  expandVariables,
  initializationOptions,
  launchProblem,
  parseAddress,
  parseEndpoint,
  RESTART_SETTINGS,
  serverArgs,
} from "../src/launch";

const vars = { workspaceFolder: "/ws", home: "/home/me" };

describe("interpreter", () => {
  it("prefers the setting, then the Python extension, then python3", () => {
    assert.deepEqual(chooseInterpreter("/opt/py/bin/python", "/venv/bin/python", vars), {
      command: "/opt/py/bin/python",
      source: "setting",
    });
    assert.deepEqual(chooseInterpreter("  ", "/venv/bin/python", vars), { command: "/venv/bin/python", source: "python extension" });
    assert.deepEqual(chooseInterpreter(undefined, undefined, vars), { command: DEFAULT_PYTHON, source: "default" });
    assert.equal(DEFAULT_PYTHON, "python3");
  });

  it("expands ${workspaceFolder}, ${userHome} and ~", () => {
    assert.equal(expandVariables("${workspaceFolder}/.venv/bin/python", vars), "/ws/.venv/bin/python");
    assert.equal(expandVariables("~/py/bin/python", vars), "/home/me/py/bin/python");
    assert.equal(expandVariables("${userHome}/x", vars), "/home/me/x");
    assert.equal(expandVariables("a~b", vars), "a~b");
  });
});

describe("launch", () => {
  it("serves the editor on stdio and harnesses on the endpoint", () => {
    assert.deepEqual(serverArgs("/ws"), ["-m", "fresh_ls", "serve", "--root", "/ws", "--stdio", "--listen"]);
    assert.deepEqual(serverArgs("/ws", ["--log-level", "INFO"]).slice(-2), ["--log-level", "INFO"]);
    assert.equal(CHECK_ARGS[0], "-c");
    assert.match(CHECK_ARGS[1], /import fresh_ls/);
  });

  it("explains a missing fresh_ls with the command that fixes it", () => {
    const p = launchProblem(
      { command: "/venv/bin/python", source: "python extension" },
      { code: 1, stderr: "Traceback...\nModuleNotFoundError: No module named 'fresh_ls'\n" },
    );
    assert.equal(p.fix, "/venv/bin/python -m pip install fresh-ls");
    assert.match(p.message, /not installed for the Python extension's active interpreter \(\/venv\/bin\/python\)/);
    assert.match(p.message, /freshLs\.python/);

    const spaced = launchProblem({ command: "/my py/python", source: "setting" }, { code: 1, stderr: "No module named fresh_ls" });
    assert.equal(spaced.fix, "'/my py/python' -m pip install fresh-ls");
  });

  it("explains an interpreter that is not there, and other failures", () => {
    const p = launchProblem({ command: "python3", source: "default" }, { code: "ENOENT" });
    assert.match(p.message, /default interpreter \(python3\) was not found/);
    assert.equal(p.fix, undefined);
    const q = launchProblem({ command: "py", source: "setting" }, { code: 1, stderr: "SyntaxError: bad\n" });
    assert.match(q.message, /cannot import fresh_ls: SyntaxError: bad/);
  });

  it("sends the budget and policy settings (and the token) as initializationOptions", () => {
    assert.deepEqual(initializationOptions({ budgetBytes: 4096, policy: "all" }), { budgetBytes: 4096, policy: "all" });
    assert.deepEqual(initializationOptions({ budgetBytes: null, policy: "stale" }, "tok"), { token: "tok", policy: "stale" });
    assert.deepEqual(initializationOptions({ budgetBytes: -1, policy: "bogus" }), {});
    assert.deepEqual(initializationOptions({ budgetBytes: 1.5 }), {});
  });

  it("restarts on the settings that shape the server", () => {
    for (const s of ["freshLs.python", "freshLs.budgetBytes", "freshLs.policy"]) assert.ok(RESTART_SETTINGS.includes(s), s);
  });
});

describe("endpoint", () => {
  it("parses endpoint.json and its addresses", () => {
    assert.deepEqual(parseEndpoint('{"address": "unix:/ws/.fresh-ls/s.sock", "token": "t", "pid": 42}'), {
      address: "unix:/ws/.fresh-ls/s.sock",
      token: "t",
      pid: 42,
    });
    assert.equal(parseEndpoint('{"address": "unix:/x", "token": "t"}'), undefined);
    assert.equal(parseEndpoint("not json"), undefined);
    assert.equal(parseEndpoint('{"address": "ws://x", "token": "t", "pid": 1}'), undefined);
    assert.deepEqual(parseAddress("tcp:127.0.0.1:8123"), { kind: "tcp", host: "127.0.0.1", port: 8123 });
    assert.deepEqual(parseAddress("unix:/a/b"), { kind: "unix", path: "/a/b" });
    assert.equal(parseAddress("tcp:127.0.0.1:0"), undefined);
    assert.equal(parseAddress("tcp:nope"), undefined);
    assert.equal(parseAddress("unix:"), undefined);
  });

  it("copies what a harness needs", () => {
    const text = endpointClipboard({ address: "unix:/s", token: "t", pid: 1 }, "/ws/.fresh-ls/endpoint.json", "/ws");
    assert.deepEqual(JSON.parse(text), {
      address: "unix:/s",
      token: "t",
      pid: 1,
      endpointFile: "/ws/.fresh-ls/endpoint.json",
      root: "/ws",
    });
  });
});

describe("debounce", () => {
  it("runs once, with the last arguments, after the calls stop", async () => {
    const calls: number[] = [];
    const d = debounce((n: number) => calls.push(n), 20);
    d(1);
    d(2);
    d(3);
    assert.equal(d.pending(), true);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(calls, [3]);
    assert.equal(d.pending(), false);
  });

  it("cancels and flushes", async () => {
    const calls: number[] = [];
    const d = debounce((n: number) => calls.push(n), 20);
    d(1);
    d.cancel();
    d(2);
    d.flush();
    assert.deepEqual(calls, [2]);
    d.flush();
    await new Promise((r) => setTimeout(r, 40));
    assert.deepEqual(calls, [2]);
  });
});
