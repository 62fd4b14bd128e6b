// The opt-in terminal proxy (`freshLs.terminalProxy`): one `fresh_ls proxies` process per
// workspace folder whose sidecar runs, and VS Code's environment-variable collection pointing
// the base URLs of new integrated terminals at it. Off (the default) means no process and an
// empty collection: terminals get their own environment back.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { STATE_DIR } from "./config";
import { logLine } from "./labels";
import {
  choosePorts,
  parsePortsRecord,
  PORT_IN_USE_EXIT,
  PORTS_FILE,
  portArgs,
  recordOf,
  relaunchMessage,
  sameRecord,
  SECRET_VARIABLE,
  staleTerminals,
  type PortsRecord,
} from "./proxyports";
import type { FolderServer } from "./server";
import type { Interpreter } from "./launch";
import { settings } from "./settings";
import {
  collectionDescription,
  parseProxiesLine,
  proxiesArgs,
  terminalVariables,
  type ProxyUrls,
} from "./terminalenv";

const FIRST_LINE_TIMEOUT_MS = 30_000;
/** Restarts of a proxy that exits unasked, per folder, before it is left stopped. */
const MAX_RESTARTS = 3;

interface Running {
  proc: ChildProcessWithoutNullStreams;
  urls?: ProxyUrls;
  stopping: boolean;
}

/** The folder's state dir (where its ports are kept). */
export type StateDirOf = (server: FolderServer) => string;

export class TerminalProxies implements vscode.Disposable {
  private readonly running = new Map<string, Running>();
  private readonly restarts = new Map<string, number>();
  private enabled = false;
  /** The Anthropic base URL each terminal was opened with, per folder key (what its
   * environment holds; terminals open before this window's proxy are taken to hold the
   * kept URL, as a reloaded window's terminals do). */
  private readonly given = new Map<vscode.Terminal, Map<string, string>>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly collection: vscode.GlobalEnvironmentVariableCollection,
    private readonly output: vscode.OutputChannel,
    private readonly onChange: () => void,
    private readonly stateDirOf: StateDirOf = (s) => path.join(s.root, STATE_DIR),
  ) {
    // Not carried over by VS Code itself: the extension sets it again once its proxy listens
    // (on the ports it kept, so terminals a reload restores still reach it).
    collection.persistent = false;
    collection.clear();
    this.subscriptions.push(
      vscode.window.onDidOpenTerminal((t) => this.given.set(t, this.currentUrls())),
      vscode.window.onDidCloseTerminal((t) => this.given.delete(t)),
    );
  }

  private currentUrls(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [key, r] of this.running) if (r.urls) out.set(key, r.urls.anthropic);
    return out;
  }

  get on(): boolean {
    return this.enabled;
  }

  /** Folders whose proxies are up, with their URLs. */
  active(): { name: string; urls: ProxyUrls }[] {
    const out: { name: string; urls: ProxyUrls }[] = [];
    for (const [key, r] of this.running) {
      const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(key));
      if (r.urls) out.push({ name: folder?.name ?? key, urls: r.urls });
    }
    return out;
  }

  /** Stops every proxy and starts it again (new upstreams): on the same ports with the same
   * secret, so terminals keep working; the collection is left as it is meanwhile. */
  async restart(servers: readonly FolderServer[]): Promise<void> {
    await Promise.all(Array.from(this.running.keys(), (k) => this.stop(k, true)));
    await this.sync(this.enabled, servers);
  }

  /** Brings the processes and the collection in line with the setting and the servers. */
  async sync(enabled: boolean, servers: readonly FolderServer[]): Promise<void> {
    const was = this.enabled;
    this.enabled = enabled;
    if (!enabled) {
      if (was) this.log("terminal proxy off: new terminals get their own environment back");
      this.restarts.clear();
      await Promise.all(Array.from(this.running.keys(), (k) => this.stop(k)));
      this.collection.clear();
      this.onChange();
      return;
    }
    const wanted = new Map(servers.filter((s) => s.state === "running").map((s) => [s.key, s]));
    for (const key of Array.from(this.running.keys())) {
      if (!servers.some((s) => s.key === key)) await this.stop(key);
    }
    await Promise.all(Array.from(wanted.values(), (s) => (this.running.has(s.key) ? undefined : this.start(s, servers))));
  }

  private async start(server: FolderServer, servers: readonly FolderServer[]): Promise<void> {
    const interp = await server.python();
    if (!interp) {
      this.log(`${server.folder.name}: no interpreter runs fresh_ls, so no terminal proxy (see the lines above)`);
      return;
    }
    if (!this.enabled || this.running.has(server.key)) return;
    const recordFile = path.join(this.stateDirOf(server), PORTS_FILE);
    const kept = parsePortsRecord(await fsp.readFile(recordFile, "utf8").catch(() => undefined));
    let ports = choosePorts(kept, newSecret);
    let outcome = await this.launch(server, servers, interp, ports);
    if (outcome === "portInUse" && ports.reused) {
      this.log(`${server.folder.name}: the terminal proxy's ports ${ports.anthropicPort} and ${ports.openaiPort} are in use: taking others`);
      ports = choosePorts(kept, newSecret, true);
      outcome = await this.launch(server, servers, interp, ports);
    }
    const entry = this.running.get(server.key);
    if (outcome !== "up" || !entry?.urls) return;
    const record = recordOf(entry.urls, ports.secret);
    if (record && !sameRecord(record, kept)) await writePrivate(recordFile, record, (m) => this.log(m));
    if (kept && record && (kept.anthropicPort !== record.anthropicPort || kept.openaiPort !== record.openaiPort)) {
      void this.offerRelaunch(server, kept, entry.urls.anthropic);
    }
  }

  /** Terminals given the folder's old base URL: offered a relaunch, named. */
  private async offerRelaunch(server: FolderServer, kept: PortsRecord, current: string): Promise<void> {
    const oldUrl = `http://127.0.0.1:${kept.anthropicPort}/fresh-${kept.secret}`;
    const terminals = vscode.window.terminals.map((t) => ({
      terminal: t,
      name: t.name,
      // Opened before this window's proxy came up: it holds what was kept (a restored one).
      anthropicUrl: this.given.has(t) ? this.given.get(t)?.get(server.key) : oldUrl,
    }));
    const stale = staleTerminals(terminals, current);
    if (stale.length === 0) return;
    const message = relaunchMessage(server.folder.name, stale.map((t) => t.name));
    this.log(message);
    const relaunch = stale.length === 1 ? "Relaunch Terminal" : `Relaunch ${stale.length} Terminals`;
    const choice = await vscode.window.showWarningMessage(message, relaunch);
    if (choice !== relaunch) return;
    for (const { terminal } of stale) {
      terminal.show(false);
      await vscode.commands.executeCommand("workbench.action.terminal.relaunch");
      this.given.set(terminal, this.currentUrls());
    }
  }

  /** One start of the process: "up" once it said where it listens. */
  private async launch(
    server: FolderServer,
    servers: readonly FolderServer[],
    interp: Interpreter,
    ports: { anthropicPort: number; openaiPort: number; secret: string },
  ): Promise<"up" | "portInUse" | "failed"> {
    const config = settings(server.folder);
    const args = [
      ...proxiesArgs(server.root, { anthropic: config.proxyUpstreamAnthropic, openai: config.proxyUpstreamOpenai }),
      ...portArgs(ports),
    ];
    const proc = spawn(interp.command, args, {
      cwd: server.root,
      env: { ...process.env, PYTHONUNBUFFERED: "1", ...interp.env, [SECRET_VARIABLE]: ports.secret },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const entry: Running = { proc, stopping: false };
    this.running.set(server.key, entry);
    let exitCode: number | null = null;
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (chunk: string) => {
      for (const line of chunk.split("\n").filter(Boolean)) this.log(`${server.folder.name}: proxy: ${line}`);
    });
    proc.on("error", (err) => this.log(`${server.folder.name}: proxy did not start: ${err.message}`));
    proc.on("exit", (code, signal) => {
      exitCode = code;
      if (this.running.get(server.key) !== entry) return;
      this.running.delete(server.key);
      if (entry.stopping || !entry.urls) return; // not up yet: start() decides what follows
      const n = (this.restarts.get(server.key) ?? 0) + 1;
      this.restarts.set(server.key, n);
      const why = signal ? `signal ${signal}` : `exit code ${String(code)}`;
      if (this.enabled && n <= MAX_RESTARTS) {
        // The same ports come back: the collection keeps pointing at them meanwhile.
        this.log(`${server.folder.name}: the terminal proxy stopped (${why}): starting it again (try ${n})`);
        setTimeout(() => void this.sync(this.enabled, servers), 1000 * n);
      } else {
        this.collection.getScoped({ workspaceFolder: server.folder }).clear();
        if (this.enabled) {
          this.log(`${server.folder.name}: the terminal proxy stopped (${why}) ${n - 1} times: left off`);
          void vscode.window.showWarningMessage(
            `fresh-ls: the terminal proxy for ${server.folder.name} keeps stopping; new terminals are not routed through it. See the “fresh-ls” output, then run “fresh-ls: Restart Server”.`,
          );
        }
      }
      this.onChange();
    });
    const urls = await firstLine(proc, FIRST_LINE_TIMEOUT_MS).then(parseProxiesLine, () => undefined);
    if (this.running.get(server.key) !== entry) {
      return exitCode === PORT_IN_USE_EXIT ? "portInUse" : "failed";
    }
    if (!urls) {
      this.log(`${server.folder.name}: the terminal proxy did not say where it listens; stopping it`);
      await this.stop(server.key);
      return "failed";
    }
    entry.urls = urls;
    const scoped = this.collection.getScoped({ workspaceFolder: server.folder });
    scoped.description = collectionDescription(server.folder.name);
    for (const [name, value] of Object.entries(terminalVariables(urls))) scoped.replace(name, value);
    this.log(
      `${server.folder.name}: terminal proxy on (pid ${urls.pid ?? proc.pid}): terminals get ANTHROPIC_BASE_URL=${urls.anthropic} (to ${urls.anthropicUpstream}) and OPENAI_BASE_URL=${urls.openai} (to ${urls.openaiUpstream}), the same after restarts`,
    );
    this.onChange();
    return "up";
  }

  /** `keepEnv`: a restart on the same ports follows, so terminals keep the URLs. */
  private async stop(key: string, keepEnv = false): Promise<void> {
    const entry = this.running.get(key);
    if (!entry) return;
    entry.stopping = true;
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(key));
    if (folder && !keepEnv) this.collection.getScoped({ workspaceFolder: folder }).clear();
    const exited = new Promise<void>((r) => entry.proc.once("exit", () => r()));
    entry.proc.stdin.end(); // --exit-with-stdin
    const timer = setTimeout(() => entry.proc.kill("SIGTERM"), 3000);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 6000))]);
    clearTimeout(timer);
    if (entry.proc.exitCode === null && entry.proc.signalCode === null) entry.proc.kill("SIGKILL");
    if (this.running.get(key) === entry) this.running.delete(key);
  }

  private log(message: string): void {
    this.output.appendLine(logLine(message));
  }

  dispose(): void {
    this.enabled = false;
    for (const d of this.subscriptions) d.dispose();
    for (const entry of this.running.values()) {
      entry.stopping = true;
      entry.proc.stdin.end();
      entry.proc.kill("SIGTERM");
    }
    this.running.clear();
    this.collection.clear();
  }
}

/** 144 random bits, URL-safe: the secret of the base URLs (kept with the ports). */
function newSecret(): string {
  return randomBytes(18).toString("base64url");
}

/** Writes the record with mode 0600 (it holds the secret), replacing it whole. */
async function writePrivate(file: string, record: PortsRecord, log: (m: string) => void): Promise<void> {
  try {
    await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    await fsp.writeFile(tmp, JSON.stringify(record), { mode: 0o600 });
    await fsp.rename(tmp, file);
  } catch (err) {
    log(`cannot keep the terminal proxy's ports in ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The first line a process writes to stdout (rejects on exit or timeout). */
function firstLine(proc: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => done(new Error("timed out")), timeoutMs);
    const onData = (chunk: string) => {
      buffer += chunk;
      const at = buffer.indexOf("\n");
      if (at >= 0) done(undefined, buffer.slice(0, at));
    };
    const onExit = () => done(new Error("exited"));
    function done(err?: Error, line?: string) {
      clearTimeout(timer);
      proc.stdout.off("data", onData);
      proc.off("exit", onExit);
      // Later output is drained, so the process never blocks on a full pipe.
      proc.stdout.resume();
      if (err) reject(err);
      else resolve(line ?? "");
    }
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", onData);
    proc.once("exit", onExit);
  });
}
