// The opt-in terminal proxy (`freshLs.terminalProxy`): one `fresh_ls proxies` process per
// workspace folder whose sidecar runs, and VS Code's environment-variable collection pointing
// the base URLs of new integrated terminals at it. Off (the default) means no process and an
// empty collection: terminals get their own environment back.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as vscode from "vscode";
import { logLine } from "./labels";
import type { FolderServer } from "./server";
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

export class TerminalProxies implements vscode.Disposable {
  private readonly running = new Map<string, Running>();
  private readonly restarts = new Map<string, number>();
  private enabled = false;

  constructor(
    private readonly collection: vscode.GlobalEnvironmentVariableCollection,
    private readonly output: vscode.OutputChannel,
    private readonly onChange: () => void,
  ) {
    // Base URLs name ports of processes that end with this window: never carried over.
    collection.persistent = false;
    collection.clear();
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
    const config = settings(server.folder);
    const args = proxiesArgs(server.root, { anthropic: config.proxyUpstreamAnthropic, openai: config.proxyUpstreamOpenai });
    const proc = spawn(interp.command, args, {
      cwd: server.root,
      env: { ...process.env, PYTHONUNBUFFERED: "1", ...interp.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const entry: Running = { proc, stopping: false };
    this.running.set(server.key, entry);
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (chunk: string) => {
      for (const line of chunk.split("\n").filter(Boolean)) this.log(`${server.folder.name}: proxy: ${line}`);
    });
    proc.on("error", (err) => this.log(`${server.folder.name}: proxy did not start: ${err.message}`));
    proc.on("exit", (code, signal) => {
      if (this.running.get(server.key) !== entry) return;
      this.running.delete(server.key);
      this.collection.getScoped({ workspaceFolder: server.folder }).clear();
      this.onChange();
      if (entry.stopping) return;
      const n = (this.restarts.get(server.key) ?? 0) + 1;
      this.restarts.set(server.key, n);
      const why = signal ? `signal ${signal}` : `exit code ${String(code)}`;
      if (this.enabled && n <= MAX_RESTARTS) {
        this.log(`${server.folder.name}: the terminal proxy stopped (${why}): starting it again (try ${n})`);
        setTimeout(() => void this.sync(this.enabled, servers), 1000 * n);
      } else if (this.enabled) {
        this.log(`${server.folder.name}: the terminal proxy stopped (${why}) ${n - 1} times: left off`);
        void vscode.window.showWarningMessage(
          `fresh-ls: the terminal proxy for ${server.folder.name} keeps stopping; new terminals are not routed through it. See the “fresh-ls” output, then run “fresh-ls: Restart Server”.`,
        );
      }
    });
    const urls = await firstLine(proc, FIRST_LINE_TIMEOUT_MS).then(parseProxiesLine, () => undefined);
    if (this.running.get(server.key) !== entry) return;
    if (!urls) {
      this.log(`${server.folder.name}: the terminal proxy did not say where it listens; stopping it`);
      await this.stop(server.key);
      return;
    }
    entry.urls = urls;
    const scoped = this.collection.getScoped({ workspaceFolder: server.folder });
    scoped.description = collectionDescription(server.folder.name);
    for (const [name, value] of Object.entries(terminalVariables(urls))) scoped.replace(name, value);
    this.log(
      `${server.folder.name}: terminal proxy on (pid ${urls.pid ?? proc.pid}): new terminals get ANTHROPIC_BASE_URL=${urls.anthropic} (to ${urls.anthropicUpstream}) and OPENAI_BASE_URL=${urls.openai} (to ${urls.openaiUpstream})`,
    );
    this.onChange();
  }

  private async stop(key: string): Promise<void> {
    const entry = this.running.get(key);
    if (!entry) return;
    entry.stopping = true;
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(key));
    if (folder) this.collection.getScoped({ workspaceFolder: folder }).clear();
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
    for (const entry of this.running.values()) {
      entry.stopping = true;
      entry.proc.stdin.end();
      entry.proc.kill("SIGTERM");
    }
    this.running.clear();
    this.collection.clear();
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
