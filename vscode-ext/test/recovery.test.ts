import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  crashLoop,
  gaveUpMessage,
  MAX_STOPS,
  mayStartOwn,
  REATTACH_GRACE_MS,
  RECOVERY_DELAYS_MS,
  recoveryDelay,
  STOP_WINDOW_MS,
} from "../src/recovery";

describe("recovery", () => {
  it("backs off, doubling, then gives up", () => {
    const delays = RECOVERY_DELAYS_MS.map((_, i) => recoveryDelay(i));
    for (let i = 1; i < delays.length; i++) assert.equal(delays[i], 2 * (delays[i - 1] as number));
    assert.equal(recoveryDelay(RECOVERY_DELAYS_MS.length), undefined);
  });

  it("gives a harness's server time to come back before starting one of its own", () => {
    assert.equal(mayStartOwn(false, 0), true);
    assert.equal(mayStartOwn(true, 0), false);
    assert.equal(mayStartOwn(true, REATTACH_GRACE_MS), true);
    // The grace ends before the tries do, so the extension does start its own in time.
    assert.ok(RECOVERY_DELAYS_MS.reduce((a, b) => a + b, 0) > REATTACH_GRACE_MS);
  });

  it("stops trying in a crash loop, and forgets old stops", () => {
    const stops: number[] = [];
    for (let i = 0; i < MAX_STOPS; i++) assert.equal(crashLoop(stops, i * 1000), false);
    assert.equal(crashLoop(stops, MAX_STOPS * 1000), true);
    assert.equal(crashLoop([0, 1, 2, 3, 4], STOP_WINDOW_MS + 10), false);
  });

  it("says once, plainly, what to run", () => {
    const m = gaveUpMessage("ws", 6, "no interpreter", false);
    assert.match(m, /server for ws stopped and did not come back after 6 tries \(last: no interpreter\)/);
    assert.match(m, /“fresh-ls: Restart Server”/);
    assert.match(gaveUpMessage("ws", 0, undefined, true), /stopped 6 times within 3 minutes/);
  });
});
