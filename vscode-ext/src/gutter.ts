// The changed lines of open files, as a diff gutter marks lines changed since the last
// commit: here, since an agent read them. A round mark with the letter S in the gutter and
// the overview ruler (not a bar that reads as git's), a hover over the whole changed range,
// and on the first changed line of each stale view a line of text at its end
// ("agent-1 saw an older version · changed by a save"). All in fresh-ls's own colour
// (`freshLs.staleForeground`), never the Problems colours.

import * as path from "node:path";
import * as vscode from "vscode";
import { gutterMarks, lineHints, markRanges, stepTo } from "./gutterlines";
import { Commands, relativePath, type PanelModel } from "./model";
import { settings } from "./settings";

/** The colour contribution (package.json `contributes.colors`). */
export const STALE_COLOR = "freshLs.staleForeground";

export class GutterMarks implements vscode.Disposable {
  private readonly type: vscode.TextEditorDecorationType;
  private readonly hintType: vscode.TextEditorDecorationType;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly model: PanelModel, extensionPath: string) {
    this.type = vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.file(path.join(extensionPath, "media", "gutter-stale.svg")),
      gutterIconSize: "70%",
      isWholeLine: true,
      overviewRulerColor: new vscode.ThemeColor(STALE_COLOR),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    this.hintType = vscode.window.createTextEditorDecorationType({
      after: {
        color: new vscode.ThemeColor(STALE_COLOR),
        fontStyle: "italic",
        margin: "0 0 0 3em",
      },
      rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
    });
    this.subscriptions.push(vscode.window.onDidChangeVisibleTextEditors(() => this.refresh()));
  }

  /** Repaints every visible editor of a file on disk. */
  refresh(): void {
    for (const editor of vscode.window.visibleTextEditors) this.paint(editor);
  }

  private where(doc: vscode.TextDocument): { key: string; rel: string } | undefined {
    if (doc.uri.scheme !== "file") return undefined;
    const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
    const rel = folder ? relativePath(folder.uri.fsPath, doc.uri.fsPath) : undefined;
    return folder && rel ? { key: folder.uri.toString(), rel } : undefined;
  }

  private paint(editor: vscode.TextEditor): void {
    const doc = editor.document;
    const at = this.where(doc);
    const config = settings(doc.uri);
    if (!at || !config.gutter) {
      editor.setDecorations(this.type, []);
    } else {
      const ranges = markRanges(gutterMarks(this.model.get(at.key), at.rel));
      editor.setDecorations(
        this.type,
        ranges.map((r) => {
          const first = clampLine(r.firstLine, doc);
          const last = clampLine(r.lastLine, doc);
          const hover = new vscode.MarkdownString();
          hover.appendText(r.hover);
          hover.appendMarkdown(
            `\n\n[Previous](command:${Commands.previousStaleChange}) · [Next stale change](command:${Commands.nextStaleChange})`,
          );
          hover.isTrusted = { enabledCommands: [Commands.nextStaleChange, Commands.previousStaleChange] };
          return { range: new vscode.Range(first, 0, last, doc.lineAt(last).text.length), hoverMessage: hover };
        }),
      );
    }
    if (!at || !config.endOfLine) {
      editor.setDecorations(this.hintType, []);
      return;
    }
    editor.setDecorations(
      this.hintType,
      lineHints(this.model.get(at.key), at.rel).map((hint) => {
        const line = clampLine(hint.line, doc);
        const end = doc.lineAt(line).text.length;
        return { range: new vscode.Range(line, end, line, end), renderOptions: { after: { contentText: hint.text } } };
      }),
    );
  }

  /** Moves the cursor of the active editor to the next (or previous) stale change of its
   * file, wrapping around; says so when the file has none. */
  step(direction: 1 | -1): void {
    const editor = vscode.window.activeTextEditor;
    const at = editor && this.where(editor.document);
    if (!editor || !at) {
      vscode.window.setStatusBarMessage("fresh-ls: open a file to go to its stale changes", 3000);
      return;
    }
    const starts = markRanges(gutterMarks(this.model.get(at.key), at.rel)).map((r) => r.firstLine);
    const line = stepTo(starts, editor.selection.active.line, direction);
    if (line === undefined) {
      vscode.window.setStatusBarMessage("fresh-ls: no agent saw an older version of this file", 3000);
      return;
    }
    const target = clampLine(line + 1, editor.document);
    const pos = new vscode.Position(target, editor.document.lineAt(target).firstNonWhitespaceCharacterIndex);
    editor.selection = new vscode.Selection(pos, pos);
    editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  dispose(): void {
    this.type.dispose();
    this.hintType.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

/** A 1-based line as a 0-based one inside the document. */
function clampLine(line: number, doc: vscode.TextDocument): number {
  return Math.max(0, Math.min(line, doc.lineCount) - 1);
}
