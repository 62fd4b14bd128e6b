// End-to-end: the packaged extension in a real VS Code (code-server 4.100.3 from npm), driven
// through Debian's chromium by playwright-core. A scripted harness attaches to the sidecar the
// extension started and observes cart.py; the file is then edited on disk. The test asserts
// that the panel shows the view as changed (status bar, tooltip too), the CodeLens, that an
// editor buffer reaches the engine, that clicking the view opens the diff, the commands (Show
// Projection, Copy Harness Endpoint, Forget Session), the view title's filter, grouping, logs
// and settings, the rows' inline actions, the gutter marks, the walkthrough, the restart on a
// settings change with the message for a Python without fresh_ls, and the restart after a
// crash. Screenshots go to e2e/artifacts/; four are copied to media/ for the README
// (panel.png, diff.png, decorations.png, walkthrough.png).
//
// Run: `make -C vscode-ext e2e` (installs what is missing first). Bounded by E2E_TIMEOUT_S;
// everything it starts (code-server, its extension host, the sidecar, chromium) is stopped.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CHROMIUM, CODE_SERVER_BIN, EXT_DIR } from "./setup.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(here, "artifacts");
const REPO = path.resolve(EXT_DIR, "..");
const PYTHON = process.env.FRESH_LS_PYTHON || path.join(REPO, ".venv", "bin", "python");
const TIMEOUT_S = Number(process.env.E2E_TIMEOUT_S || 300);
const VSIX = path.join(EXT_DIR, `fresh-ls-linux-x64-${JSON.parse(fs.readFileSync(path.join(EXT_DIR, "package.json"), "utf8")).version}.vsix`);

/** code-server's environment, as a new user's: nothing that leads a Python to this clone (no
 * PYTHONPATH, no virtualenv, no PATH entry inside the repository). The harness (harness.py)
 * still runs with the clone's .venv: it is the user's agent, not the sidecar. */
function userEnv() {
  const env = { ...process.env, CS_DISABLE_FILE_DOWNLOADS: "1" };
  for (const k of ["PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "CONDA_PREFIX", "FRESH_LS_PYTHON", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"]) delete env[k];
  env.PATH = (env.PATH ?? "")
    .split(path.delimiter)
    .filter((d) => d && !path.resolve(d).startsWith(REPO + path.sep))
    .join(path.delimiter);
  return env;
}

/** The environment variables of a running process (Linux). */
function environOf(pid) {
  return Object.fromEntries(
    fs
      .readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );
}

const CART = [
  "RATE = 10",
  "",
  "",
  "class Cart:",
  "    def __init__(self):",
  "        self.items = []",
  "",
  "    def total(self, quantity):",
  "        subtotal = quantity * RATE",
  "        return subtotal",
  "",
].join("\n");

// A four-line function; a view of its first three lines is a fragment that does not parse.
const PRICE_TS = ["export function price(qty: number): number {", "  const base = qty * 3;", "  return base;", "}", ""].join("\n");

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
const log = (msg) => process.stdout.write(`e2e [${elapsed()}] ${msg}\n`);

/** Everything the run started, for cleanup. */
const state = { tmp: undefined, codeServer: undefined, browser: undefined, serverPid: undefined, ws: undefined, harnessServers: [] };

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function httpOk(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode !== undefined && res.statusCode < 500);
    });
    req.on("error", () => resolve(false));
    req.setTimeout(2000, () => {
      req.destroy();
      resolve(false);
    });
  });
}

async function waitFor(what, fn, timeoutMs, intervalMs = 250) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

function harness(action) {
  const res = spawnSync(PYTHON, [path.join(here, "harness.py"), state.ws, action], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (res.status !== 0) throw new Error(`harness ${action} failed (${res.status}): ${res.stderr || res.error}`);
  return JSON.parse(res.stdout);
}

async function shot(page, name) {
  const file = path.join(ARTIFACTS, name);
  await page.screenshot({ path: file });
  log(`screenshot ${path.relative(EXT_DIR, file)}`);
  return file;
}

function copyLogs() {
  if (!state.tmp) return;
  const logs = path.join(state.tmp, "user-data", "logs");
  if (fs.existsSync(logs)) fs.cpSync(logs, path.join(ARTIFACTS, "vscode-logs"), { recursive: true });
}

async function cleanup() {
  const steps = [];
  if (state.browser) {
    steps.push(state.browser.close().catch(() => undefined));
    state.browser = undefined;
  }
  await Promise.all(steps);
  const cs = state.codeServer;
  state.codeServer = undefined;
  if (cs && cs.exitCode === null && cs.signalCode === null) {
    // code-server runs in its own process group: its extension host and the sidecar with it.
    try {
      process.kill(-cs.pid, "SIGTERM");
    } catch {
      // already gone
    }
    const exited = await Promise.race([
      new Promise((r) => cs.once("exit", () => r(true))),
      new Promise((r) => setTimeout(() => r(false), 5000)),
    ]);
    if (!exited) {
      try {
        process.kill(-cs.pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
  // The sidecar the extension started: stopped with its group, but make sure.
  if (state.serverPid && alive(state.serverPid)) {
    await waitFor("the sidecar to exit", () => !alive(state.serverPid), 5000).catch(() => {
      try {
        process.kill(state.serverPid, "SIGKILL");
      } catch {
        // gone
      }
    });
  }
  for (const proc of state.harnessServers.splice(0)) {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  }
  state.serverPid = undefined;
  copyLogs();
  if (state.tmp) {
    fs.rmSync(state.tmp, { recursive: true, force: true });
    state.tmp = undefined;
  }
}

// A watchdog outside the test runner: whatever hangs, the run stops and cleans up.
const watchdog = setTimeout(async () => {
  process.stderr.write(`e2e: watchdog fired after ${TIMEOUT_S} s; stopping everything\n`);
  await cleanup().catch(() => undefined);
  process.exit(1);
}, TIMEOUT_S * 1000);

before(() => {
  assert.ok(fs.existsSync(CODE_SERVER_BIN), `code-server is missing (${CODE_SERVER_BIN}): run \`node e2e/setup.mjs\``);
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: run \`node e2e/setup.mjs\``);
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run \`make build\``);
  assert.ok(fs.existsSync(PYTHON), `${PYTHON} is missing: run \`make\` in the repo root (or set FRESH_LS_PYTHON)`);
  fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
});

after(async () => {
  await cleanup();
  clearTimeout(watchdog);
  log("cleaned up");
});

/**
 * A fresh profile with only the .vsix installed, code-server on a free port in the user's
 * environment, and Chromium on a new git repository holding cart.py. `beforeOpen(ws)` runs
 * before the folder is opened (say, a harness starting its own server).
 */
async function launchWorkbench(name, { settings: extra = {}, beforeOpen, restricted = false } = {}) {
  // ---- a fresh profile, the extension, a workspace ------------------------------------------
  state.tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `fresh-ls-e2e-${name}-`)));
  const userData = path.join(state.tmp, "user-data");
  const extensions = path.join(state.tmp, "extensions");
  const ws = (state.ws = path.join(state.tmp, "workspace"));
  const config = path.join(state.tmp, "config.yaml");
  const port = await freePort();
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.mkdirSync(extensions, { recursive: true });
  fs.mkdirSync(ws, { recursive: true });
  fs.writeFileSync(path.join(ws, "cart.py"), CART);
  // A real repository, to check that the state dir (endpoint token, SQLite) never shows in git.
  const git = (...args) => spawnSync("git", ["-C", ws, ...args], { encoding: "utf8" });
  assert.equal(git("init", "-q").status, 0);
  fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const settingsFile = path.join(userData, "User", "settings.json");
  const settings = () =>
    JSON.stringify(
      {
        // NOTES.md: otherwise typing lands in a Chat panel or is saved to disk.
        "files.autoSave": "off",
        "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": false,
        "chat.disableAIFeatures": true,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        // quiet and deterministic
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "extensions.ignoreRecommendations": true,
        "workbench.tips.enabled": false,
        "git.enabled": false,
        "diffEditor.useInlineViewWhenSpaceIsLimited": false,
        "window.zoomLevel": 0,
        // the extension under test: no freshLs.python, as after a one-step install
        "freshLs.refreshSeconds": 1,
        // Restricted Mode: Workspace Trust on, no startup dialog, so the folder (never trusted
        // in this fresh profile) opens untrusted.
        ...(restricted
          ? {
              "security.workspace.trust.enabled": true,
              "security.workspace.trust.startupPrompt": "never",
              "security.workspace.trust.banner": "never",
              "security.workspace.trust.untrustedFiles": "open",
            }
          : {}),
        ...extra,
      },
      null,
      2,
    );
  fs.writeFileSync(settingsFile, settings());
  // The premise of "only the .vsix": no python3 on PATH finds fresh_ls on its own.
  const bare = spawnSync("python3", ["-c", "import fresh_ls"], { cwd: state.tmp, env: { ...userEnv(), PYTHONSAFEPATH: "1" } });
  assert.notEqual(bare.status, 0, "python3 imports fresh_ls without the bundle: the test would prove nothing");
  const csArgs = ["--config", config, "--user-data-dir", userData, "--extensions-dir", extensions];

  const install = spawnSync(CODE_SERVER_BIN, [...csArgs, "--install-extension", VSIX], { encoding: "utf8", timeout: 120_000 });
  fs.writeFileSync(path.join(ARTIFACTS, `install-extension-${name}.log`), `${install.stdout}\n${install.stderr}`);
  assert.equal(install.status, 0, `installing the .vsix failed: ${install.stderr}`);
  assert.match(install.stdout, /successfully installed/i);
  assert.ok(
    fs.readdirSync(extensions).some((d) => d.startsWith("fresh-ls.fresh-ls-")),
    `fresh-ls.fresh-ls is not in ${extensions}: ${fs.readdirSync(extensions).join(", ")}`,
  );
  log("installed the .vsix");

  await beforeOpen?.(ws);

  // ---- code-server ---------------------------------------------------------------------------
  const csLog = fs.openSync(path.join(ARTIFACTS, `code-server-${name}.log`), "w");
  state.codeServer = spawn(
    CODE_SERVER_BIN,
    [
      ...csArgs,
      "--disable-telemetry",
      "--disable-update-check",
      ...(restricted ? [] : ["--disable-workspace-trust"]),
      "--disable-getting-started-override",
      ws,
    ],
    { detached: true, stdio: ["ignore", csLog, csLog], env: userEnv() },
  );
  fs.closeSync(csLog);
  await waitFor("code-server to answer", () => httpOk(`http://127.0.0.1:${port}/healthz`), 60_000);
  log(`code-server is up on 127.0.0.1:${port}`);

  // ---- chromium ------------------------------------------------------------------------------
  state.browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--headless", "--disable-background-networking", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"],
    timeout: 60_000,
  });
  const context = await state.browser.newContext({
    viewport: { width: 1500, height: 860 },
    permissions: ["clipboard-read", "clipboard-write"],
  });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`, { waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
  log(`workbench loaded (${name})`);
  return { page, ws, extensions, settingsFile, git };
}

test("the panel shows a changed view and its diff in a real VS Code", { timeout: TIMEOUT_S * 1000 }, async () => {
  const { page, ws, extensions, settingsFile, git } = await launchWorkbench("bundled");


  // ---- the extension started the sidecar; a harness attaches and observes ------------------
  const endpointFile = path.join(ws, ".fresh-ls", "endpoint.json");
  await waitFor("the sidecar's endpoint.json", () => fs.existsSync(endpointFile), 60_000);
  state.serverPid = JSON.parse(fs.readFileSync(endpointFile, "utf8")).pid;
  log(`sidecar listening (pid ${state.serverPid})`);
  // It is the sidecar bundled in the installed .vsix: its fresh_ls comes from the extensions
  // directory of this profile, not from the clone.
  const sidecarEnv = environOf(state.serverPid);
  assert.ok(
    (sidecarEnv.PYTHONPATH ?? "").startsWith(path.join(extensions, "fresh-ls.fresh-ls-")),
    `the sidecar's PYTHONPATH is ${sidecarEnv.PYTHONPATH}, not the installed extension's bundled/libs`,
  );
  assert.equal(sidecarEnv.PYTHONSAFEPATH, "1");
  assert.equal(fs.realpathSync(`/proc/${state.serverPid}/cwd`), ws);
  log(`it runs from the bundle (PYTHONPATH=${path.relative(state.tmp, sidecarEnv.PYTHONPATH)})`);
  // .fresh-ls/ is in neither git's view (the server's .fresh-ls/.gitignore) nor the Explorer's
  // (the extension's files.exclude default).
  const porcelain = git("status", "--porcelain", "--untracked-files=all").stdout;
  assert.match(porcelain, /cart\.py/);
  assert.doesNotMatch(porcelain, /\.fresh-ls/, `git status shows the state dir:\n${porcelain}`);
  await page.keyboard.press("Control+Shift+E");
  const explorer = page.locator(".explorer-folders-view");
  await explorer.locator(".monaco-list-row", { hasText: "cart.py" }).waitFor({ state: "visible" });
  assert.equal(await explorer.locator(".monaco-list-row", { hasText: ".fresh-ls" }).count(), 0, "the Explorer lists .fresh-ls");
  log("git status and the Explorer show nothing of .fresh-ls/");
  await shot(page, "01-workbench.png");

  // ---- the first run: one question, to route terminal agents through fresh-ls -----------------
  const prompt = page.locator(".notification-toast", { hasText: "route the agents you start in VS Code terminals" }).first();
  await prompt.waitFor({ state: "visible", timeout: 30_000 });
  await prompt.locator(".monaco-button", { hasText: "Route Terminal Agents" }).waitFor({ state: "visible" });
  await shot(page, "00-first-run.png");
  await prompt.locator(".monaco-button", { hasText: "Not Now" }).click();
  await prompt.waitFor({ state: "hidden" });
  log("the first run asks whether to route terminal agents through fresh-ls (answered: Not Now)");

  // ---- the empty panel offers the three ways in, as buttons -----------------------------------
  await page.locator(".statusbar-item", { hasText: /fresh-ls/ }).first().click();
  const welcome = page.locator(".pane .welcome-view-content").first();
  await welcome.waitFor({ state: "visible", timeout: 30_000 });
  for (const label of ["Route Terminal Agents Through fresh-ls", "Install Claude Code Hooks", "Connect a Harness"]) {
    const button = welcome.locator(".monaco-button", { hasText: label }).first();
    await button.waitFor({ state: "visible" });
    const fits = await button.evaluate((b) => b.scrollWidth <= b.clientWidth + 1);
    assert.ok(fits, `the button “${label}” is cut off`);
  }
  await page.mouse.move(0, 0);
  const emptyShot = await shot(page, "01b-empty-panel.png");
  log("the empty panel offers: route terminal agents, install Claude Code hooks, connect a harness");

  const observed = harness("observe");
  assert.equal(observed[0].status, "fresh");
  assert.equal(observed[0].units[0].name, "Cart.total");
  log("harness observed cart.py lines 8-10 (call_7) and lines 5-6 (call_3)");

  // The panel lists the fresh views (through the status poll) before anything changes.
  const statusItem = page.locator(".statusbar-item", { hasText: /fresh-ls|stale/ }).first();
  await statusItem.waitFor({ state: "visible" });
  await statusItem.click();
  const panel = page.locator(".pane", { has: page.locator(".pane-header", { hasText: /agent views/i }) });
  const row = (text) => panel.locator(".monaco-list-row", { hasText: text });
  // Rows lead with file:lines, then status and age (the view's id is in the tooltip).
  await row(/cart\.py:8-10\s*fresh/).waitFor({ state: "visible", timeout: 30_000 });
  await expectText(row(/cart\.py:8-10\s*fresh/), /cart\.py:8-10\s*fresh · read just now/);
  await row(/^agent-1 · started \d\d:\d\d/).first().waitFor({ state: "visible" });
  log("panel shows agent-1 · started HH:MM, its view cart.py:8-10 fresh, read just now");
  // A wider side bar, so the rows' descriptions fit in the screenshots.
  const sidebar = await page.locator(".part.sidebar").boundingBox();
  if (sidebar) {
    const x = sidebar.x + sidebar.width - 1;
    await page.mouse.move(x, sidebar.y + sidebar.height / 2);
    await page.mouse.down();
    await page.mouse.move(x + 170, sidebar.y + sidebar.height / 2, { steps: 5 });
    await page.mouse.up();
  }

  // ---- an edit on disk that nobody reports: the server's watcher sees it ---------------------
  fs.writeFileSync(path.join(ws, "cart.py"), CART.replace("quantity * RATE", "quantity * RATE * 2"));
  const changedRow = row(/cart\.py:8-10\s*changed/);
  await changedRow.waitFor({ state: "visible", timeout: 30_000 });
  await expectText(changedRow, /cart\.py:8-10\s*changed · read just now/);
  await row(/cart\.py:5-6\s*fresh/).waitFor({ state: "visible" });
  await page.locator(".statusbar-item", { hasText: "1 stale" }).first().waitFor({ state: "visible" });
  const stale = harness("stale");
  assert.equal(stale.views.find((v) => v.viewId === "call_7").status, "changed");
  assert.equal(stale.views.find((v) => v.viewId === "call_7").units[0].changedBy, "outside");
  // The activity-bar icon carries the count too.
  await page.locator(".activitybar .action-item", { has: page.locator(".badge-content", { hasText: /^1$/ }) }).first().waitFor({ state: "visible" });
  log("panel shows call_7 as changed; status bar says 1 stale; the activity-bar badge says 1");
  // The Explorer marks cart.py with the count of its stale views (a file decoration: its
  // badge is CSS ::after content), then the panel comes back from the status bar.
  await page.keyboard.press("Control+Shift+E");
  const cartRow = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "cart.py" }).first();
  await cartRow.waitFor({ state: "visible" });
  // Its own letter, S, in its own colour (freshLs.staleForeground, dark default #b392f0): not
  // a count in the warning colour, which reads as problems (light default #8250df).
  const badge = await waitFor("the Explorer's decoration on cart.py", () =>
    cartRow.evaluate((el) => {
      const n = [el, ...el.querySelectorAll("*")].find((e) => /"S"/.test(getComputedStyle(e, "::after").content));
      return n ? { color: getComputedStyle(n, "::after").color, title: [el, ...el.querySelectorAll("[title]")].map((e) => e.getAttribute("title") ?? "").join(" | ") } : false;
    }), 15_000);
  assert.ok(["rgb(179, 146, 240)", "rgb(130, 80, 223)"].includes(badge.color), `the letter is not in fresh-ls's colour: ${badge.color}`);
  log(`the Explorer decorates cart.py with S in fresh-ls's colour (${badge.color})`);
  await statusItem.click();
  await changedRow.waitFor({ state: "visible" });
  await page.mouse.move(0, 0);
  const panelShot = await shot(page, "02-panel-changed.png");

  // ---- the view title: only stale, group by file, and back ------------------------------------
  await titleAction(page, panel, "Show Only Stale Views");
  await waitFor("call_3 (fresh) to leave the filtered panel", async () => (await row(/cart\.py:5-6\s*fresh/).count()) === 0, 15_000);
  await changedRow.waitFor({ state: "visible" });
  await titleAction(page, panel, "Show All Views");
  await row(/cart\.py:5-6\s*fresh/).waitFor({ state: "visible" });
  await titleAction(page, panel, "Group Views by File");
  const fileRow = row("2 views · 1 stale · 1 session");
  await fileRow.waitFor({ state: "visible" });
  await expectText(fileRow, /cart\.py/);
  await expectText(changedRow, /changed · agent-1 · read/);
  await shot(page, "02c-by-file.png");
  await titleAction(page, panel, "Group Views by Session");
  await row(/^agent-1 · started/).first().waitFor({ state: "visible" });
  await expectText(changedRow, /cart\.py:8-10\s*changed/);
  log("view title: only stale hides the fresh view, group by file lists cart.py with both views");

  // ---- a row's inline action: Copy Marker ------------------------------------------------------
  await rowAction(changedRow, "Copy Marker");
  await waitFor("the marker on the clipboard", async () => /^\[fresh-ls\] call_7 /.test(await page.evaluate(() => navigator.clipboard.readText())), 10_000);
  log(`Copy Marker: ${(await page.evaluate(() => navigator.clipboard.readText())).split("\n")[0].slice(0, 90)}…`);

  // The tooltip carries the diff summary and who changed the lines.
  await changedRow.locator(".label-name").hover();
  const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "Click to compare" }).first();
  await hover.waitFor({ state: "visible", timeout: 15_000 });
  await expectText(hover, /diff: \+1 line −1 line in 1 hunk/);
  await expectText(hover, /changed by a write no client reported/);
  await expectText(hover, /view call_7 of session agent-1/);
  await shot(page, "02b-tooltip.png");
  await page.mouse.move(700, 500);
  await page.keyboard.press("Escape");

  // ---- CodeLens on the definition in the editor ----------------------------------------------
  await quickOpen(page, "cart.py");
  const lens = page.locator(".codelens-decoration", { hasText: "agent-1 saw an older version · Show diff" });
  await lens.first().waitFor({ state: "visible", timeout: 30_000 });
  log("CodeLens shown on Cart.total");
  await shot(page, "03-codelens.png");
  // A second view, of the whole file, goes stale too: each stale view gets its own lens (a
  // file-level one at its first changed line).
  harness("observe-file");
  fs.writeFileSync(path.join(ws, "cart.py"), CART.replace("RATE = 10", "RATE = 11").replace("quantity * RATE", "quantity * RATE * 2"));
  const fileLens = page.locator(".codelens-decoration", { hasText: "agent-1 saw an older version of this file · Show diff" });
  await fileLens.first().waitFor({ state: "visible", timeout: 30_000 });
  await lens.first().waitFor({ state: "visible" });
  assert.equal(await page.locator(".codelens-decoration", { hasText: /saw an older version/ }).count(), 2);
  await page.locator(".statusbar-item", { hasText: "2 stale" }).first().waitFor({ state: "visible", timeout: 15_000 });
  await shot(page, "03a-two-lenses.png");
  log("two stale views of cart.py, two lenses: the method's (line 8) and the whole file's (line 1)");
  harness("forget-file");
  fs.writeFileSync(path.join(ws, "cart.py"), CART.replace("quantity * RATE", "quantity * RATE * 2"));
  await fileLens.first().waitFor({ state: "hidden", timeout: 15_000 });
  await page.locator(".statusbar-item", { hasText: "1 stale" }).first().waitFor({ state: "visible", timeout: 15_000 });
  // The gutter marks the line that changed since agent-1 read it, and only that one.
  const changedLine = CART.split("\n").findIndex((l) => l.includes("quantity * RATE")) + 1;
  await waitFor(`the gutter mark on line ${changedLine}`, async () => JSON.stringify(await gutterLines(page)) === JSON.stringify([changedLine]), 15_000)
    .catch(async (err) => {
      throw new Error(`${err.message}; marked: ${JSON.stringify(await gutterLines(page))}`);
    });
  log(`the gutter marks line ${changedLine}`);
  // The end of the first changed line says who saw an older version and who changed it.
  const eol = "agent-1 saw an older version · changed outside the editor";
  await waitFor("the end-of-line text", async () => (await editorTexts(page)).some((t) => t.includes(eol)), 15_000)
    .catch(async (err) => {
      throw new Error(`${err.message}; texts: ${JSON.stringify((await editorTexts(page)).filter((t) => /saw|RATE/.test(t)))}`);
    });
  log(`the end of line ${changedLine} says “${eol}”`);
  // A hover anywhere over the changed line (the decoration covers it, not a zero-width spot).
  const lineHover = page.locator(".monaco-hover", { hasText: "saw an older version of this line" }).first();
  await page.mouse.move(...(await centerOf(page.locator(".monaco-editor .view-line", { hasText: "subtotal = quantity" }).first(), 0.5)));
  await lineHover.waitFor({ state: "visible", timeout: 15_000 });
  await expectText(lineHover, /fresh-ls: An agent saw an older version of this line: agent-1 \(call_7\)\. Changed by a write no client reported/);
  const hoverShot = await shot(page, "03c-hover.png");
  log("hovering the changed line shows who saw it and who changed it");
  await page.keyboard.press("Escape");
  // Go to Next / Previous Stale Change, by their default keys (Ctrl+F6, Ctrl+Shift+F6).
  await page.locator(".monaco-editor .view-lines", { hasText: "class Cart" }).first().click();
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("Control+F6");
  await page.locator(".statusbar-item", { hasText: new RegExp(`Ln ${changedLine}, Col 9`) }).first().waitFor({ state: "visible", timeout: 10_000 });
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Control+Shift+F6");
  await page.locator(".statusbar-item", { hasText: new RegExp(`Ln ${changedLine}, Col 9`) }).first().waitFor({ state: "visible", timeout: 10_000 });
  log(`Ctrl+F6 and Ctrl+Shift+F6 go to the stale change on line ${changedLine}`);
  // The README's picture of the marks: the Explorer's decoration beside the editor's gutter.
  await page.keyboard.press("Control+Shift+E");
  await page.locator(".explorer-folders-view .monaco-list-row", { hasText: "cart.py" }).first().waitFor({ state: "visible" });
  await page.mouse.move(0, 0);
  await page.waitForTimeout(300);
  const decorationsShot = await shot(page, "03b-decorations.png");
  await statusItem.click();

  // ---- the editor's buffer reaches the same engine over LSP (didOpen/didChange) -------------
  await page.locator(".monaco-editor .view-lines", { hasText: "class Cart" }).first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("# an unsaved note\n");
  await waitFor("editorDirty on call_7", () => harness("stale").views.find((v) => v.viewId === "call_7").editorDirty, 15_000, 500);
  // The panel says so by itself: a dirty buffer changes neither the disk nor the status poll's
  // fingerprint, so only the extension's own buffer listener can refresh the row.
  await expectText(changedRow, /unsaved edits/);
  await runCommand(page, "File: Revert File");
  await waitFor("editorDirty to clear", () => !harness("stale").views.find((v) => v.viewId === "call_7").editorDirty, 15_000, 500);
  await waitFor("the panel to drop “unsaved edits”", async () => !/unsaved edits/.test(await changedRow.first().innerText()), 15_000);
  log("an unsaved edit sets editorDirty for the harness and in the panel at once; reverting clears both");

  // ---- clicking the changed view opens the diff ---------------------------------------------
  // Open the view's node first, so the panel shows its unit (the method) too.
  await changedRow.locator(".monaco-tl-twistie").click();
  await row(/method Cart\.total\s*changed/).waitFor({ state: "visible" });
  await changedRow.locator(".label-name").click();
  const diff = page.locator(".monaco-diff-editor").first();
  await diff.waitFor({ state: "visible", timeout: 30_000 });
  await page.locator(".tab", { hasText: "seen by agent-1" }).first().waitFor({ state: "visible" });
  const original = diff.locator(".editor.original .view-lines");
  const modified = diff.locator(".editor.modified .view-lines");
  await expectText(original, /subtotal = quantity \* RATE(?! \* 2)/);
  await expectText(modified, /subtotal = quantity \* RATE \* 2/);
  await diff.locator(".line-insert, .char-insert").first().waitFor({ state: "visible" });
  await page.mouse.move(0, 0); // no hover highlight in the screenshot
  await page.waitForTimeout(500);
  log("diff editor open: observed text on the left, the file on disk on the right");
  const final = await shot(page, "04-diff.png");
  // The open diff follows the file: an edit outside the view shows on both sides (no
  // difference there), one inside it on the right only.
  fs.writeFileSync(path.join(ws, "cart.py"), CART.replace("RATE = 10", "RATE = 12").replace("quantity * RATE", "quantity * RATE * 3"));
  await expectText(modified, /subtotal = quantity \* RATE \* 3/);
  await expectText(original, /RATE = 12/);
  await expectText(original, /subtotal = quantity \* RATE(?! \*)/);
  assert.doesNotMatch(await original.innerText(), /RATE = 10/);
  log("the open diff updated in place: the outside edit on both sides, the view's old line on the left");

  // ---- Show Projection -----------------------------------------------------------------------
  await runCommand(page, "fresh-ls: Show Projection");
  await page.locator(".tab", { hasText: "projection-agent-1.txt" }).first().waitFor({ state: "visible" });
  await expectText(page.locator(".editor-instance .view-lines").last(), /\[fresh-ls\]|\[E-/);
  await expectText(page.locator(".editor-instance .view-lines").last(), /plan \S+, \d+ bytes of \d+ bytes used/);
  await expectText(page.locator(".editor-instance .view-lines").last(), /call_7: \[fresh-ls\] call_7/);
  log("Show Projection opened the rendered projection");
  await shot(page, "05-projection.png");

  // ---- Copy Harness Endpoint -----------------------------------------------------------------
  await runCommand(page, "fresh-ls: Copy Harness Endpoint");
  await page.locator(".notification-toast", { hasText: "copied the endpoint" }).first().waitFor({ state: "visible" });
  const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  const endpoint = JSON.parse(fs.readFileSync(endpointFile, "utf8"));
  assert.deepEqual(
    { address: copied.address, token: copied.token, pid: copied.pid, endpointFile: copied.endpointFile },
    { ...endpoint, endpointFile },
  );
  log("Copy Harness Endpoint put the endpoint's address and token on the clipboard");

  // ---- Show Logs, the settings gear, the walkthrough ------------------------------------------
  await statusItem.click();
  await titleAction(page, panel, "Show Logs");
  await expectText(page.locator(".part.panel .view-lines"), /\[Info {2}- /);
  await page.keyboard.press("Control+J"); // the panel goes away again
  await titleAction(page, panel, "Open Settings");
  await page.locator(".settings-editor .setting-item", { hasText: /Gutter/ }).first().waitFor({ state: "visible" });
  await expectText(page.locator(".settings-editor .settings-header"), /@ext:fresh-ls\.fresh-ls/);
  log("the view title's Show Logs opens the output, its gear the extension's settings");
  await runCommand(page, "fresh-ls: Get Started");
  const walkthrough = page.locator(".gettingStartedContainer", { hasText: "Get started with fresh-ls" });
  await expectText(walkthrough, /Get started with fresh-ls/);
  await expectText(walkthrough, /The sidecar runs by itself/);
  await expectText(walkthrough, /Agents in VS Code terminals/);
  // What it says of the status bar is what the status bar shows (running, one stale view).
  await expectText(walkthrough, /The status bar shows\s*✓ fresh-ls\s*while it runs, and the count of stale views \(\s*1 stale\s*\)/).catch(async (err) => {
    const all = await page.locator(".gettingStartedContainer").evaluateAll((els) => els.map((e) => e.innerText.slice(0, 600)));
    throw new Error(`${err.message}; containers: ${JSON.stringify(all)}`);
  });
  await page.locator(".statusbar-item", { hasText: "1 stale" }).first().waitFor({ state: "visible" });
  let buttons = 0;
  for (const b of await walkthrough.locator(".monaco-button").all()) {
    if (!(await b.isVisible())) continue;
    const { fits, text } = await b.evaluate((el) => ({ fits: el.scrollWidth <= el.clientWidth + 1, text: el.textContent }));
    assert.ok(fits, `the walkthrough's button “${text}” is cut off at 1500 px`);
    buttons += 1;
  }
  assert.ok(buttons > 0, "no walkthrough button was visible to measure");
  await page.mouse.move(0, 0);
  await page.waitForTimeout(500);
  const walkthroughShot = await shot(page, "05b-walkthrough.png");
  log("fresh-ls: Get Started opens the walkthrough");

  for (const [from, to] of [[panelShot, "panel.png"], [final, "diff.png"], [decorationsShot, "decorations.png"], [hoverShot, "hover.png"], [walkthroughShot, "walkthrough.png"], [emptyShot, "empty-panel.png"]]) {
    fs.copyFileSync(from, path.join(EXT_DIR, "media", to));
  }
  log("copied the panel, diff, decorations and walkthrough screenshots to media/");

  // The keys of Go to Next / Previous Stale Change are bound to nothing else by default.
  await runCommand(page, "Preferences: Open Default Keyboard Shortcuts (JSON)");
  await page.locator(".tab.active", { hasText: /keybindings/i }).first().waitFor({ state: "visible", timeout: 15_000 });
  await page.locator(".editor-instance .monaco-editor .view-lines").last().click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Control+C");
  const defaults = await waitFor("the default keybindings on the clipboard", async () => {
    const text = await page.evaluate(() => navigator.clipboard.readText());
    return text.includes("freshLs.nextStaleChange") ? text : false;
  }, 10_000);
  fs.writeFileSync(path.join(ARTIFACTS, "default-keybindings.json"), defaults);
  const manifestKeys = JSON.parse(fs.readFileSync(path.join(EXT_DIR, "package.json"), "utf8")).contributes.keybindings;
  for (const { key, command } of manifestKeys) {
    const bound = [...defaults.matchAll(/"key":\s*"([^"]+)",\s*"command":\s*"([^"]+)"/g)].filter((m) => m[1] === key).map((m) => m[2]);
    assert.deepEqual(bound, [command], `${key} is bound by default to ${bound.join(", ")}`);
  }
  await page.keyboard.press("Control+W");
  log(`${manifestKeys.map((k) => k.key).join(" and ")} are bound to nothing else by default`);

  // ---- a settings change restarts the server; a missing fresh_ls says how to fix it --------
  const noPkg = path.join(state.tmp, "python-without-fresh-ls");
  fs.writeFileSync(noPkg, '#!/bin/sh\n# a Python that cannot import fresh_ls (no site-packages)\nexec python3 -I -S "$@"\n');
  fs.chmodSync(noPkg, 0o755);
  const firstPid = state.serverPid;
  // Through the Settings editor, as a person would (code-server does not reload a settings.json
  // changed behind its back).
  await setSetting(page, "freshLs.python", noPkg);
  const toast = page.locator(".notification-toast", { hasText: "cannot import fresh_ls" });
  await toast.first().waitFor({ state: "visible", timeout: 30_000 });
  await expectText(toast, /Run “fresh-ls: Use Bundled Sidecar”/);
  await panel.locator(".monaco-list-row", { hasText: "fresh-ls is not running" }).waitFor({ state: "visible" });
  await waitFor("the first sidecar to exit", () => !alive(firstPid), 10_000);
  assert.ok(!fs.existsSync(endpointFile), "the stopped sidecar left its endpoint.json behind");
  log("settings change restarted the server; a Python without fresh_ls gets a message with the fix");
  await shot(page, "06-missing-fresh-ls.png");

  // The toast's button clears the override: the bundled sidecar comes back.
  await toast.first().locator(".monaco-button", { hasText: "Use Bundled Sidecar" }).click();
  await waitFor("freshLs.python cleared", () => JSON.parse(fs.readFileSync(settingsFile, "utf8"))["freshLs.python"] === undefined, 10_000);
  await waitFor("a new endpoint.json", () => fs.existsSync(endpointFile), 30_000);
  state.serverPid = JSON.parse(fs.readFileSync(endpointFile, "utf8")).pid;
  assert.notEqual(state.serverPid, firstPid);
  // The views were stored by the first sidecar (SQLite) and come back with the new one.
  await row(/cart\.py:8-10\s*changed/).waitFor({ state: "visible", timeout: 30_000 });
  assert.ok((environOf(state.serverPid).PYTHONPATH ?? "").startsWith(extensions));
  log(`"Use Bundled Sidecar": a new bundled sidecar (pid ${state.serverPid}) serves the stored views`);

  // ---- a crashed sidecar (SIGKILL) is restarted and loses nothing it acknowledged ------------
  // A harness holding one connection open across the crash.
  const held = spawn(PYTHON, [path.join(here, "harness.py"), ws, "hold"], { stdio: ["pipe", "pipe", "pipe"] });
  state.harnessServers.push(held);
  const heldLines = lines(held.stdout);
  assert.deepEqual(JSON.parse(await heldLines.next()), { ready: true });
  const killed = state.serverPid;
  process.kill(killed, "SIGKILL");
  await waitFor(
    "a sidecar restarted after the crash",
    () => {
      try {
        const pid = JSON.parse(fs.readFileSync(endpointFile, "utf8")).pid;
        return pid !== killed && alive(pid) ? pid : false;
      } catch {
        return false;
      }
    },
    30_000,
  ).then((pid) => (state.serverPid = pid));
  await page.locator(".statusbar-item", { hasText: "1 stale" }).first().waitFor({ state: "visible", timeout: 30_000 });
  assert.equal(harness("stale").views.find((v) => v.viewId === "call_7").status, "changed");
  log(`SIGKILLed the sidecar: restarted (pid ${state.serverPid}) with its views`);
  // The expected reconnect is one plain line, not the language client's error.
  const channelLog = fs.readdirSync(path.join(state.tmp, "user-data", "logs"), { recursive: true }).find((f) => String(f).endsWith("fresh-ls.log"));
  const channelText = fs.readFileSync(path.join(state.tmp, "user-data", "logs", String(channelLog)), "utf8");
  assert.match(channelText, /\[Info {2}- [^\]]+\] the connection to the sidecar closed; fresh-ls reconnects by itself/);
  assert.doesNotMatch(channelText, /Server will not be restarted/);
  log("the log says the connection closed and fresh-ls reconnects, in one Info line");
  // The row expanded before the restarts is expanded still.
  await row(/method Cart\.total\s*changed/).waitFor({ state: "visible", timeout: 15_000 });
  held.stdin.write("stale\n");
  const after = JSON.parse(await heldLines.next());
  assert.equal(after.views.find((v) => v.viewId === "call_7").status, "changed");
  held.stdin.end();
  log("the harness's client, connected before the crash, answered after it (it reconnected by itself)");

  // ---- a row's inline action: Forget View (one view, no question) ----------------------------
  await statusItem.click();
  await rowAction(row(/cart\.py:5-6\s*fresh/), "Forget View");
  await waitFor("call_3 to leave the panel", async () => (await row(/cart\.py:5-6\s*fresh/).count()) === 0, 15_000);
  assert.deepEqual(harness("stale").views.map((v) => v.viewId), ["call_7"]);
  log("Forget View dropped call_3 alone");

  // ---- Forget Session ------------------------------------------------------------------------
  // Close the Settings editor first: it re-renders on setting changes and takes the focus back.
  const settingsTab = page.locator(".tab", { hasText: "Settings" }).first();
  await settingsTab.hover();
  await settingsTab.locator(".codicon-close").click();
  await page.locator(".settings-editor").waitFor({ state: "hidden" });
  await runCommand(page, "fresh-ls: Forget Session");
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ state: "visible" });
  await expectText(dialog, /Forget every view of agent session “agent-1”/);
  await dialog.locator(".monaco-button", { hasText: /^Forget$/ }).click();
  await panel.locator(".welcome-view-content, .monaco-list-row").filter({ hasText: /No agent views yet/ }).first().waitFor({ state: "visible" });
  assert.deepEqual(harness("stale").views, []);
  log("Forget Session dropped agent-1's views; the panel shows its welcome text");
  await shot(page, "07-forgotten.png");

  // ---- the empty panel's Install Claude Code Hooks: the folder's .claude/settings.json -------
  await panel.locator(".welcome-view-content .monaco-button", { hasText: "Install Claude Code Hooks" }).first().click();
  await page.locator(".notification-toast", { hasText: "Claude Code hooks installed" }).first().waitFor({ state: "visible", timeout: 30_000 });
  const claudeSettings = JSON.parse(fs.readFileSync(path.join(ws, ".claude", "settings.json"), "utf8"));
  const hookCommands = JSON.stringify(claudeSettings.hooks);
  assert.match(hookCommands, /-P -m fresh_ls hook claude-code/);
  // The bundled sidecar's hook carries its environment, so Claude Code can run it as it is.
  assert.ok(hookCommands.includes(`PYTHONPATH=${path.join(extensions, "fresh-ls.fresh-ls-")}`), `the hook has no bundled PYTHONPATH: ${hookCommands}`);
  log("Install Claude Code Hooks wrote the hooks, with the bundled sidecar's environment, to .claude/settings.json");

  // ---- forget sessions older than N hours, then forget all ------------------------------------
  // agent-0 reads, then (10 s later) agent-1: with 0.002 hours (7.2 s) only agent-0 is old.
  harness("observe-old");
  await page.waitForTimeout(10_000);
  harness("observe");
  await row(/^agent-0 · started/).first().waitFor({ state: "visible", timeout: 15_000 });
  await row(/^agent-1 · started/).first().waitFor({ state: "visible", timeout: 15_000 });
  await runCommand(page, "fresh-ls: Forget Sessions Older Than…");
  const hoursInput = page.locator(".quick-input-widget input");
  await hoursInput.waitFor({ state: "visible" });
  await hoursInput.fill("0.002");
  await hoursInput.press("Enter");
  const oldDialog = page.locator(".monaco-dialog-box");
  await oldDialog.waitFor({ state: "visible" });
  await expectText(oldDialog, /Forget 1 agent session last active more than 0\.002 hours ago \(agent-0\)/);
  await oldDialog.locator(".monaco-button", { hasText: /^Forget$/ }).click();
  await waitFor("agent-0 to leave the panel", async () => (await row(/^agent-0/).count()) === 0, 15_000);
  assert.deepEqual(Object.keys(harness("status")), ["agent-1"]);
  log("Forget Sessions Older Than… 0.002 hours dropped agent-0 (read 10 s before) and kept agent-1");
  await runCommand(page, "fresh-ls: Forget All Views");
  const allDialog = page.locator(".monaco-dialog-box");
  await allDialog.waitFor({ state: "visible" });
  await expectText(allDialog, /Forget all 2 views of 1 agent session\?/);
  await allDialog.locator(".monaco-button", { hasText: /^Forget All$/ }).click();
  await panel.locator(".welcome-view-content").filter({ hasText: /No agent views yet/ }).first().waitFor({ state: "visible" });
  assert.deepEqual(harness("status"), {});
  log("Forget All Views emptied the panel");

  // ---- the first run's question is not asked again -------------------------------------------
  await page.reload({ waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
  await page.locator(".statusbar-item", { hasText: /fresh-ls/ }).first().waitFor({ state: "visible", timeout: 60_000 });
  await page.waitForTimeout(4000);
  assert.equal(await page.locator(".notification-toast", { hasText: "route the agents you start" }).count(), 0, "the first-run question came back");
  log("after a reload, the first-run question is not asked again");
});

/** A server the harness starts itself (`fresh-ls serve --listen`), before or after the
 * editor: the extension attaches to it. Resolves once its endpoint.json names it. */
async function startHarnessServer(ws, label) {
  const err = fs.openSync(path.join(ARTIFACTS, `harness-server-${label}.log`), "w");
  const proc = spawn(PYTHON, ["-m", "fresh_ls", "serve", "--root", ws, "--listen"], { stdio: ["ignore", "ignore", err] });
  fs.closeSync(err);
  state.harnessServers.push(proc);
  const endpointFile = path.join(ws, ".fresh-ls", "endpoint.json");
  await waitFor(`the harness's server (${label}) to listen`, () => {
    if (proc.exitCode !== null) throw new Error(`the harness's server exited with ${proc.exitCode}`);
    try {
      return JSON.parse(fs.readFileSync(endpointFile, "utf8")).pid === proc.pid;
    } catch {
      return false;
    }
  }, 30_000, 100);
  return proc;
}

function endpointPid(ws) {
  try {
    return JSON.parse(fs.readFileSync(path.join(ws, ".fresh-ls", "endpoint.json"), "utf8")).pid;
  } catch {
    return undefined;
  }
}

test("an attached sidecar that dies is re-attached, or replaced, without a click", { timeout: TIMEOUT_S * 1000 }, async () => {
  await cleanup(); // the first test's code-server and browser: two cores do not hold both
  let harnessServer;
  // No polling: whatever the panel shows comes from the server's pushes and state changes.
  const { page, ws } = await launchWorkbench("attached", {
    settings: { "freshLs.refreshSeconds": 0, "freshLs.terminalProxy": false },
    beforeOpen: async (root) => {
      fs.writeFileSync(path.join(root, "price.ts"), PRICE_TS);
      harnessServer = await startHarnessServer(root, "first");
    },
  });
  const panel = page.locator(".pane", { has: page.locator(".pane-header", { hasText: /agent views/i }) });
  const row = (text) => panel.locator(".monaco-list-row", { hasText: text });
  harness("observe");
  const statusItem = page.locator(".statusbar-item", { hasText: /fresh-ls|stale/ }).first();
  await statusItem.waitFor({ state: "visible" });
  await statusItem.click();
  await row(/cart\.py:8-10\s*fresh/).waitFor({ state: "visible", timeout: 30_000 });
  assert.equal(endpointPid(ws), harnessServer.pid, "the extension started a server of its own");
  log(`the extension attached to the harness's server (pid ${harnessServer.pid})`);
  // The status bar's tooltip says what the sidecar is doing: attached, to which pid.
  // (Its accessible label carries the tooltip's text.)
  const attachedLabel = new RegExp(`attached to pid ${harnessServer.pid} \\(a server a harness started\\)`);
  await waitFor("the status bar to say it is attached", async () => {
    const labels = await page.locator(".statusbar-item a, .statusbar-item").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
    return labels.some((l) => attachedLabel.test(l));
  }, 15_000);
  log("the status bar says it is attached to that pid");

  // The harness's server dies (SIGKILL: endpoint.json still names it) and the harness starts
  // it again: the extension re-attaches by itself.
  harnessServer.kill("SIGKILL");
  const second = await startHarnessServer(ws, "second");
  fs.writeFileSync(path.join(ws, "cart.py"), CART.replace("quantity * RATE", "quantity * RATE * 2"));
  await row(/cart\.py:8-10\s*changed/).waitFor({ state: "visible", timeout: 30_000 });
  await page.locator(".statusbar-item", { hasText: "1 stale" }).first().waitFor({ state: "visible" });
  assert.equal(endpointPid(ws), second.pid, "the extension did not re-attach to the harness's new server");
  log(`killed the harness's server: re-attached to its new one (pid ${second.pid}) without a click`);

  // It dies for good: after the grace period, the extension starts a sidecar of its own (the
  // endpoint file naming the dead pid is replaced), with the stored views.
  second.kill("SIGKILL");
  const own = await waitFor(
    "a sidecar of the extension's own",
    () => {
      const pid = endpointPid(ws);
      return pid && pid !== second.pid && pid !== harnessServer.pid && alive(pid) ? pid : false;
    },
    30_000,
  );
  state.serverPid = own;
  await page.locator(".statusbar-item", { hasText: "1 stale" }).first().waitFor({ state: "visible", timeout: 30_000 });
  assert.ok((environOf(own).PYTHONPATH ?? "").includes("bundled"), "the replacement is not the bundled sidecar");
  // No toast was left behind by the drops it recovered from.
  assert.equal(await page.locator(".notification-toast").count(), 0, "a toast stayed after the recovery");
  log(`the harness's server died for good: the extension started its own (pid ${own}); no toast`);
  await shot(page, "08-reattached.png");

  // ---- what the agent saw, alone: a read-only plain-text document, no diagnostics ----------
  harness("observe-ts");
  fs.rmSync(path.join(ws, "price.ts"));
  const deleted = row(/price\.ts:1-3\s*deleted/);
  await deleted.waitFor({ state: "visible", timeout: 30_000 });
  await deleted.locator(".label-name").click();
  await page.locator(".tab", { hasText: "agent-1 saw price.ts lines 1-3" }).first().waitFor({ state: "visible" });
  const viewDoc = page.locator(".editor-instance .view-lines").last();
  await expectText(viewDoc, /1 │ export function price/);
  await expectText(viewDoc, /3 │ {3}return base;/);
  await expectText(viewDoc, /as agent session agent-1 saw it \(view call_9\); now deleted/);
  // Give a language server the time it would take to report '}' expected, then look.
  await page.waitForTimeout(3000);
  await runCommand(page, "View: Focus Problems (Errors, Warnings, Infos)");
  await expectText(page.locator(".markers-panel-container, .markers-panel").first(), /No problems have been detected/);
  log("a deleted TypeScript view opens as plain text titled with whose view it is; Problems is empty");
  await shot(page, "09-view-document.png");
});

const CLAUDE = process.env.FRESH_LS_CLAUDE || path.join(REPO, ".cache", "agents", "claude-code", "node_modules", ".bin", "claude");

/** The scripted model (e2e/model.py) on 127.0.0.1: resolves with its URL and a stop(). */
async function startModel(ws, recordsFile) {
  const err = fs.openSync(path.join(ARTIFACTS, "model.log"), "w");
  const proc = spawn(PYTHON, [path.join(here, "model.py"), ws, recordsFile], { stdio: ["pipe", "pipe", err] });
  fs.closeSync(err);
  state.harnessServers.push(proc);
  const first = JSON.parse(await lines(proc.stdout).next());
  return {
    url: first.url,
    stop: () =>
      new Promise((resolve) => {
        proc.once("exit", resolve);
        proc.stdin.end();
      }),
  };
}

/** Types a command line into the focused integrated terminal. */
async function typeInTerminal(page, text) {
  const input = page.locator(".terminal-wrapper.active .xterm-helper-textarea, .xterm-helper-textarea").last();
  await input.waitFor({ state: "attached", timeout: 30_000 });
  await input.focus();
  await page.keyboard.type(text, { delay: 5 });
  await page.keyboard.press("Enter");
}

function envFile(file) {
  return Object.fromEntries(
    fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

test("an agent started in a VS Code terminal goes through the proxy and shows up", { timeout: TIMEOUT_S * 1000 }, async () => {
  await cleanup();
  assert.ok(fs.existsSync(CLAUDE), `Claude Code is missing (${CLAUDE}): run \`make agents\` in the repo root`);
  const out = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "fresh-ls-e2e-agent-")));
  let model;
  try {
    const { page, ws } = await launchWorkbench("terminal", {
      settings: { "freshLs.refreshSeconds": 0, "freshLs.terminalProxy": true },
      beforeOpen: async (root) => {
        model = await startModel(root, path.join(out, "records.json"));
        // The upstream, in the user's settings as a person would point it elsewhere.
        const file = path.join(state.tmp, "user-data", "User", "settings.json");
        const current = JSON.parse(fs.readFileSync(file, "utf8"));
        fs.writeFileSync(file, JSON.stringify({ ...current, "freshLs.proxyUpstreamAnthropic": model.url }, null, 2));
      },
    });
    const panel = page.locator(".pane", { has: page.locator(".pane-header", { hasText: /agent views/i }) });
    const row = (text) => panel.locator(".monaco-list-row", { hasText: text });

    // ---- the proxy is up and the status bar says so ---------------------------------------
    const record = path.join(ws, ".fresh-ls", "proxy.json");
    await waitFor("the terminal proxy's proxy.json", () => fs.existsSync(record), 60_000);
    const proxyUrl = JSON.parse(fs.readFileSync(record, "utf8")).url;
    assert.equal(JSON.parse(fs.readFileSync(record, "utf8")).upstream, model.url);
    const statusItem = page.locator(".statusbar-item", { hasText: /proxy/ }).first();
    await statusItem.waitFor({ state: "visible", timeout: 30_000 });
    log(`terminal proxy on: ${proxyUrl} -> ${model.url}; the status bar says so`);

    // ---- a new integrated terminal carries the proxy's base URL; a real agent runs in it -----
    const home = path.join(out, "home");
    fs.mkdirSync(home);
    const script = path.join(out, "agent.sh");
    fs.writeFileSync(
      script,
      [
        "#!/bin/sh",
        `env > '${out}/env.txt'`,
        `HOME='${home}' ANTHROPIC_API_KEY=sk-test-not-a-real-key CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \\`,
        "  DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 IS_SANDBOX=1 \\",
        `  '${CLAUDE}' -p 'What does cart.py define?' --output-format json --allowedTools Read --model claude-sonnet-4-5 \\`,
        `  > '${out}/claude.json' 2> '${out}/claude.err'`,
        `echo $? > '${out}/claude.rc'`,
        "",
      ].join("\n"),
    );
    fs.chmodSync(script, 0o755);
    await runCommand(page, "Terminal: Create New Terminal");
    await page.locator(".terminal-wrapper, .xterm").first().waitFor({ state: "visible", timeout: 30_000 });
    await typeInTerminal(page, `sh '${script}'`);
    await waitFor("the terminal's environment", () => fs.existsSync(path.join(out, "env.txt")), 30_000);
    const termEnv = envFile(path.join(out, "env.txt"));
    assert.equal(termEnv.ANTHROPIC_BASE_URL, proxyUrl, "the new terminal's ANTHROPIC_BASE_URL is not the proxy's");
    assert.match(termEnv.OPENAI_BASE_URL ?? "", /^http:\/\/127\.0\.0\.1:\d+\/fresh-[A-Za-z0-9_-]+$/);
    log(`the new terminal has ANTHROPIC_BASE_URL=${termEnv.ANTHROPIC_BASE_URL}`);
    await waitFor("Claude Code to finish", () => fs.existsSync(path.join(out, "claude.rc")), 180_000, 500);
    const rc = fs.readFileSync(path.join(out, "claude.rc"), "utf8").trim();
    assert.equal(rc, "0", `claude exited ${rc}: ${fs.readFileSync(path.join(out, "claude.err"), "utf8")}`);
    await shot(page, "10-terminal-agent.png");

    // ---- an upstream change restarts the proxy on the same ports: the open terminal's URLs
    // still reach it (the ports and secret are kept in the state dir) -------------------------
    const kept = JSON.parse(fs.readFileSync(path.join(ws, ".fresh-ls", "terminal-proxy.json"), "utf8"));
    assert.equal(`http://127.0.0.1:${kept.anthropicPort}/fresh-${kept.secret}`, proxyUrl);
    assert.equal((fs.statSync(path.join(ws, ".fresh-ls", "terminal-proxy.json")).mode & 0o777).toString(8), "600");
    const firstProxyPid = JSON.parse(fs.readFileSync(record, "utf8")).pid;
    await setSetting(page, "freshLs.proxyUpstreamAnthropic", `${model.url}/`);
    await waitFor("the proxy to restart with the new upstream", () => {
      try {
        const r = JSON.parse(fs.readFileSync(record, "utf8"));
        return r.pid !== firstProxyPid && r.upstream === `${model.url}/` && alive(r.pid);
      } catch {
        return false;
      }
    }, 60_000);
    assert.equal(JSON.parse(fs.readFileSync(record, "utf8")).url, proxyUrl, "the restarted proxy has another base URL");
    await runCommand(page, "Terminal: Focus Terminal");
    await typeInTerminal(page, `curl -s -o /dev/null -w '%{http_code}' "$ANTHROPIC_BASE_URL/v1/models" > '${out}/curl.txt'`);
    await waitFor("curl in the open terminal", () => fs.existsSync(path.join(out, "curl.txt")) && fs.readFileSync(path.join(out, "curl.txt"), "utf8").length > 0, 30_000);
    const code = fs.readFileSync(path.join(out, "curl.txt"), "utf8").trim();
    assert.notEqual(code, "000", "the terminal opened before the upstream change reaches no proxy");
    assert.notEqual(code, "403", "the restarted proxy refuses the terminal's base URL (another secret)");
    log(`upstream changed: the proxy restarted on the same URL; the open terminal's $ANTHROPIC_BASE_URL answers ${code}`);

    // ---- its session and view are in the panel; an edit in the editor makes the view stale ---
    const sessions = harness("status");
    const names = Object.keys(sessions);
    assert.equal(names.length, 1, `sessions: ${names.join(", ")}`);
    const [session] = names;
    const view = sessions[session].find((v) => v.path === "cart.py");
    assert.ok(view, `no view of cart.py in ${session}: ${JSON.stringify(sessions[session])}`);
    assert.equal(view.status, "fresh");
    await statusItem.click();
    const span = view.observed.firstLine === view.observed.lastLine ? `${view.observed.firstLine}` : `${view.observed.firstLine}-${view.observed.lastLine}`;
    const viewRow = (status) => row(new RegExp(`cart\\.py:${span}\\s*${status}`));
    await viewRow("fresh").waitFor({ state: "visible", timeout: 30_000 });
    // Its row is named by the agent and when it started (`claude-code · started 14:05`), the
    // tooltip carries the full id.
    assert.match(session, /^claude-code-session-id:/, `Claude Code's session is named ${session}`);
    const shortName = /^claude-code · started \d\d:\d\d/;
    await row(shortName).first().waitFor({ state: "visible" });
    assert.equal(await row(session).count(), 0, "the panel spells out the whole session id");
    log(`the agent's session ${session} is in the panel as “${shortName}” with view ${view.viewId} of cart.py`);
    await quickOpen(page, "cart.py");
    await page.locator(".monaco-editor .view-lines", { hasText: "class Cart" }).first().click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("End");
    await page.keyboard.type(" * 2");
    await page.keyboard.press("Control+S");
    await viewRow("changed").waitFor({ state: "visible", timeout: 30_000 });
    const after = harness("status")[session].find((v) => v.viewId === view.viewId);
    assert.equal(after.status, "changed");
    assert.equal(after.units[0].changedBy, "editor");
    log(`an edit saved in the editor: ${view.viewId} is changed (by the editor) in the panel`);
    await shot(page, "11-terminal-agent-stale.png");

    // ---- a kept port taken by another process: the proxies move, and the extension names the
    // terminal that still holds the old URL and relaunches it on request ------------------------
    await runCommand(page, "fresh-ls: Stop Routing Terminal Agents Through the Proxy");
    await waitFor("the proxy to stop", () => !fs.existsSync(record), 30_000);
    const squatter = net.createServer();
    await new Promise((resolve, reject) => {
      squatter.once("error", reject);
      squatter.listen(kept.anthropicPort, "127.0.0.1", resolve);
    });
    try {
      await runCommand(page, "fresh-ls: Route Agents in New Terminals Through the Proxy");
      const moved = page.locator(".notification-toast", { hasText: "had to move to other ports" }).first();
      await moved.waitFor({ state: "visible", timeout: 60_000 });
      await expectText(moved, /Terminal “[^”]+” still points at the old ones/);
      const movedUrl = JSON.parse(fs.readFileSync(record, "utf8")).url;
      assert.notEqual(movedUrl, proxyUrl);
      await shot(page, "10b-ports-moved.png");
      await moved.locator(".monaco-button", { hasText: "Relaunch Terminal" }).click();
      await page.waitForTimeout(3000);
      await runCommand(page, "Terminal: Focus Terminal");
      await typeInTerminal(page, `env > '${out}/env-relaunched.txt'`);
      await waitFor("the relaunched terminal's environment", () => fs.existsSync(path.join(out, "env-relaunched.txt")), 30_000);
      assert.equal(envFile(path.join(out, "env-relaunched.txt")).ANTHROPIC_BASE_URL, movedUrl, "the relaunched terminal does not hold the new URL");
      log(`a kept port in use: the proxies moved to ${movedUrl}; the open terminal was named and, relaunched, holds the new URL`);
    } finally {
      squatter.close();
    }

    // ---- turned off: the proxy stops, new terminals get their own environment back ---------
    await runCommand(page, "fresh-ls: Stop Routing Terminal Agents Through the Proxy");
    await waitFor("the proxy to stop", () => !fs.existsSync(record), 30_000);
    await page.locator(".statusbar-item", { hasText: /proxy/ }).first().waitFor({ state: "hidden", timeout: 15_000 });
    await runCommand(page, "Terminal: Create New Terminal");
    await typeInTerminal(page, `env > '${out}/env-off.txt'`);
    await waitFor("the second terminal's environment", () => fs.existsSync(path.join(out, "env-off.txt")), 30_000);
    const offEnv = envFile(path.join(out, "env-off.txt"));
    assert.equal(offEnv.ANTHROPIC_BASE_URL, undefined, "a terminal opened after turning it off still has the proxy's URL");
    assert.equal(offEnv.OPENAI_BASE_URL, undefined);
    log("turned off: the proxy stopped, the status bar dropped it, a new terminal has no base URL");
  } finally {
    await model?.stop();
    fs.rmSync(out, { recursive: true, force: true });
  }
});

/** Reads a stream line by line: `await next()` gives the next one (rejects after 30 s). */
function lines(stream) {
  let buffer = "";
  const waiting = [];
  const ready = [];
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffer += chunk;
    for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      const w = waiting.shift();
      if (w) w(line);
      else ready.push(line);
    }
  });
  return {
    next: () =>
      ready.length > 0
        ? Promise.resolve(ready.shift())
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error("no line from the held harness in 30 s")), 30_000);
            waiting.push((line) => {
              clearTimeout(timer);
              resolve(line);
            });
          }),
  };
}

/** Clicks a button of the panel's title bar (shown while the pointer is over the panel). A
 * container with one view has no pane header: its buttons are in the side bar's title. */
async function titleAction(page, pane, label) {
  const header = (await pane.locator(".pane-header").isVisible()) ? pane.locator(".pane-header") : page.locator(".part.sidebar .composite.title");
  await header.hover();
  const button = header.locator(`.action-label[aria-label^="${label}"]`).first();
  await button.waitFor({ state: "visible", timeout: 10_000 });
  await button.click();
}

/** Clicks one of a tree row's inline buttons (shown while the pointer is over the row). */
async function rowAction(row, label) {
  await row.first().hover();
  const button = row.first().locator(`.actions .action-label[aria-label^="${label}"]`).first();
  await button.waitFor({ state: "visible", timeout: 10_000 });
  await button.click();
}

/** The 1-based lines of the active editor that carry the fresh-ls gutter mark (its icon is
 * media/gutter-stale.svg): each mark's line is the line number drawn at its height. */
async function gutterLines(page) {
  return page.evaluate(() => {
    const editor = [...document.querySelectorAll(".editor-instance .monaco-editor")].find(
      (e) => e.offsetParent !== null && !e.closest(".monaco-diff-editor"),
    );
    if (!editor) return [];
    const numbers = [...editor.querySelectorAll(".margin-view-overlays .line-numbers")].map((n) => ({
      line: Number(n.textContent.trim()),
      top: n.getBoundingClientRect().top,
    }));
    const lines = [];
    for (const el of editor.querySelectorAll(".glyph-margin-widgets > div, .margin-view-overlays .cgmr")) {
      if (!getComputedStyle(el).backgroundImage.includes("gutter-stale")) continue;
      const top = el.getBoundingClientRect().top;
      const nearest = numbers.reduce((best, n) => (Math.abs(n.top - top) < Math.abs(best.top - top) ? n : best), { line: -1, top: Infinity });
      lines.push(nearest.line);
    }
    return [...new Set(lines)].sort((a, b) => a - b);
  });
}

/** The text of the visible editor's lines, with what decorations add at their ends. */
async function editorTexts(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".editor-instance .monaco-editor .view-line")].map((line) =>
      [line.innerText, ...[...line.querySelectorAll("*")].map((n) => getComputedStyle(n, "::after").content)].join(" ").replace(/\u00a0/g, " "),
    ),
  );
}

/** A point inside a locator's box, `fx` of the way across. */
async function centerOf(locator, fx = 0.5) {
  const box = await locator.boundingBox();
  return [box.x + Math.min(box.width * fx, 200), box.y + box.height / 2];
}

/** Opens a workspace file through Quick Open (Ctrl+P), as a person would. */
async function quickOpen(page, name) {
  await page.keyboard.press("Control+P");
  const quickInput = page.locator(".quick-input-widget input");
  await quickInput.waitFor({ state: "visible" });
  await quickInput.fill(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ state: "visible" });
  await page.keyboard.press("Enter");
}

/** Runs a command from the palette. A refresh elsewhere may steal focus and close the
 * palette as it opens, so each step is retried a few times. */
async function runCommand(page, title) {
  const input = page.locator(".quick-input-widget input");
  const item = page.locator(".quick-input-list .monaco-list-row", { hasText: title.split(": ").pop() }).first();
  let lastError;
  for (let attempt = 1; attempt <= 4; attempt++) {
    try {
      await page.keyboard.press("F1");
      await input.waitFor({ state: "visible", timeout: 5000 });
      await input.fill(`>${title}`, { timeout: 5000 });
      await item.waitFor({ state: "visible", timeout: 5000 });
      await input.press("Enter", { timeout: 5000 });
      return;
    } catch (err) {
      lastError = err;
      log(`palette attempt ${attempt} for “${title}” failed: ${String(err.message).split("\n")[0]}`);
      await page.keyboard.press("Escape").catch(() => undefined);
      await page.waitForTimeout(500);
    }
  }
  throw lastError;
}

/** Sets a user setting in the Settings editor (left open: the screenshot shows it). */
async function setSetting(page, key, value) {
  const editor = page.locator(".settings-editor");
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("Control+Comma");
    try {
      await editor.waitFor({ state: "visible", timeout: 5000 });
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
  const search = editor.locator(".settings-header .suggest-input-container .monaco-editor").first();
  await search.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.type(key);
  const input = editor.locator(`.settings-tree-container input[aria-label="${key}"]`).first();
  await input.waitFor({ state: "visible" });
  await input.fill(value);
  await input.press("Tab");
  // The Settings editor writes after a short delay; wait until the file says so.
  const settingsFile = path.join(state.tmp, "user-data", "User", "settings.json");
  await waitFor(`${key} in settings.json`, () => {
    try {
      return JSON.parse(fs.readFileSync(settingsFile, "utf8"))[key] === value;
    } catch {
      return false;
    }
  }, 10_000);
}

async function expectText(locator, pattern, timeoutMs = 15_000) {
  let last = "";
  await waitFor(
    `text ${pattern}`,
    async () => {
      last = ((await locator.first().innerText().catch(() => "")) || "").replace(/\u00a0/g, " ");
      return pattern.test(last);
    },
    timeoutMs,
  ).catch((err) => {
    throw new Error(`${err.message}; last text: ${JSON.stringify(last.slice(0, 400))}`);
  });
}

/** The argv of a running process (Linux). */
function cmdlineOf(pid) {
  return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
}

test("in Restricted Mode only the bundled sidecar runs and the folder's settings are ignored; trusting it applies them", { timeout: TIMEOUT_S * 1000 }, async () => {
  await cleanup(); // an earlier test's code-server and browser
  let marker;
  // A repository that names its own interpreter: a .venv/bin/python that leaves a marker
  // (then runs the clone's Python, so the trusted case has a sidecar), picked by its
  // .vscode/settings.json, with server arguments and an upstream of its own.
  const { page, ws, extensions } = await launchWorkbench("restricted", {
    restricted: true,
    settings: { "freshLs.terminalProxy": false },
    beforeOpen: async (root) => {
      marker = path.join(path.dirname(root), "venv-python-ran");
      const venvPython = path.join(root, ".venv", "bin", "python");
      fs.mkdirSync(path.dirname(venvPython), { recursive: true });
      fs.writeFileSync(venvPython, `#!/bin/sh\necho "$@" >> '${marker}'\nexec '${PYTHON}' "$@"\n`, { mode: 0o755 });
      fs.mkdirSync(path.join(root, ".vscode"));
      fs.writeFileSync(
        path.join(root, ".vscode", "settings.json"),
        JSON.stringify({
          "freshLs.python": "${workspaceFolder}/.venv/bin/python",
          "freshLs.serverArgs": ["--log-level", "DEBUG"],
          "freshLs.proxyUpstreamAnthropic": "http://127.0.0.1:9",
          "freshLs.proxyUpstreamOpenai": "http://127.0.0.1:9/v1",
        }),
      );
    },
  });
  const endpointFile = path.join(ws, ".fresh-ls", "endpoint.json");
  const endpointPid = () => {
    try {
      return JSON.parse(fs.readFileSync(endpointFile, "utf8")).pid;
    } catch {
      return undefined;
    }
  };

  // ---- Restricted Mode: the bundled sidecar, none of the folder's settings -------------------
  const restrictedPid = await waitFor("the sidecar's endpoint.json in Restricted Mode", () => endpointPid(), 60_000);
  state.serverPid = restrictedPid;
  const env = environOf(restrictedPid);
  assert.ok((env.PYTHONPATH ?? "").startsWith(path.join(extensions, "fresh-ls.fresh-ls-")), `not the bundled sidecar: PYTHONPATH=${env.PYTHONPATH}`);
  const argv = cmdlineOf(restrictedPid);
  assert.ok(argv.includes("-P"), `the sidecar runs without -P: ${argv.join(" ")}`);
  assert.ok(!argv.includes("DEBUG"), `the folder's freshLs.serverArgs reached the sidecar: ${argv.join(" ")}`);
  assert.ok(!fs.existsSync(marker), "the folder's .venv/bin/python ran in Restricted Mode");
  log(`Restricted Mode: the bundled sidecar (pid ${restrictedPid}) runs; the folder's .venv and serverArgs are ignored`);
  const statusItem = page.locator(".statusbar-item", { hasText: /fresh-ls|stale/ }).first();
  await statusItem.waitFor({ state: "visible" });
  await statusItem.click();
  const panel = page.locator(".pane", { has: page.locator(".pane-header", { hasText: /agent views/i }) });
  const restrictedRow = panel.locator(".monaco-list-row", { hasText: "Restricted Mode" });
  await restrictedRow.waitFor({ state: "visible", timeout: 30_000 });
  await expectText(restrictedRow, /bundled sidecar only, this folder's fresh-ls settings ignored/);
  // ... and the bundled sidecar serves: the panel leaves "starting" (the welcome text is under the row).
  await waitFor("the restricted folder's sidecar to run", async () => (await panel.locator(".monaco-list-row", { hasText: "starting the sidecar" }).count()) === 0, 30_000);
  await page.locator(".statusbar-item", { hasText: /fresh-ls starting/ }).first().waitFor({ state: "hidden", timeout: 30_000 });
  log("the panel says the folder is restricted and what that turns off");
  await shot(page, "12-restricted-mode.png");

  // ---- trusted: the same settings apply --------------------------------------------------------
  await runCommand(page, "Workspaces: Manage Workspace Trust");
  const trustButton = page.locator(".workspace-trust-editor .monaco-button", { hasText: /^Trust( Folder)?$/ }).first();
  await trustButton.waitFor({ state: "visible", timeout: 15_000 });
  await trustButton.click();
  const trustedPid = await waitFor(
    "a sidecar started with the folder's settings once it is trusted",
    () => {
      const pid = endpointPid();
      return pid && pid !== restrictedPid && alive(pid) ? pid : false;
    },
    60_000,
  );
  state.serverPid = trustedPid;
  assert.ok(fs.existsSync(marker), "the trusted folder's freshLs.python (its .venv/bin/python) did not run");
  const trustedArgv = cmdlineOf(trustedPid);
  assert.ok(trustedArgv.includes("DEBUG"), `the trusted folder's serverArgs are missing: ${trustedArgv.join(" ")}`);
  assert.ok(trustedArgv.includes("-P"), `the sidecar runs without -P: ${trustedArgv.join(" ")}`);
  await statusItem.click();
  await waitFor("the Restricted Mode row to go", async () => (await restrictedRow.count()) === 0, 30_000);
  log(`trusted: the folder's .venv/bin/python runs the sidecar (pid ${trustedPid}) with its serverArgs; the row is gone`);
});
