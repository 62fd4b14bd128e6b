// Read-only documents (what the agent saw; the projection) and the CodeLens on definitions
// that a session saw in an older version.

import * as vscode from "vscode";
import {
  numberedView,
  OBSERVED_SCHEME,
  parseViewDocUri,
  PROJECTION_SCHEME,
  VIEW_SCHEME,
  viewDocUri,
  type ViewDocRef,
  observedUri,
  parseObservedUri,
  parseProjectionUri,
  projectionText,
  projectionUri,
  spliceObserved,
  type ObservedRef,
  type ProjectionRef,
} from "./diffdoc";
import { Commands, currentRange, lensesFor, relativePath, staleFiles, type PanelModel, type ViewTarget } from "./model";
import { ClientMethods } from "./protocol";
import type { FolderServer } from "./server";
import { settings } from "./settings";
import { STALE_COLOR } from "./gutter";
import { FILE_BADGE, fileBadgeTooltip } from "./labels";

export type ServerLookup = (folder: string) => FolderServer | undefined;

export function toUri(parts: { scheme: string; path: string; query: string }): vscode.Uri {
  return vscode.Uri.from(parts);
}

/** `fresh-ls-observed:` — the file as the agent saw it (see diffdoc.ts): the left side of a
 * diff. It is the current file with the view's lines replaced, so it follows the file: every
 * change of the file (a save, an outside write, typing) and of the view re-renders it, and
 * the diff shows only what changed since the agent looked, never a line outside the view. */
export class ObservedProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>[]>();

  constructor(private readonly servers: ServerLookup) {
    // The right side is the file's document: VS Code reloads it when the disk changes, so its
    // change events cover saves, outside writes and typing alike.
    this.subscriptions.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === "file" && e.contentChanges.length > 0) this.fileChanged(e.document.uri);
      }),
    );
  }

  /** Re-renders the observed documents of a file now and once more when the server has
   * surely taken the change in (its watcher and the editor's didChange are not instant):
   * the view's current lines come from the server. */
  private fileChanged(file: vscode.Uri): void {
    const docs = vscode.workspace.textDocuments.filter((doc) => {
      if (doc.uri.scheme !== OBSERVED_SCHEME) return false;
      try {
        const ref = parseObservedUri(doc.uri);
        return vscode.Uri.joinPath(vscode.Uri.parse(ref.folder), ref.path).toString() === file.toString();
      } catch {
        return false;
      }
    });
    if (docs.length === 0) return;
    const key = file.toString();
    for (const t of this.timers.get(key) ?? []) clearTimeout(t);
    this.timers.set(
      key,
      [250, 1500].map((ms) => setTimeout(() => docs.forEach((d) => this.changed.fire(d.uri)), ms)),
    );
  }

  /** Re-renders the open observed documents of a folder (after its views changed). */
  refresh(folder?: string): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme !== OBSERVED_SCHEME) continue;
      try {
        if (!folder || parseObservedUri(doc.uri).folder === folder) this.changed.fire(doc.uri);
      } catch {
        // not ours
      }
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = parseObservedUri(uri);
    const server = this.servers(ref.folder);
    if (!server) throw new Error(`fresh-ls: no server for ${ref.folder}`);
    const seen = await server.request(ClientMethods.viewText, { session: ref.session, viewId: ref.viewId });
    if (ref.alone) return seen.text;
    const stale = await server.request(ClientMethods.stale, { session: ref.session, viewIds: [ref.viewId] });
    const view = stale.views[0];
    const range = view ? currentRange(view) : null;
    // The file as the right side shows it: its open document (unsaved edits too), else the disk.
    const fileUri = vscode.Uri.joinPath(server.folder.uri, seen.path);
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === fileUri.toString());
    let current: string;
    if (open) {
      current = open.getText();
    } else {
      try {
        current = new TextDecoder("utf-8").decode(await vscode.workspace.fs.readFile(fileUri));
      } catch {
        return seen.text;
      }
    }
    return spliceObserved(current, seen.text, range);
  }

  dispose(): void {
    for (const list of this.timers.values()) list.forEach(clearTimeout);
    for (const d of this.subscriptions) d.dispose();
    this.changed.dispose();
  }
}

/** `fresh-ls-view:` — what the agent saw, alone, numbered with the observed lines. */
export class ViewDocProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly servers: ServerLookup) {}

  refresh(): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === VIEW_SCHEME) this.changed.fire(doc.uri);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = parseViewDocUri(uri);
    const server = this.servers(ref.folder);
    if (!server) throw new Error(`fresh-ls: no server for ${ref.folder}`);
    const seen = await server.request(ClientMethods.viewText, { session: ref.session, viewId: ref.viewId });
    const stale = await server.request(ClientMethods.stale, { session: ref.session, viewIds: [ref.viewId] }).catch(() => undefined);
    return numberedView(seen, ref.session, ref.viewId, stale?.views[0]?.status);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function viewDocumentUri(ref: ViewDocRef): vscode.Uri {
  return toUri(viewDocUri(ref));
}

/** `fresh-ls-projection:` — the rendered projection of a session. */
export class ProjectionProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly servers: ServerLookup) {}

  refresh(): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === PROJECTION_SCHEME) this.changed.fire(doc.uri);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref: ProjectionRef = parseProjectionUri(uri);
    const server = this.servers(ref.folder);
    if (!server) throw new Error(`fresh-ls: no server for ${ref.folder}`);
    const { budgetBytes, policy } = settings(server.folder);
    const result = await server.request(ClientMethods.project, {
      session: ref.session,
      ...(budgetBytes !== null ? { budgetBytes } : {}),
      policy,
    });
    return projectionText(ref.session, result);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function observedDocUri(ref: ObservedRef): vscode.Uri {
  return toUri(observedUri(ref));
}

export function projectionDocUri(ref: ProjectionRef): vscode.Uri {
  return toUri(projectionUri(ref));
}

/** The Explorer's and the tabs' mark on files that agents saw in an older version: the
 * letter S in fresh-ls's own colour (not the warning colour of Problems: nothing is wrong
 * with the file), the count and its meaning in the tooltip. */
export class StaleFileDecorations implements vscode.FileDecorationProvider {
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeFileDecorations = this.changed.event;

  constructor(private readonly model: PanelModel) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    if (uri.scheme !== "file" || !settings(uri).fileBadge) return undefined;
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (!folder) return undefined;
    const rel = relativePath(folder.uri.fsPath, uri.fsPath);
    const n = rel ? staleFiles(this.model.get(folder.uri.toString())).get(rel) : undefined;
    if (!n) return undefined;
    return new vscode.FileDecoration(FILE_BADGE, fileBadgeTooltip(n), new vscode.ThemeColor(STALE_COLOR));
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** "agent <session> saw an older version · Show diff" above such definitions. */
export class StaleLensProvider implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly model: PanelModel) {}

  refresh(): void {
    this.changed.fire();
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (!settings(doc.uri).codeLens) return [];
    const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
    if (!folder) return [];
    const rel = relativePath(folder.uri.fsPath, doc.uri.fsPath);
    if (!rel) return [];
    const key = folder.uri.toString();
    return lensesFor(this.model.get(key), rel)
      .filter((lens) => lens.line >= 1 && lens.line <= doc.lineCount)
      .map((lens) => {
        const target: ViewTarget = { folder: key, session: lens.session, viewId: lens.viewId, unitId: lens.unitId };
        return new vscode.CodeLens(new vscode.Range(lens.line - 1, 0, lens.line - 1, 0), {
          title: lens.title,
          tooltip: `Compare what agent session ${lens.session} saw (view ${lens.viewId}) with the file on disk`,
          command: Commands.openView,
          arguments: [target],
        });
      });
  }

  dispose(): void {
    this.changed.dispose();
  }
}
