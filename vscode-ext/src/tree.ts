// The agent views TreeView: maps the pure model's rows onto vscode.TreeItem.

import * as vscode from "vscode";
import type { IconSpec } from "./labels";
import type { Node, PanelModel } from "./model";

export class AgentViewsProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** Rows the user expanded or collapsed, by id. VS Code forgets the state of rows that left
   * the tree, and a restart replaces every row by "starting the sidecar…" for a moment. */
  private readonly userState = new Map<string, boolean>();

  constructor(private readonly model: PanelModel) {}

  /** Wires the view's expand/collapse events to the remembered state. */
  track(view: vscode.TreeView<Node>): vscode.Disposable {
    return vscode.Disposable.from(
      view.onDidExpandElement((e) => this.userState.set(this.model.row(e.element).id, true)),
      view.onDidCollapseElement((e) => this.userState.set(this.model.row(e.element).id, false)),
    );
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    return this.model.children(node);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const row = this.model.row(node);
    const remembered = row.collapsible === "none" ? undefined : this.userState.get(row.id);
    const state =
      remembered !== undefined
        ? remembered
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed
        : row.collapsible === "expanded"
        ? vscode.TreeItemCollapsibleState.Expanded
        : row.collapsible === "collapsed"
          ? vscode.TreeItemCollapsibleState.Collapsed
          : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(row.label, state);
    item.id = row.id;
    item.description = row.description;
    if (row.tooltip) {
      const md = new vscode.MarkdownString(row.tooltip);
      md.supportThemeIcons = false;
      item.tooltip = md;
    }
    item.iconPath = themeIcon(row.icon);
    item.contextValue = row.contextValue;
    if (row.click) item.command = { command: row.click.command, title: row.click.title, arguments: row.click.args };
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function themeIcon(icon: IconSpec | undefined): vscode.ThemeIcon | undefined {
  if (!icon) return undefined;
  return icon.color ? new vscode.ThemeIcon(icon.id, new vscode.ThemeColor(icon.color)) : new vscode.ThemeIcon(icon.id);
}
