// The terminal proxy's process arguments, its first line, and the variables it sets.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseProxiesLine, proxiesArgs, proxyTooltipLine, terminalVariables } from "../src/terminalenv";

describe("terminal proxy", () => {
  it("runs fresh_ls proxies on the root, stopping with its stdin", () => {
    assert.deepEqual(proxiesArgs("/w"), ["-P", "-m", "fresh_ls", "proxies", "--root", "/w", "--exit-with-stdin"]);
    assert.deepEqual(proxiesArgs("/w", { anthropic: " http://127.0.0.1:9 ", openai: "" }).slice(-2), [
      "--anthropic-upstream",
      "http://127.0.0.1:9",
    ]);
  });

  it("reads the first line, and only a loopback one", () => {
    const line = JSON.stringify({ anthropic: "http://127.0.0.1:5001/fresh-s3cr_t-1", openai: "http://127.0.0.1:5002/fresh-s3cr_t-2", pid: 3, anthropicUpstream: "u" });
    assert.deepEqual(parseProxiesLine(line), {
      anthropic: "http://127.0.0.1:5001/fresh-s3cr_t-1",
      openai: "http://127.0.0.1:5002/fresh-s3cr_t-2",
      anthropicUpstream: "u",
      openaiUpstream: undefined,
      pid: 3,
    });
    assert.equal(parseProxiesLine("fresh-ls proxy: starting"), undefined);
    assert.equal(parseProxiesLine(JSON.stringify({ anthropic: "http://example.test:1", openai: "http://127.0.0.1:2" })), undefined);
    assert.equal(parseProxiesLine("null"), undefined);
    // A base URL without the proxy's secret is not one this extension hands to terminals.
    assert.equal(parseProxiesLine(JSON.stringify({ anthropic: "http://127.0.0.1:1", openai: "http://127.0.0.1:2/fresh-x" })), undefined);
    assert.equal(parseProxiesLine(JSON.stringify({ anthropic: "http://127.0.0.1:1/fresh-x/../y", openai: "http://127.0.0.1:2/fresh-x" })), undefined);
  });

  it("points both base URLs at the proxies", () => {
    assert.deepEqual(terminalVariables({ anthropic: "http://127.0.0.1:1", openai: "http://127.0.0.1:2" }), {
      ANTHROPIC_BASE_URL: "http://127.0.0.1:1",
      OPENAI_BASE_URL: "http://127.0.0.1:2",
    });
    assert.match(proxyTooltipLine([{ name: "shop", urls: { anthropic: "http://127.0.0.1:1", openai: "http://127.0.0.1:2" } }]), /shop: ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:1/);
    assert.match(proxyTooltipLine([]), /starting/);
  });
});
