// The terminal proxy's ports: chosen once, kept, reused; moved only when in use.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  choosePorts,
  parsePortsRecord,
  portArgs,
  recordOf,
  relaunchMessage,
  sameRecord,
  staleTerminals,
  urlPort,
} from "../src/proxyports";

const SECRET = "AbCdEfGhIjKlMnOpQrStUvWx";
const kept = { anthropicPort: 41001, openaiPort: 41002, secret: SECRET };

describe("terminal proxy ports", () => {
  it("picks free ports and a new secret the first time", () => {
    const chosen = choosePorts(undefined, () => "new-secret-0123456789");
    assert.deepEqual(chosen, { anthropicPort: 0, openaiPort: 0, secret: "new-secret-0123456789", reused: false });
    assert.deepEqual(portArgs(chosen), ["--anthropic-port", "0", "--openai-port", "0"]);
  });

  it("reuses the kept ports and secret, and asks for no new secret", () => {
    const chosen = choosePorts(kept, () => assert.fail("a new secret was made"));
    assert.deepEqual(chosen, { ...kept, reused: true });
    assert.deepEqual(portArgs(chosen), ["--anthropic-port", "41001", "--openai-port", "41002"]);
  });

  it("moves only the ports when the kept ones are in use", () => {
    assert.deepEqual(choosePorts(kept, () => "x", true), { anthropicPort: 0, openaiPort: 0, secret: SECRET, reused: false });
  });

  it("reads back only a whole, valid record", () => {
    assert.deepEqual(parsePortsRecord(JSON.stringify(kept)), kept);
    for (const bad of [
      undefined,
      "",
      "{",
      "[]",
      JSON.stringify({ ...kept, anthropicPort: 0 }),
      JSON.stringify({ ...kept, openaiPort: 70000 }),
      JSON.stringify({ ...kept, openaiPort: 41001 }),
      JSON.stringify({ ...kept, secret: "short" }),
      JSON.stringify({ ...kept, secret: "has a space in it, 0123456" }),
    ]) {
      assert.equal(parsePortsRecord(bad), undefined, String(bad));
    }
  });

  it("records the ports the proxies bound", () => {
    const urls = { anthropic: `http://127.0.0.1:41001/fresh-${SECRET}`, openai: `http://127.0.0.1:41002/fresh-${SECRET}` };
    assert.equal(urlPort(urls.anthropic), 41001);
    assert.equal(urlPort("http://example.com:1/x"), undefined);
    const record = recordOf(urls, SECRET);
    assert.deepEqual(record, kept);
    assert.ok(sameRecord(record, kept));
    assert.ok(!sameRecord(record, { ...kept, openaiPort: 41003 }));
    assert.ok(!sameRecord(record, undefined));
  });

  it("names the terminals that hold an old base URL, not those never routed", () => {
    const now = `http://127.0.0.1:42001/fresh-${SECRET}`;
    const old = `http://127.0.0.1:41001/fresh-${SECRET}`;
    const terminals = [
      { name: "bash", anthropicUrl: old },
      { name: "claude", anthropicUrl: now },
      { name: "zsh", anthropicUrl: undefined },
      { name: "bash (2)", anthropicUrl: old },
    ];
    assert.deepEqual(staleTerminals(terminals, now).map((t) => t.name), ["bash", "bash (2)"]);
    assert.match(relaunchMessage("shop", ["bash", "bash (2)"]), /Terminals “bash”, “bash \(2\)” still point at the old ones/);
    assert.match(relaunchMessage("shop", ["bash"]), /for shop .*Terminal “bash” still points/);
  });
});
