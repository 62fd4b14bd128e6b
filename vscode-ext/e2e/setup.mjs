// Installs what the end-to-end test needs, idempotently and offline-safe (only the Debian and
// npm registries are used): Debian's chromium and ripgrep, and code-server@4.100.3 under
// vscode-ext/.e2e/code-server (git-ignored). The recipe is the one in shared/design/NOTES.md:
// @vscode/ripgrep would download a ripgrep build from the internet at install time, so its
// download cache is seeded with Debian's `rg` first.
//
//   node e2e/setup.mjs          # prints what it installed and how long it took
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const CODE_SERVER_VERSION = "4.100.3";
// The @vscode/ripgrep version code-server 4.100.3 depends on, and the build it asks for.
const RIPGREP_PKG_VERSION = "1.15.11";
const RIPGREP_ASSET = "ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz";

const here = path.dirname(fileURLToPath(import.meta.url));
export const EXT_DIR = path.resolve(here, "..");
export const E2E_DIR = path.join(EXT_DIR, ".e2e");
export const CODE_SERVER_DIR = path.join(E2E_DIR, "code-server");
export const CODE_SERVER_BIN = path.join(CODE_SERVER_DIR, "node_modules", ".bin", "code-server");
export const CHROMIUM = "/usr/bin/chromium";

function log(msg) {
  process.stdout.write(`e2e setup: ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  log(`$ ${cmd} ${args.join(" ")}`);
  const res = spawnSync(cmd, args, { stdio: "inherit", timeout: 15 * 60 * 1000, ...opts });
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${res.status}${res.signal ? `, ${res.signal}` : ""})`);
  }
}

function aptInstall(packages) {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const apt = (args) =>
    process.getuid?.() === 0 ? run("apt-get", args, { env }) : run("sudo", ["-n", "apt-get", ...args], { env });
  try {
    apt(["install", "-y", "--no-install-recommends", ...packages]);
  } catch {
    // A machine that never ran `apt-get update` may not know the packages yet.
    apt(["update"]);
    apt(["install", "-y", "--no-install-recommends", ...packages]);
  }
}

// Debian packages: the browser, rg for the ripgrep seed, and the headers code-server's native
// modules build against (kerberos needs libkrb5-dev, native-keymap libxkbfile-dev and libx11-dev;
// NOTES.md names only chromium and ripgrep, but a machine without the headers fails at
// `kerberos: gssapi/gssapi.h: No such file or directory`).
const DEBIAN_PACKAGES = [
  "chromium",
  "ripgrep",
  "build-essential",
  "pkg-config",
  "libkrb5-dev",
  "libxkbfile-dev",
  "libx11-dev",
  "libsecret-1-dev",
];

function debInstalled(name) {
  const res = spawnSync("dpkg-query", ["-W", "-f=${Status}", name], { encoding: "utf8" });
  return res.status === 0 && res.stdout.includes("install ok installed");
}

function ensureDebianPackages() {
  const missing = DEBIAN_PACKAGES.filter((p) => !debInstalled(p));
  if (missing.length === 0) {
    log(`Debian packages already installed: ${DEBIAN_PACKAGES.join(" ")}`);
    return;
  }
  aptInstall(missing);
}

function seedRipgrepCache() {
  const cacheDir = path.join(os.tmpdir(), `vscode-ripgrep-cache-${RIPGREP_PKG_VERSION}`);
  const tarball = path.join(cacheDir, RIPGREP_ASSET);
  if (fs.existsSync(tarball)) return;
  fs.mkdirSync(cacheDir, { recursive: true });
  const rg = execFileSync("sh", ["-c", "command -v rg"]).toString().trim();
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), "rg-seed-"));
  fs.copyFileSync(rg, path.join(stage, "rg"));
  fs.chmodSync(path.join(stage, "rg"), 0o755);
  run("tar", ["-czf", tarball, "-C", stage, "rg"]);
  fs.rmSync(stage, { recursive: true, force: true });
  log(`seeded ${tarball} with ${rg}`);
}

function ensureCodeServer() {
  if (fs.existsSync(CODE_SERVER_BIN)) {
    const pkg = path.join(CODE_SERVER_DIR, "node_modules", "code-server", "package.json");
    const version = JSON.parse(fs.readFileSync(pkg, "utf8")).version;
    if (version === CODE_SERVER_VERSION) {
      log(`code-server ${version} already installed in ${CODE_SERVER_DIR}`);
      return;
    }
  }
  seedRipgrepCache();
  fs.mkdirSync(CODE_SERVER_DIR, { recursive: true });
  fs.writeFileSync(
    path.join(CODE_SERVER_DIR, "package.json"),
    JSON.stringify({ name: "fresh-ls-e2e-code-server", private: true }, null, 2) + "\n",
  );
  run("npm", ["install", "--no-audit", "--no-fund", "--no-save", `code-server@${CODE_SERVER_VERSION}`], {
    cwd: CODE_SERVER_DIR,
    env: { ...process.env, npm_config_unsafe_perm: "true", npm_config_yes: "true" },
  });
  if (!fs.existsSync(CODE_SERVER_BIN)) throw new Error(`code-server did not install: ${CODE_SERVER_BIN} is missing`);
}

export function setup() {
  const t0 = Date.now();
  ensureDebianPackages();
  ensureCodeServer();
  log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    setup();
  } catch (err) {
    process.stderr.write(`e2e setup failed: ${err.message}\n`);
    process.exit(1);
  }
}
