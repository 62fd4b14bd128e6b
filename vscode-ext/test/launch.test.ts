import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { debounce } from "../src/debounce";
import {
  CHECK_ARGS,
  checkOutput,
  DEFAULT_PYTHON,
  endpointClipboard,
  expandVariables,
  initializationOptions,
  interpreterCandidates,
  launchProblem,
  parseAddress,
  parseBundle,
  parseEndpoint,
  RESTART_SETTINGS,
  serverArgs,
  venvPythons,
} from "../src/launch";

const vars = { workspaceFolder: "/ws", home: "/home/me" };

const bundle = { libs: "/ext/bundled/libs", python: "3.11" };

describe("interpreter", () => {
  it("uses the setting alone when it is set: an override is not second-guessed", () => {
    const c = interpreterCandidates({ setting: " ${workspaceFolder}/py ", venvs: ["/ws/.venv/bin/python"], bundle }, vars);
    assert.deepEqual(c, [{ command: "/ws/py", source: "setting", env: { PYTHONSAFEPATH: "1" } }]);
  });

  it("tries a workspace venv, then the Python extension, then the bundled sidecar", () => {
    const c = interpreterCandidates({ venvs: ["/ws/.venv/bin/python"], fromPythonExtension: "/py/bin/python", bundle }, vars);
    assert.deepEqual(
      c.map((i) => [i.command, i.source]),
      [
        ["/ws/.venv/bin/python", "workspace venv"],
        ["/py/bin/python", "python extension"],
        ["python3.11", "bundled"],
        [DEFAULT_PYTHON, "bundled"],
      ],
    );
    // Only the bundled ones get PYTHONPATH; every one keeps the folder off sys.path.
    assert.equal(c[0].env.PYTHONPATH, undefined);
    assert.equal(c[2].env.PYTHONPATH, "/ext/bundled/libs");
    assert.ok(c.every((i) => i.env.PYTHONSAFEPATH === "1"));
    assert.equal(DEFAULT_PYTHON, "python3");
  });

  it("the same interpreter is tried once, and a build without a bundle falls back to python3", () => {
    const c = interpreterCandidates({ venvs: ["/ws/.venv/bin/python"], fromPythonExtension: "/ws/.venv/bin/python" }, vars);
    assert.deepEqual(c.map((i) => i.source), ["workspace venv", "bundled"]);
    assert.equal(c[1].command, "python3");
    assert.deepEqual(venvPythons("/ws"), ["/ws/.venv/bin/python", "/ws/venv/bin/python"]);
  });

  it("reads bundle.json", () => {
    assert.deepEqual(parseBundle('{"python": "3.11", "machine": "x86_64"}', "/l"), { libs: "/l", python: "3.11" });
    assert.equal(parseBundle('{"python": 3}', "/l"), undefined);
    assert.equal(parseBundle("nope", "/l"), undefined);
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
    assert.deepEqual(serverArgs("/ws"), ["-P", "-m", "fresh_ls", "serve", "--root", "/ws", "--stdio", "--listen"]);
    assert.deepEqual(serverArgs("/ws", ["--log-level", "INFO"]).slice(-2), ["--log-level", "INFO"]);
    assert.deepEqual(CHECK_ARGS.slice(0, 2), ["-P", "-c"]);
    assert.match(CHECK_ARGS[2], /import fresh_ls/);
  });

  it("accepts the bundle only in the CPython it was built for", () => {
    const bundled = { command: "python3", source: "bundled" as const, env: {} };
    assert.deepEqual(checkOutput(bundled, "0.1.0 3.11", bundle), { ok: true, version: "0.1.0" });
    assert.deepEqual(checkOutput(bundled, "0.1.0 3.12", bundle), { ok: false, failure: { code: "version", python: "3.12" } });
    const venv = { command: "/v/python", source: "workspace venv" as const, env: {} };
    assert.deepEqual(checkOutput(venv, "0.2.0 3.13", bundle), { ok: true, version: "0.2.0" });
  });

  it("a broken override names a command that works, never `pip install fresh-ls`", () => {
    const setting = { command: "/my py/python", source: "setting" as const, env: {} };
    for (const failure of [{ code: 1, stderr: "ModuleNotFoundError: No module named 'fresh_ls'" }, { code: "ENOENT" }]) {
      const p = launchProblem(setting, failure, bundle);
      assert.match(p.message, /freshLs\.python \(\/my py\/python\)/);
      assert.match(p.message, /“fresh-ls: Use Bundled Sidecar”/);
      assert.doesNotMatch(p.message, /pip install fresh-ls/);
      assert.deepEqual(p.actions, ["useBundled", "openSettings", "showOutput"]);
    }
    assert.match(launchProblem(setting, { code: "ENOENT" }).message, /was not found/);
    assert.match(launchProblem(setting, { code: 1, stderr: "SyntaxError: bad\n" }).message, /cannot import fresh_ls \(SyntaxError: bad\)/);
  });

  it("a bundle with no usable Python says which Python it needs", () => {
    const py3 = { command: "python3", source: "bundled" as const, env: {} };
    const missing = launchProblem(py3, { code: "ENOENT" }, bundle);
    assert.match(missing.message, /needs CPython 3\.11, but neither python3\.11 nor python3 is on PATH/);
    assert.match(missing.message, /“fresh-ls: Restart Server”/);
    assert.match(launchProblem(py3, { code: "version", python: "3.12" }, bundle).message, /python3 is Python 3\.12/);
    assert.doesNotMatch(missing.message, /pip install/);
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
    // a repository can ship .fresh-ls/endpoint.json: a remote host is never believed
    assert.equal(parseAddress("tcp:192.0.2.7:443"), undefined);
    assert.equal(parseAddress("tcp:evil.example:8123"), undefined);
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
