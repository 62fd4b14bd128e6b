// One fresh-ls sidecar per workspace folder, through vscode-languageclient: the editor's
// buffers flow in over standard LSP on stdio, and harnesses attach to the same engine through
// the endpoint the server writes (`--listen`). When a server already runs on the root (a
// harness started it first), the extension attaches to it through its endpoint instead.

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
  type StreamInfo,
} from "vscode-languageclient/node";
import {
  CHECK_ARGS,
  checkOutput,
  initializationOptions,
  interpreterCandidates,
  launchProblem,
  parseAddress,
  parseBundle,
  parseEndpoint,
  serverArgs,
  venvPythons,
  type Bundle,
  type CheckFailure,
  type Interpreter,
  type LaunchProblem,
} from "./launch";
import { ENDPOINT_FILE, RESTRICTED_NOTE, STATE_DIR } from "./config";
import type { ServerState } from "./model";
import {
  ServerMethods,
  type ClientMethod,
  type DidInvalidateParams,
  type Endpoint,
  type ParamsOf,
  type ResultOf,
} from "./protocol";
import { logLine } from "./labels";
import { crashLoop, gaveUpMessage, mayStartOwn, recoveryDelay } from "./recovery";
import { isTrusted, settings } from "./settings";

const CHECK_TIMEOUT_MS = 30_000;

export interface ServerEvents {
  onState(server: FolderServer): void;
  onInvalidate(server: FolderServer, params: DidInvalidateParams): void;
  onProblem(server: FolderServer, problem: LaunchProblem): void;
}

export class FolderServer {
  state: ServerState = "stopped";
  error?: string;
  interpreter?: Interpreter;
  version?: string;
  /** True when attached to a server someone else started (through its endpoint). */
  attached = false;
  /** The running server's pid (ours or the one attached to), for the status bar. */
  pid?: number;
  private client?: QuietLanguageClient;
  private childPid?: number;
  private starting?: Promise<void>;
  /** Bumped by every asked-for stop: a recovery in progress for an older one gives up. */
  private epoch = 0;
  private recovering = false;
  /** When the server stopped unasked, recently (for crash-loop detection). */
  private readonly stops: number[] = [];

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    private readonly output: vscode.OutputChannel,
    private readonly events: ServerEvents,
    private readonly bundle?: Bundle,
  ) {}

  get key(): string {
    return this.folder.uri.toString();
  }

  get root(): string {
    return this.folder.uri.fsPath;
  }

  endpointFile(stateDir?: string): string {
    return path.join(stateDir ?? path.join(this.root, STATE_DIR), ENDPOINT_FILE);
  }

  private setState(state: ServerState, error?: string): void {
    this.state = state;
    this.error = error;
    this.events.onState(this);
  }

  private log(message: string): void {
    this.output.appendLine(logLine(`${this.folder.name}: ${message}`));
  }

  start(): Promise<void> {
    this.starting ??= this.doStart({}).then(
      (problem) => {
        if (problem) {
          this.setState("failed", problem.message);
          this.events.onProblem(this, problem);
        }
      },
    ).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** Attaches to the root's live server, else starts one (unless `attachOnly`): undefined
   * once running, else what went wrong. */
  private async doStart(opts: { attachOnly?: boolean }): Promise<LaunchProblem | undefined> {
    this.setState("starting");
    const config = settings(this.folder);
    const live = await liveEndpoint(this.endpointFile());
    if (!live && opts.attachOnly) return { message: "no live server on the root yet" };
    let serverOptions: ServerOptions;
    let token: string | undefined;
    if (live) {
      this.log(`a server already runs on this root (pid ${live.pid}, ${live.address}): attaching to it`);
      this.attached = true;
      token = live.token;
      serverOptions = () => connect(live);
    } else {
      const found = await this.findInterpreter(config.python);
      if (!found.ok) {
        this.log(found.problem.message);
        return found.problem;
      }
      const interp = found.interpreter;
      this.interpreter = interp;
      this.version = found.version;
      this.attached = false;
      const extra = config.serverArgs;
      serverOptions = {
        command: interp.command,
        args: serverArgs(this.root, extra),
        options: { cwd: this.root, env: { ...process.env, PYTHONUNBUFFERED: "1", ...interp.env } },
      };
    }

    const clientOptions: LanguageClientOptions = {
      // Only this folder's files: with several folders, each server hears its own buffers.
      documentSelector: [{ scheme: "file", pattern: `${globEscape(this.root.replace(/\\/g, "/"))}/**/*` }],
      workspaceFolder: this.folder,
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: initializationOptions(
        { budgetBytes: config.budgetBytes, policy: config.policy },
        token,
      ),
      initializationFailedHandler: (err) => {
        this.log(`initialize failed: ${String(err)}`);
        return false;
      },
      // The extension restarts or re-attaches by itself (recover()), with backoff, for a
      // server it started and one it attached to alike; the client's own restart would
      // reconnect to a dead endpoint and leave toasts behind.
      errorHandler: {
        error: (_err, _msg, count) => ({
          action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
          handled: true,
        }),
        closed: () => ({ action: CloseAction.DoNotRestart, handled: true, message: CONNECTION_CLOSED }),
      },
    };
    const client = new QuietLanguageClient(
      `freshLs.${this.folder.index}`,
      `fresh-ls (${this.folder.name})`,
      serverOptions,
      clientOptions,
    );
    this.client = client;
    client.onNotification(ServerMethods.didInvalidate, (params: DidInvalidateParams) => {
      this.events.onInvalidate(this, params);
    });
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Stopped && this.state === "running") void this.recover();
    });
    try {
      await client.start();
      // A server that exited during initialize (say, another took the root meanwhile: it
      // exits 3) leaves start() resolved and the client stopped: a failed try, so recovery
      // goes on and attaches to the one that runs.
      if (!client.isRunning()) throw new Error("it stopped before it served (another server may hold the root)");
      // The server writes its endpoint before it serves stdio, so it is there by now.
      const ep = await readEndpoint(this.endpointFile());
      this.childPid = this.attached ? undefined : ep?.pid;
      this.pid = this.attached ? live?.pid : ep?.pid;
      this.log(this.attached ? `attached (pid ${live?.pid ?? "?"})` : `started (pid ${ep?.pid ?? "?"})`);
      this.setState("running");
      return undefined;
    } catch (err) {
      const message = `fresh-ls: the server did not start for ${this.folder.name}: ${errorText(err)}. See the “fresh-ls” output.`;
      this.log(message);
      if (this.client === client) this.client = undefined;
      await client.dispose(2000).catch(() => undefined);
      return { message };
    }
  }

  /**
   * The server stopped without being asked: re-attach or restart, with backoff (recovery.ts),
   * without a toast per try; one plain message if it gives up. A server someone else started
   * gets a grace period to come back before the extension starts its own.
   */
  private async recover(): Promise<void> {
    if (this.recovering) return;
    this.recovering = true;
    const epoch = this.epoch;
    const wasAttached = this.attached;
    const since = Date.now();
    const old = this.client;
    this.client = undefined;
    this.childPid = undefined;
    void old?.dispose(1000).catch(() => undefined);
    const loop = crashLoop(this.stops, since);
    this.log(`the server stopped unasked (${wasAttached ? "attached" : "started here"}): ${loop ? "a crash loop, not retrying" : "recovering"}`);
    let last: string | undefined;
    let attempt = 0;
    try {
      for (; !loop; attempt++) {
        const delay = recoveryDelay(attempt);
        if (delay === undefined) break;
        this.setState("starting", `restarting (try ${attempt + 1})`);
        await new Promise((r) => setTimeout(r, delay));
        if (this.epoch !== epoch) return; // a stop or restart was asked for meanwhile
        const attachOnly = !mayStartOwn(wasAttached, Date.now() - since);
        // Tracked as `starting`, so a stop asked for meanwhile waits for it and then stops it.
        const run = this.doStart({ attachOnly });
        this.starting = run.then(() => undefined);
        const problem = await run.finally(() => {
          this.starting = undefined;
        });
        if (this.epoch !== epoch) return;
        if (!problem) {
          this.log(`recovered on try ${attempt + 1}, ${this.attached ? "re-attached" : "with a server of its own"}`);
          return;
        }
        last = problem.message.replace(/^fresh-ls: /, "");
      }
      const message = gaveUpMessage(this.folder.name, attempt, last, loop);
      this.log(message);
      this.setState("failed", message);
      this.events.onProblem(this, { message, actions: ["showOutput"] });
    } finally {
      this.recovering = false;
    }
  }

  /** The first candidate whose check passes (see `interpreterCandidates`), or the problem
   * with the last one tried. */
  private async findInterpreter(
    setting: string,
  ): Promise<{ ok: true; interpreter: Interpreter; version: string } | { ok: false; problem: LaunchProblem }> {
    // Restricted Mode: nothing the folder could have put there or chosen is even looked at.
    const restricted = !isTrusted();
    if (restricted) this.log(RESTRICTED_NOTE);
    const venvs = restricted
      ? []
      : (await Promise.all(venvPythons(this.root).map(async (p) => ((await exists(p)) ? p : undefined)))).filter(
          (p): p is string => !!p,
        );
    const candidates = interpreterCandidates(
      {
        setting: setting || undefined,
        venvs,
        fromPythonExtension: setting || restricted ? undefined : await pythonFromExtension(this.folder.uri),
        bundle: this.bundle,
        restricted,
      },
      { workspaceFolder: this.root, home: os.homedir() },
    );
    let last: { interp: Interpreter; failure: CheckFailure } | undefined;
    for (const interp of candidates) {
      const check = await checkInterpreter(interp, this.root, this.bundle);
      if (check.ok) {
        const via = interp.env.PYTHONPATH ? `, PYTHONPATH=${interp.env.PYTHONPATH}` : "";
        this.log(`interpreter ${interp.command} (${interp.source}${via}): fresh_ls ${check.version}`);
        return { ok: true, interpreter: interp, version: check.version };
      }
      this.log(`interpreter ${interp.command} (${interp.source}) not used: ${failureText(check.failure)}`);
      last = { interp, failure: check.failure };
    }
    // interpreterCandidates never answers an empty list.
    return { ok: false, problem: launchProblem(last!.interp, last!.failure, this.bundle) };
  }

  /** The interpreter that runs this folder's sidecar, or would (attached to a harness's
   * server, none was looked for yet): the terminal proxy runs `fresh_ls proxies` with it. */
  async python(): Promise<Interpreter | undefined> {
    if (this.interpreter) return this.interpreter;
    const found = await this.findInterpreter(settings(this.folder).python);
    if (!found.ok) return undefined;
    this.interpreter = found.interpreter;
    return found.interpreter;
  }

  async stop(): Promise<void> {
    this.epoch++;
    await this.starting?.catch(() => undefined);
    const client = this.client;
    const pid = this.childPid;
    this.client = undefined;
    this.childPid = undefined;
    if (client) {
      client.stopAsked = true;
      try {
        if (client.isRunning()) await client.stop(4000);
      } catch (err) {
        this.log(`stop: ${errorText(err)}`);
      }
      await client.dispose(1000).catch(() => undefined);
    }
    if (pid) await waitForExit(pid, 5000);
    this.setState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async request<M extends ClientMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    const client = this.client;
    if (!client || this.state !== "running") {
      throw new Error(`fresh-ls is not running for ${this.folder.name}${this.error ? `: ${this.error}` : ""}`);
    }
    return client.sendRequest(method, params) as Promise<ResultOf<M>>;
  }

  async dispose(): Promise<void> {
    await this.stop();
  }
}

/** Its error lines go to the output channel only: the extension says what matters itself,
 * once, and a toast from a crash it then recovered from would stay behind. */
class QuietLanguageClient extends LanguageClient {
  /** Set before a stop the user (or a settings change) asked for: its "connection closed"
   * is then news, not an error. */
  stopAsked = false;

  override error(message: string, data?: unknown): void {
    // A closed connection is expected (a crash, a harness restarting its server): recover()
    // reconnects and logs what it does, so it is one plain line, not an error.
    if (message === CONNECTION_CLOSED) super.info(this.stopAsked ? "the sidecar stopped, as asked" : EXPECTED_CLOSE_LINE, undefined, false);
    else if (this.stopAsked) super.info(message, data, false);
    else super.error(message, data, false);
  }
}

/** What the error handler says when the connection closes (the client would log "Server
 * will not be restarted." at error level, though the extension reconnects by itself). */
const CONNECTION_CLOSED = "fresh-ls: connection closed";
export const EXPECTED_CLOSE_LINE = "the connection to the sidecar closed; fresh-ls reconnects by itself (the next lines say how)";

/** Escapes glob metacharacters in a literal path. */
function globEscape(p: string): string {
  return p.replace(/[*?[\]{}]/g, (c) => `[${c}]`);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The Python extension's active interpreter for `resource`, when that extension is installed. */
async function pythonFromExtension(resource: vscode.Uri): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return undefined;
  const ask = async (): Promise<string | undefined> => {
    if (!ext.isActive) await ext.activate();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const api = ext.exports as any;
    const envs = api?.environments;
    if (envs?.getActiveEnvironmentPath && envs?.resolveEnvironment) {
      const env = await envs.resolveEnvironment(envs.getActiveEnvironmentPath(resource));
      const exe: string | undefined = env?.executable?.uri?.fsPath;
      if (exe) return exe;
    }
    const cmd: string[] | undefined = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
    return cmd?.[0];
  };
  try {
    return await Promise.race([ask(), new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000))]);
  } catch {
    return undefined;
  }
}

/** Subscribes to the Python extension's interpreter changes, when it is installed. */
export function onPythonInterpreterChange(listener: () => void): vscode.Disposable | undefined {
  const ext = vscode.extensions.getExtension("ms-python.python");
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const event = (ext?.isActive ? (ext.exports as any)?.environments?.onDidChangeActiveEnvironmentPath : undefined) as
    | vscode.Event<unknown>
    | undefined;
  return event ? event(() => listener()) : undefined;
}

type CheckResult = { ok: true; version: string } | { ok: false; failure: CheckFailure };

function failureText(f: CheckFailure): string {
  if (f.code === "ENOENT") return "not found";
  if (f.code === "version") return `Python ${f.python ?? "?"} is not the bundle's`;
  return (f.stderr ?? "").trim().split("\n").filter(Boolean).pop() ?? `exit code ${String(f.code)}`;
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.promises.access(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The sidecar shipped in the .vsix (`bundled/`), when this build has one. */
export function readBundle(extensionPath: string): Bundle | undefined {
  const dir = path.join(extensionPath, "bundled");
  try {
    return parseBundle(fs.readFileSync(path.join(dir, "bundle.json"), "utf8"), path.join(dir, "libs"));
  } catch {
    return undefined;
  }
}

function checkInterpreter(interp: Interpreter, cwd: string, bundle?: Bundle): Promise<CheckResult> {
  const env = { ...process.env, ...interp.env };
  return new Promise((resolve) => {
    execFile(interp.command, [...CHECK_ARGS], { cwd, env, timeout: CHECK_TIMEOUT_MS }, (err, stdout, stderr) => {
      if (!err) {
        resolve(checkOutput(interp, String(stdout), bundle));
        return;
      }
      const code = (err as NodeJS.ErrnoException).code ?? (err as { status?: number }).status ?? null;
      resolve({ ok: false, failure: { code, stderr: String(stderr || err.message) } });
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
}

/** The endpoint of a server that is running on the root now, if any. */
async function liveEndpoint(file: string): Promise<Endpoint | undefined> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, "utf8");
  } catch {
    return undefined;
  }
  const ep = parseEndpoint(text);
  if (!ep) return undefined;
  if (!alive(ep.pid)) {
    // Left by a server killed before it could clean up: remove it, so a harness reading it
    // hears "no running server" rather than a refused connection. Only if it is unchanged
    // (a server starting now writes a new one).
    const again = await fs.promises.readFile(file, "utf8").catch(() => "");
    if (again === text) await fs.promises.unlink(file).catch(() => undefined);
    return undefined;
  }
  try {
    const sock = await connect(ep, 2000);
    sock.reader.destroy();
    return ep;
  } catch {
    return undefined;
  }
}

function connect(ep: Endpoint, timeoutMs = 10_000): Promise<StreamInfo & { reader: net.Socket }> {
  const addr = parseAddress(ep.address);
  if (!addr) return Promise.reject(new Error(`bad endpoint address ${ep.address}`));
  return new Promise((resolve, reject) => {
    const sock =
      addr.kind === "unix" ? net.createConnection({ path: addr.path }) : net.createConnection({ host: addr.host, port: addr.port });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`timed out connecting to ${ep.address}`));
    }, timeoutMs);
    sock.once("connect", () => {
      clearTimeout(timer);
      resolve({ reader: sock, writer: sock });
    });
    sock.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Reads the live server's `endpoint.json` (for "Copy harness endpoint"). */
export async function readEndpoint(file: string): Promise<Endpoint | undefined> {
  try {
    return parseEndpoint(await fs.promises.readFile(file, "utf8"));
  } catch {
    return undefined;
  }
}
