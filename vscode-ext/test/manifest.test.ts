// package.json and the code name the same commands, context keys and walkthrough.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { Commands, ContextKeys, EXTENSION_ID, WALKTHROUGH } from "../src/model";

const ROOT = path.resolve(__dirname, "..", "..");
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));

describe("manifest", () => {
  it("declares exactly the commands the code registers (the panel's focus command is VS Code's)", () => {
    const declared = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    const ours = Object.values(Commands).filter((c) => c !== Commands.focusPanel).sort();
    assert.deepEqual(declared, ours);
  });

  it("gives every view-title and row action an icon", () => {
    const icons = new Map(manifest.contributes.commands.map((c: { command: string; icon?: string }) => [c.command, c.icon]));
    const menus = manifest.contributes.menus;
    for (const item of [...menus["view/title"], ...menus["view/item/context"]]) {
      if (String(item.group).startsWith("navigation") || String(item.group).startsWith("inline")) {
        assert.ok(icons.get(item.command), `${item.command} shows as a button but has no icon`);
      }
    }
  });

  it("names the walkthrough and the extension as the code does", () => {
    assert.equal(`${manifest.publisher}.${manifest.name}`, EXTENSION_ID);
    const ids = manifest.contributes.walkthroughs.map((w: { id: string }) => `${EXTENSION_ID}#${w.id}`);
    assert.ok(ids.includes(WALKTHROUGH));
    for (const w of manifest.contributes.walkthroughs) {
      for (const step of w.steps) {
        if (step.media.markdown) assert.ok(fs.existsSync(path.join(ROOT, step.media.markdown)), step.media.markdown);
      }
    }
  });

  it("toggles the view title's buttons with the context keys the code sets", () => {
    const whens = JSON.stringify(manifest.contributes.menus);
    for (const key of Object.values(ContextKeys)) assert.match(whens, new RegExp(key.replace(".", "\\.")));
  });
});
