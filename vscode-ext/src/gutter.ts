// The changed lines marked in the gutter (and the overview ruler) of open files, as a diff
// gutter marks lines changed since the last commit: here, since an agent read them.

import * as path from "node:path";
import * as vscode from "vscode";
import { gutterHover, gutterMarks } from "./gutterlines";
import { relativePath, type PanelModel } from "./model";
import { settings } from "./settings";

export class GutterMarks implements vscode.Disposable {
  private readonly type: vscode.TextEditorDecorationType;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly model: PanelModel, extensionPath: string) {
    this.type = vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.file(path.join(extensionPath, "media", "gutter-stale.svg")),
      gutterIconSize: "contain",
      overviewRulerColor: new vscode.ThemeColor("editorWarning.foreground"),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    this.subscriptions.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.refresh()),
      // Lines typed in an unsaved buffer move the marks with them until the next refresh.
    );
  }

  /** Repaints every visible editor of a file on disk. */
  refresh(): void {
    for (const editor of vscode.window.visibleTextEditors) this.paint(editor);
  }

  private paint(editor: vscode.TextEditor): void {
    const doc = editor.document;
    if (doc.uri.scheme !== "file") return;
    const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
    const rel = folder ? relativePath(folder.uri.fsPath, doc.uri.fsPath) : undefined;
    if (!folder || !rel || !settings(doc.uri).gutter) {
      editor.setDecorations(this.type, []);
      return;
    }
    const marks = gutterMarks(this.model.get(folder.uri.toString()), rel);
    editor.setDecorations(
      this.type,
      marks.map((mark) => {
        const line = Math.min(mark.line, doc.lineCount) - 1;
        return { range: new vscode.Range(line, 0, line, 0), hoverMessage: gutterHover(mark) };
      }),
    );
  }

  dispose(): void {
    this.type.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
