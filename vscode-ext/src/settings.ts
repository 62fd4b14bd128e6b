// VS Code's side of `config.ts`: the one place that calls `getConfiguration`.

import * as vscode from "vscode";
import { readSettings, SECTION, type Settings } from "./config";

export function settings(scope?: vscode.ConfigurationScope): Settings {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return readSettings((key) => config.get(key));
}

/** Clears `freshLs.python` at every level it is set (user, workspace, each folder), so no
 * override is left to shadow the sidecar bundled in the .vsix. */
export async function clearPythonOverride(): Promise<void> {
  const scopes: [vscode.ConfigurationTarget, vscode.ConfigurationScope | undefined][] = [
    [vscode.ConfigurationTarget.Global, undefined],
    [vscode.ConfigurationTarget.Workspace, undefined],
    ...(vscode.workspace.workspaceFolders ?? []).map(
      (f): [vscode.ConfigurationTarget, vscode.ConfigurationScope] => [vscode.ConfigurationTarget.WorkspaceFolder, f],
    ),
  ];
  for (const [target, scope] of scopes) {
    const config = vscode.workspace.getConfiguration(SECTION, scope);
    const inspected = config.inspect<string>("python");
    const value =
      target === vscode.ConfigurationTarget.Global
        ? inspected?.globalValue
        : target === vscode.ConfigurationTarget.Workspace
          ? inspected?.workspaceValue
          : inspected?.workspaceFolderValue;
    if (value !== undefined) await config.update("python", undefined, target);
  }
}

/** Turns `freshLs.terminalProxy` on or off for the user (the change listener does the rest). */
export async function setTerminalProxy(on: boolean): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update("terminalProxy", on, vscode.ConfigurationTarget.Global);
}
