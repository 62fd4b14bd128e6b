// fresh-ls for VS Code: runs the sidecar per workspace folder and shows which of the agents'
// file views went stale (panel, CodeLens, status bar, diff, projection).

import { execFile } from "node:child_process";
import * as path from "node:path";
import * as vscode from "vscode";
import { debounce } from "./debounce";
import { DirtyBuffers } from "./dirty";
import { diffTitle, OBSERVED_SCHEME, PROJECTION_SCHEME, VIEW_SCHEME } from "./diffdoc";
import { logLine, sessionLabel } from "./labels";
import { endpointClipboard, RESTART_SETTINGS, type Bundle, type LaunchAction, type LaunchProblem } from "./launch";
import { GutterMarks } from "./gutter";
import {
  Commands,
  ContextKeys,
  DEFAULT_OPTIONS,
  EXTENSION_ID,
  openPlan,
  PanelModel,
  sessionsOlderThan,
  WALKTHROUGH,
  type FolderState,
  type Node,
  type PanelOptions,
  type ViewTarget,
} from "./model";
import { ClientMethods, type LineRange, type StaleView } from "./protocol";
import {
  ObservedProvider,
  observedDocUri,
  ProjectionProvider,
  projectionDocUri,
  StaleFileDecorations,
  StaleLensProvider,
  ViewDocProvider,
  viewDocumentUri,
} from "./providers";
import { FolderServer, onPythonInterpreterChange, readBundle, readEndpoint } from "./server";
import { STATE_DIR } from "./config";
import { clearPythonOverride, isTrusted, setTerminalProxy, settings, userTerminalProxy } from "./settings";
import { statusBarText, statusBarTooltip } from "./statusbar";
import { TerminalProxies } from "./terminal";
import { proxyTooltipLine } from "./terminalenv";
import { ASKED_TERMINAL_PROXY, FIRST_RUN_NO, FIRST_RUN_PROMPT, FIRST_RUN_YES, installHooksProcess, shouldAskTerminalProxy } from "./onboarding";
import { AgentViewsProvider } from "./tree";

const VIEW_ID = "freshLs.views";
/** Where the panel's filter and grouping are kept (per workspace, as VS Code keeps a view's sort). */
const OPTIONS_KEY = "freshLs.panelOptions";

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new Controller(context);
  void controller.askTerminalProxyOnce();
  await controller.startAll();
  // After the first start: asking for the interpreter has activated the Python extension.
  controller.watchPythonInterpreter(context);
}

export async function deactivate(): Promise<void> {
  await controller?.dispose();
  controller = undefined;
}

class Controller {
  private readonly output = vscode.window.createOutputChannel("fresh-ls");
  private readonly model = new PanelModel();
  private readonly servers = new Map<string, FolderServer>();
  private readonly tree = new AgentViewsProvider(this.model);
  private readonly observed = new ObservedProvider((k) => this.servers.get(k));
  private readonly projection = new ProjectionProvider((k) => this.servers.get(k));
  private readonly viewDocs = new ViewDocProvider((k) => this.servers.get(k));
  private readonly lenses = new StaleLensProvider(this.model);
  private readonly decorations = new StaleFileDecorations(this.model);
  private readonly statusItem = vscode.window.createStatusBarItem("freshLs.status", vscode.StatusBarAlignment.Left, 50);
  private readonly refreshers = new Map<string, ReturnType<typeof debounce<[]>>>();
  private readonly fingerprints = new Map<string, string>();
  private readonly shownProblems = new Set<string>();
  private readonly dirtyBuffers = new DirtyBuffers();
  private pollTimer?: ReturnType<typeof setInterval>;
  private readonly restartAll = debounce(() => void this.restart(), 1000);
  private treeView?: vscode.TreeView<Node>;
  /** The sidecar shipped in the .vsix (`bundled/`), absent in a development build. */
  private readonly bundle: Bundle | undefined;
  private readonly terminals: TerminalProxies;
  private readonly gutter: GutterMarks;
  /** Repaints the rows' "read 5 minutes ago" once a minute. */
  private readonly agoTimer: ReturnType<typeof setInterval>;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.bundle = readBundle(context.extensionPath);
    this.gutter = new GutterMarks(this.model, context.extensionPath);
    this.model.options = { ...DEFAULT_OPTIONS, ...context.workspaceState.get<Partial<PanelOptions>>(OPTIONS_KEY, {}) };
    this.applyOptionContexts();
    this.agoTimer = setInterval(() => this.tree.refresh(), 60_000);
    this.terminals = new TerminalProxies(
      context.environmentVariableCollection,
      this.output,
      () => this.updateStatusBar(),
      (s) => this.model.get(s.key)?.status?.stateDir ?? path.join(s.root, STATE_DIR),
    );
    const treeView = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this.tree, showCollapseAll: true });
    this.treeView = treeView;
    this.statusItem.name = "fresh-ls stale views";
    this.statusItem.command = Commands.focusPanel;
    this.updateStatusBar();
    this.statusItem.show();

    const reg = (id: string, fn: (...args: never[]) => unknown) =>
      vscode.commands.registerCommand(id, fn as (...args: unknown[]) => unknown);
    context.subscriptions.push(
      this.output,
      treeView,
      this.tree.track(treeView),
      this.tree,
      this.observed,
      this.projection,
      this.viewDocs,
      this.lenses,
      this.decorations,
      this.gutter,
      { dispose: () => clearInterval(this.agoTimer) },
      vscode.window.registerFileDecorationProvider(this.decorations),
      this.statusItem,
      vscode.workspace.registerTextDocumentContentProvider(OBSERVED_SCHEME, this.observed),
      vscode.workspace.registerTextDocumentContentProvider(PROJECTION_SCHEME, this.projection),
      vscode.workspace.registerTextDocumentContentProvider(VIEW_SCHEME, this.viewDocs),
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, this.lenses),
      reg(Commands.refresh, () => this.refreshAll()),
      reg(Commands.restart, () => this.restart()),
      reg(Commands.openView, (target: ViewTarget) => this.openView(target)),
      reg(Commands.showProjection, (node?: Node) => this.showProjection(node)),
      reg(Commands.copyEndpoint, (node?: Node) => this.copyEndpoint(node)),
      reg(Commands.forgetSession, (node?: Node) => this.forgetSession(node)),
      reg(Commands.useBundled, () => this.useBundled()),
      reg(Commands.terminalProxyOn, () => setTerminalProxy(true)),
      reg(Commands.terminalProxyOff, () => setTerminalProxy(false)),
      reg(Commands.onlyStale, () => this.setOptions({ onlyStale: true })),
      reg(Commands.allViews, () => this.setOptions({ onlyStale: false })),
      reg(Commands.groupByFile, () => this.setOptions({ groupBy: "file" })),
      reg(Commands.groupBySession, () => this.setOptions({ groupBy: "session" })),
      reg(Commands.openViewRow, (node?: Node) => this.openViewRow(node)),
      reg(Commands.copyMarker, (node?: Node) => this.copyMarker(node)),
      reg(Commands.forgetView, (node?: Node) => this.forgetView(node)),
      reg(Commands.showLogs, () => this.output.show(true)),
      reg(Commands.openSettings, () => vscode.commands.executeCommand("workbench.action.openSettings", `@ext:${EXTENSION_ID}`)),
      reg(Commands.forgetAll, () => this.forgetAll()),
      reg(Commands.forgetOlderSessions, () => this.forgetOlderSessions()),
      reg(Commands.installClaudeHooks, (node?: Node) => this.installClaudeHooks(node)),
      reg(Commands.nextStaleChange, () => this.gutter.step(1)),
      reg(Commands.previousStaleChange, () => this.gutter.step(-1)),
      reg(Commands.getStarted, () => vscode.commands.executeCommand("workbench.action.openWalkthrough", WALKTHROUGH, false)),
      this.terminals,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (RESTART_SETTINGS.some((s) => e.affectsConfiguration(s))) {
          this.output.appendLine(logLine("settings changed: restarting the fresh-ls servers (debounced)"));
          this.restartAll();
        }
        if (e.affectsConfiguration("freshLs.refreshSeconds")) this.schedulePoll();
        if (e.affectsConfiguration("freshLs.codeLens")) this.lenses.refresh();
        if (e.affectsConfiguration("freshLs.gutter") || e.affectsConfiguration("freshLs.endOfLine")) this.gutter.refresh();
        if (e.affectsConfiguration("freshLs.fileBadge")) this.decorations.refresh();
        if (e.affectsConfiguration("freshLs.proxyUpstreamAnthropic") || e.affectsConfiguration("freshLs.proxyUpstreamOpenai")) {
          // New upstreams: the proxies start again on the ports they kept, with the same
          // secret: every terminal's base URLs stay valid.
          if (this.terminals.on) void this.terminals.restart(Array.from(this.servers.values()));
          else this.syncTerminals();
        } else if (e.affectsConfiguration("freshLs.terminalProxy")) {
          this.syncTerminals();
        }
      }),
      vscode.workspace.onDidChangeWorkspaceFolders((e) => void this.foldersChanged(e)),
      // Trusted now: the folder's interpreter and settings apply, so start again with them
      // (the terminal proxies too: their upstreams may be the folder's).
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.output.appendLine(logLine("the folder is trusted now: restarting with its settings"));
        void this.terminals.restart([]).then(() => this.restart());
      }),
      // editorDirty, pushed: a buffer going dirty or clean refreshes its folder's rows at once.
      vscode.workspace.onDidChangeTextDocument((e) => this.bufferChanged(e.document)),
      vscode.workspace.onDidSaveTextDocument((d) => this.bufferChanged(d)),
      vscode.workspace.onDidCloseTextDocument((d) => this.bufferChanged(d, true)),
      { dispose: () => this.restartAll.cancel() },
    );
    this.schedulePoll();
  }

  /** The first run's question: route terminal agents through fresh-ls? Asked once (the
   * answer, or closing it, is remembered), and never of someone who set the setting. */
  async askTerminalProxyOnce(): Promise<void> {
    const asked = this.context.globalState.get<boolean>(ASKED_TERMINAL_PROXY, false);
    const userValue = userTerminalProxy();
    if (!shouldAskTerminalProxy(asked, userValue)) return;
    const choice = await vscode.window.showInformationMessage(FIRST_RUN_PROMPT, FIRST_RUN_YES, FIRST_RUN_NO);
    await this.context.globalState.update(ASKED_TERMINAL_PROXY, true);
    this.output.appendLine(logLine(`first run: terminal proxy question answered “${choice ?? "closed"}”`));
    if (choice === FIRST_RUN_YES) await setTerminalProxy(true);
  }

  /** Adds fresh-ls's hooks to the folder's .claude/settings.json, run by the sidecar's
   * interpreter (`onboarding.ts` says which command the hook gets). */
  private async installClaudeHooks(node?: Node): Promise<void> {
    const server = await this.pickFolder(node);
    const interp = await server?.python();
    if (!server || !interp) {
      void vscode.window.showErrorMessage("fresh-ls: no interpreter runs fresh_ls here; see the “fresh-ls” output.");
      return;
    }
    const run = installHooksProcess(interp, server.root);
    const done = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      execFile(run.command, run.args, { cwd: server.root, env: { ...process.env, ...run.env }, timeout: 60_000 }, (error, out, err) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, out: String(out), err: String(err) }),
      );
    });
    if (done.code !== 0) {
      this.output.appendLine(logLine(`installing the Claude Code hooks failed: ${done.err.trim()}`, undefined, "Error"));
      void vscode.window.showErrorMessage(`fresh-ls: installing the Claude Code hooks failed: ${done.err.trim().split("\n").pop() ?? ""}`);
      return;
    }
    const file = path.join(server.root, ".claude", "settings.json");
    this.output.appendLine(logLine(`Claude Code hooks installed in ${file}`));
    const open = "Open settings.json";
    const choice = await vscode.window.showInformationMessage(
      `fresh-ls: Claude Code hooks installed in ${path.relative(server.root, file)}: Claude Code started in ${server.folder.name} registers what it reads and is warned before it edits stale code.`,
      open,
    );
    if (choice === open) await vscode.window.showTextDocument(vscode.Uri.file(file));
  }

  /** Restarts (debounced) when the Python extension's interpreter changes and a folder uses it. */
  watchPythonInterpreter(context: vscode.ExtensionContext): void {
    const py = onPythonInterpreterChange(() => {
      const usesSetting = (vscode.workspace.workspaceFolders ?? []).every(
        (f) => !!settings(f).python,
      );
      if (!usesSetting) {
        this.output.appendLine(logLine("the Python extension's interpreter changed: restarting (debounced)"));
        this.restartAll();
      }
    });
    if (py) context.subscriptions.push(py);
  }

  // ---- servers -------------------------------------------------------------------------------

  async startAll(): Promise<void> {
    await Promise.all((vscode.workspace.workspaceFolders ?? []).map((f) => this.startFolder(f)));
  }

  private async startFolder(folder: vscode.WorkspaceFolder): Promise<void> {
    const server = new FolderServer(folder, this.output, {
      onState: (s) => this.serverStateChanged(s),
      onInvalidate: (s) => this.refresher(s.key)(),
      onProblem: (s, p) => void this.showProblem(s, p),
    }, this.bundle);
    this.servers.set(server.key, server);
    this.model.upsert(this.folderState(server));
    this.tree.refresh();
    await server.start();
  }

  private async foldersChanged(e: vscode.WorkspaceFoldersChangeEvent): Promise<void> {
    for (const f of e.removed) {
      const key = f.uri.toString();
      const server = this.servers.get(key);
      this.servers.delete(key);
      this.model.remove(key);
      await server?.dispose();
    }
    await Promise.all(e.added.map((f) => this.startFolder(f)));
    this.tree.refresh();
    this.updateStatusBar();
  }

  private folderState(server: FolderServer): FolderState {
    const prev = this.model.get(server.key);
    return {
      key: server.key,
      name: server.folder.name,
      root: server.root,
      state: server.state,
      error: server.error,
      restricted: !isTrusted(),
      status: server.state === "running" ? prev?.status : undefined,
      views: server.state === "running" ? (prev?.views ?? new Map()) : new Map(),
    };
  }

  private serverStateChanged(server: FolderServer): void {
    if (!this.servers.has(server.key)) return;
    this.model.upsert(this.folderState(server));
    if (server.state === "running") {
      this.shownProblems.delete(server.key);
      void this.refreshFolder(server.key);
    }
    this.tree.refresh();
    this.lenses.refresh();
    this.decorations.refresh();
    this.gutter.refresh();
    this.updateStatusBar();
    this.syncTerminals();
  }

  /** The terminal proxy follows the setting and the servers: one per running folder. */
  private syncTerminals(): void {
    void this.terminals.sync(settings().terminalProxy, Array.from(this.servers.values())).catch((err) =>
      this.output.appendLine(logLine(`terminal proxy: ${err instanceof Error ? err.message : String(err)}`, undefined, "Error")),
    );
  }

  private async showProblem(server: FolderServer, problem: LaunchProblem): Promise<void> {
    if (this.shownProblems.has(server.key)) return;
    this.shownProblems.add(server.key);
    const titles: Record<LaunchAction, string> = {
      useBundled: "Use Bundled Sidecar",
      openSettings: "Open Settings",
      showOutput: "Show Output",
    };
    const actions = (problem.actions ?? ["openSettings", "showOutput"]).filter((a) => a !== "useBundled" || this.bundle);
    const choice = await vscode.window.showErrorMessage(problem.message, ...actions.map((a) => titles[a]));
    if (choice === titles.useBundled) {
      await this.useBundled();
    } else if (choice === titles.openSettings) {
      await vscode.commands.executeCommand("workbench.action.openSettings", "freshLs.python");
    } else if (choice === titles.showOutput) {
      this.output.show(true);
    }
  }

  /** Clears `freshLs.python` wherever it is set, so the sidecar bundled in the .vsix runs (the
   * settings change restarts the servers). */
  private async useBundled(): Promise<void> {
    await clearPythonOverride();
    this.output.appendLine(logLine("freshLs.python cleared: using the bundled sidecar"));
  }

  private async restart(): Promise<void> {
    this.shownProblems.clear();
    await Promise.all(Array.from(this.servers.values(), (s) => s.restart()));
  }

  // ---- refreshing ----------------------------------------------------------------------------

  /** A buffer that went dirty or clean (typed in, saved, reverted, closed): its folder's
   * views change `editorDirty`, which the server does not push (no file changed). The
   * refresh is debounced, so the language client's didChange reaches the server first. */
  private bufferChanged(doc: vscode.TextDocument, closed = false): void {
    if (doc.uri.scheme !== "file") return;
    if (!this.dirtyBuffers.update(doc.uri.toString(), !closed && doc.isDirty)) return;
    const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
    if (folder && this.servers.has(folder.uri.toString())) this.refresher(folder.uri.toString())();
  }

  private refresher(folder: string): () => void {
    let fn = this.refreshers.get(folder);
    if (!fn) {
      fn = debounce(() => void this.refreshFolder(folder), 150);
      this.refreshers.set(folder, fn);
    }
    return fn;
  }

  async refreshAll(): Promise<void> {
    await Promise.all(Array.from(this.servers.keys(), (k) => this.refreshFolder(k)));
  }

  /** Status and every session's views, then the panel, lenses, status bar and open diffs. */
  private async refreshFolder(folder: string): Promise<void> {
    const server = this.servers.get(folder);
    if (!server || server.state !== "running") return;
    try {
      const status = await server.request(ClientMethods.status, {});
      const views = new Map<string, StaleView[]>();
      for (const s of status.sessions) {
        views.set(s.session, (await server.request(ClientMethods.stale, { session: s.session })).views);
      }
      this.fingerprints.set(folder, fingerprint(status.sessions));
      this.model.setSnapshot(folder, status, views);
    } catch (err) {
      this.output.appendLine(logLine(`refresh ${server.folder.name}: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    this.tree.refresh();
    this.lenses.refresh();
    this.decorations.refresh();
    this.gutter.refresh();
    this.observed.refresh(folder);
    this.projection.refresh();
    this.viewDocs.refresh();
    this.updateStatusBar();
  }

  /**
   * The server pushes `fresh/didInvalidate` when a view's status moves, when a harness
   * observes a view and when views are forgotten, so the panel needs no polling. This cheap
   * `fresh/status` poll (every `freshLs.refreshSeconds`, 0 for none) is only a safety net,
   * e.g. for a sidecar of an older fresh-ls that did not push observe and forget.
   */
  private schedulePoll(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    const seconds = settings().refreshSeconds;
    if (!seconds || seconds <= 0) return;
    this.pollTimer = setInterval(() => void this.poll(), Math.max(1, seconds) * 1000);
  }

  private async poll(): Promise<void> {
    for (const server of this.servers.values()) {
      if (server.state !== "running") continue;
      try {
        const status = await server.request(ClientMethods.status, {});
        if (fingerprint(status.sessions) !== this.fingerprints.get(server.key)) this.refresher(server.key)();
      } catch {
        // the next poll tries again; state changes are reported by the server wrapper
      }
    }
  }

  private updateStatusBar(): void {
    const running = this.model.anyRunning();
    const stale = this.model.staleCount();
    const summary = {
      folders: Array.from(this.servers.values(), (s) => ({
        name: s.folder.name,
        state: s.state,
        error: s.error,
        pid: s.pid,
        attached: s.attached,
      })),
      stale,
      sessions: this.model.sessionCount(),
      proxy: this.terminals.on ? proxyTooltipLine(this.terminals.active()) : undefined,
    };
    this.statusItem.text = statusBarText(summary);
    this.statusItem.tooltip = statusBarTooltip(summary);
    // Screen readers hear the whole state, not the icon names of the text.
    this.statusItem.accessibilityInformation = { label: statusBarTooltip(summary).replace(/\n/g, " "), role: "button" };
    // The count on the activity-bar icon, as Source Control counts changes.
    if (this.treeView) {
      this.treeView.badge =
        running && stale > 0 ? { value: stale, tooltip: `${stale} stale agent ${stale === 1 ? "view" : "views"}` } : undefined;
    }
    this.statusItem.backgroundColor =
      running && this.model.attentionCount() > 0 ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  // ---- commands ------------------------------------------------------------------------------

  /** The view title's filter and grouping: kept per workspace, mirrored in context keys so
   * the title shows the button that undoes the current choice. */
  private async setOptions(change: Partial<PanelOptions>): Promise<void> {
    this.model.options = { ...this.model.options, ...change };
    await this.context.workspaceState.update(OPTIONS_KEY, this.model.options);
    this.applyOptionContexts();
    this.tree.refresh();
  }

  private applyOptionContexts(): void {
    void vscode.commands.executeCommand("setContext", ContextKeys.onlyStale, this.model.options.onlyStale);
    void vscode.commands.executeCommand("setContext", ContextKeys.groupBy, this.model.options.groupBy);
  }

  /** A view row's target (its inline and context-menu actions get the row's node). */
  private rowTarget(node?: Node): ViewTarget | undefined {
    if (!node || (node.type !== "view" && node.type !== "unit")) return undefined;
    return { folder: node.folder, session: node.session, viewId: node.viewId };
  }

  private async openViewRow(node?: Node): Promise<void> {
    const target = this.rowTarget(node);
    if (target) await this.openView(target);
  }

  /** The line a model sees in place of this view once fresh-ls replaces it (`policy: all`,
   * so a fresh view has one too), on the clipboard: to paste into a prompt or a bug report. */
  private async copyMarker(node?: Node): Promise<void> {
    const target = this.rowTarget(node);
    const server = target && this.servers.get(target.folder);
    if (!target || !server) return;
    try {
      const plan = await server.request(ClientMethods.project, {
        session: target.session,
        viewIds: [target.viewId],
        policy: "all",
      });
      const marker = plan.markers.find((m) => m.viewId === target.viewId);
      if (!marker) {
        void vscode.window.showInformationMessage(
          `fresh-ls: view ${target.viewId} has no marker: the projection leaves it where it is.`,
        );
        return;
      }
      await vscode.env.clipboard.writeText(marker.text);
      vscode.window.setStatusBarMessage(`fresh-ls: copied the marker of ${target.viewId}`, 4000);
    } catch (err) {
      void vscode.window.showErrorMessage(`fresh-ls: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Drops one view (as its harness does after compacting it away); no question asked: the
   * agent's next read registers it again. */
  private async forgetView(node?: Node): Promise<void> {
    const target = this.rowTarget(node);
    const server = target && this.servers.get(target.folder);
    if (!target || !server) return;
    try {
      await server.request(ClientMethods.forget, { session: target.session, viewIds: [target.viewId] });
      vscode.window.setStatusBarMessage(`fresh-ls: forgot view ${target.viewId} of ${target.session}`, 4000);
    } catch (err) {
      void vscode.window.showErrorMessage(`fresh-ls: ${err instanceof Error ? err.message : String(err)}`);
    }
    await this.refreshFolder(target.folder);
  }

  private async openView(target: ViewTarget): Promise<void> {
    const server = this.servers.get(target.folder);
    if (!server) return;
    let view = this.model.view(target.folder, target.session, target.viewId);
    try {
      const fresh = await server.request(ClientMethods.stale, { session: target.session, viewIds: [target.viewId] });
      view = fresh.views[0] ?? view;
    } catch (err) {
      if (!view) {
        void vscode.window.showErrorMessage(`fresh-ls: ${err instanceof Error ? err.message : String(err)}`);
        return;
      }
    }
    if (!view) return;
    const plan = openPlan(view, target.unitId);
    const fileUri = vscode.Uri.joinPath(server.folder.uri, view.path);
    const ref = { folder: target.folder, session: target.session, viewId: view.viewId, path: view.path };
    if (plan.kind === "diff") {
      await vscode.commands.executeCommand(
        "vscode.diff",
        observedDocUri(ref),
        fileUri,
        diffTitle(view.path, view.observed, target.session),
        { preview: true, selection: plan.select ? caretAt(plan.select) : undefined },
      );
    } else if (plan.kind === "file") {
      await vscode.window.showTextDocument(fileUri, { preview: true, selection: toRange(plan.select) });
    } else {
      // Plain text whatever the file's language: a fragment of code (a deleted TypeScript
      // view) must not reach a language server and show as errors in Problems.
      let doc = await vscode.workspace.openTextDocument(viewDocumentUri({ ...ref, observed: view.observed }));
      if (doc.languageId !== "plaintext") doc = await vscode.languages.setTextDocumentLanguage(doc, "plaintext");
      await vscode.window.showTextDocument(doc, { preview: true });
    }
  }

  /** A folder and session from a tree node, or asked for. */
  private async pickSession(node?: Node, purpose = "Session"): Promise<{ folder: string; session: string } | undefined> {
    if (node && node.type !== "folder" && node.type !== "message" && "session" in node) {
      return { folder: node.folder, session: node.session };
    }
    const items: (vscode.QuickPickItem & { folder: string; session: string })[] = [];
    const multi = this.model.list().length > 1;
    for (const f of this.model.list()) {
      if (node?.type === "folder" && node.folder !== f.key) continue;
      for (const s of f.status?.sessions ?? []) {
        items.push({
          label: sessionLabel(s.session),
          detail: sessionLabel(s.session) === s.session ? undefined : s.session,
          description: `${s.views} views · ${s.stale} stale${multi ? ` · ${f.name}` : ""}`,
          folder: f.key,
          session: s.session,
        });
      }
    }
    if (items.length === 0) {
      void vscode.window.showInformationMessage("fresh-ls: no agent session has registered views yet.");
      return undefined;
    }
    if (items.length === 1) return items[0];
    return vscode.window.showQuickPick(items, { placeHolder: purpose });
  }

  private async pickFolder(node?: Node): Promise<FolderServer | undefined> {
    if (node) return this.servers.get(node.folder);
    const servers = Array.from(this.servers.values());
    if (servers.length <= 1) return servers[0];
    const pick = await vscode.window.showQuickPick(
      servers.map((s) => ({ label: s.folder.name, description: s.root, server: s })),
      { placeHolder: "Workspace folder" },
    );
    return pick?.server;
  }

  private async showProjection(node?: Node): Promise<void> {
    const picked = await this.pickSession(node, "Show the projection of which session?");
    if (!picked) return;
    const uri = projectionDocUri(picked);
    this.projection.refresh();
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  private async copyEndpoint(node?: Node): Promise<void> {
    const server = await this.pickFolder(node);
    if (!server) {
      void vscode.window.showInformationMessage("fresh-ls: open a folder first.");
      return;
    }
    const stateDir = this.model.get(server.key)?.status?.stateDir;
    const file = server.endpointFile(stateDir);
    const ep = await readEndpoint(file);
    if (!ep) {
      void vscode.window.showErrorMessage(
        `fresh-ls: no endpoint at ${file}; the server for ${server.folder.name} is not listening. Run “fresh-ls: Restart Server”.`,
      );
      return;
    }
    await vscode.env.clipboard.writeText(endpointClipboard(ep, file, server.root));
    void vscode.window.showInformationMessage(
      `fresh-ls: copied the endpoint of ${server.folder.name} (${ep.address} and its token). ` +
        `A harness can also read ${file}, e.g. SyncClient.attach(root).`,
    );
  }

  private async forgetSession(node?: Node): Promise<void> {
    const picked = await this.pickSession(node, "Forget which session?");
    if (!picked) return;
    const server = this.servers.get(picked.folder);
    if (!server) return;
    const ok = await vscode.window.showWarningMessage(
      `Forget every view of agent session “${picked.session}”? Its harness will have to register them again.`,
      { modal: true },
      "Forget",
    );
    if (ok !== "Forget") return;
    const result = await server.request(ClientMethods.forget, { session: picked.session });
    void vscode.window.showInformationMessage(
      `fresh-ls: forgot ${result.forgotten} ${result.forgotten === 1 ? "view" : "views"} of ${picked.session}.`,
    );
    await this.refreshFolder(picked.folder);
  }

  /** Forgets whole sessions, by `fresh/forget` without view ids (one call per session:
   * the server has no "forget everything" and needs none). */
  private async forgetSessions(picked: { folder: string; session: string }[]): Promise<number> {
    let forgotten = 0;
    const folders = new Set<string>();
    for (const p of picked) {
      const server = this.servers.get(p.folder);
      if (!server || server.state !== "running") continue;
      forgotten += (await server.request(ClientMethods.forget, { session: p.session })).forgotten;
      folders.add(p.folder);
    }
    for (const f of folders) await this.refreshFolder(f);
    return forgotten;
  }

  private allSessions(): { folder: string; session: string }[] {
    return this.model.list().flatMap((f) => (f.status?.sessions ?? []).map((s) => ({ folder: f.key, session: s.session })));
  }

  private async forgetAll(): Promise<void> {
    const all = this.allSessions();
    if (all.length === 0) {
      void vscode.window.showInformationMessage("fresh-ls: no agent session has registered views.");
      return;
    }
    const views = this.model.list().reduce((n, f) => n + (f.status?.sessions ?? []).reduce((m, s) => m + s.views, 0), 0);
    const ok = await vscode.window.showWarningMessage(
      `Forget all ${views} ${views === 1 ? "view" : "views"} of ${all.length} agent ${all.length === 1 ? "session" : "sessions"}? Their harnesses will have to register them again.`,
      { modal: true },
      "Forget All",
    );
    if (ok !== "Forget All") return;
    const n = await this.forgetSessions(all);
    void vscode.window.showInformationMessage(`fresh-ls: forgot ${n} ${n === 1 ? "view" : "views"} of ${all.length} ${all.length === 1 ? "session" : "sessions"}.`);
  }

  /** Sessions whose last read is older than the hours asked for (a fraction is fine). */
  private async forgetOlderSessions(): Promise<void> {
    const answer = await vscode.window.showInputBox({
      title: "fresh-ls: Forget Sessions Older Than…",
      prompt: "Forget every agent session whose last read is more than this many hours ago",
      value: "24",
      validateInput: (v) => (Number.isFinite(Number(v)) && Number(v) > 0 ? undefined : "a number of hours, more than 0"),
    });
    if (answer === undefined) return;
    const hours = Number(answer);
    const now = Date.now();
    const old = this.model.list().flatMap((f) => sessionsOlderThan(f.views, now, hours).map((session) => ({ folder: f.key, session })));
    if (old.length === 0) {
      void vscode.window.showInformationMessage(`fresh-ls: no agent session is older than ${hours} ${hours === 1 ? "hour" : "hours"}.`);
      return;
    }
    const names = old.map((o) => sessionLabel(o.session)).join(", ");
    const ok = await vscode.window.showWarningMessage(
      `Forget ${old.length} agent ${old.length === 1 ? "session" : "sessions"} last active more than ${hours} ${hours === 1 ? "hour" : "hours"} ago (${names})?`,
      { modal: true },
      "Forget",
    );
    if (ok !== "Forget") return;
    const n = await this.forgetSessions(old);
    void vscode.window.showInformationMessage(`fresh-ls: forgot ${old.length} old ${old.length === 1 ? "session" : "sessions"} (${n} ${n === 1 ? "view" : "views"}).`);
  }

  async dispose(): Promise<void> {
    if (this.pollTimer) clearInterval(this.pollTimer);
    clearInterval(this.agoTimer);
    this.terminals.dispose();
    for (const r of this.refreshers.values()) r.cancel();
    await Promise.all(Array.from(this.servers.values(), (s) => s.dispose()));
    this.servers.clear();
  }
}

function fingerprint(sessions: { session: string; views: number; stale: number }[]): string {
  return JSON.stringify(sessions.map((s) => [s.session, s.views, s.stale]));
}

/** A caret at the first line of the range: reveals it without hiding the diff's colours. */
function caretAt(r: LineRange): vscode.Range {
  const line = Math.max(0, r.firstLine - 1);
  return new vscode.Range(line, 0, line, 0);
}

/** Lines `firstLine..lastLine`, whole: from the first one's start to the start of the line
 * after the last (VS Code clamps it at the end of the file). An empty range is a caret. */
function toRange(r: LineRange): vscode.Range {
  const first = Math.max(0, r.firstLine - 1);
  return new vscode.Range(first, 0, Math.max(first, r.lastLine), 0);
}
