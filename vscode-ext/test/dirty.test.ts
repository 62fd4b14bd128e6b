import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DirtyBuffers } from "../src/dirty";

describe("dirty buffers", () => {
  it("reports only the flips between clean and dirty", () => {
    const d = new DirtyBuffers();
    assert.equal(d.update("file:///a.py", false), false); // opened clean: nothing to show
    assert.equal(d.update("file:///a.py", true), true); // the first keystroke
    assert.equal(d.update("file:///a.py", true), false); // more typing
    assert.equal(d.update("file:///b.py", true), true);
    assert.equal(d.update("file:///a.py", false), true); // saved or reverted
    assert.equal(d.update("file:///a.py", false), false);
  });
});
