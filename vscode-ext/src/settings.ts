// VS Code's side of `config.ts`: the one place that calls `getConfiguration`.

import * as vscode from "vscode";
import { readSettingsIn, SECTION, type Settings } from "./config";

/** The folder's settings; in Restricted Mode without the folder's values of the settings
 * that pick a program or an upstream (`RESTRICTED_KEYS`). */
export function settings(scope?: vscode.ConfigurationScope): Settings {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return readSettingsIn(
    isTrusted(),
    (key) => config.get(key),
    (key) => config.inspect(key)?.globalValue,
  );
}

/** Whether the workspace is trusted (always, where Workspace Trust is off). */
export function isTrusted(): boolean {
  return vscode.workspace.isTrusted;
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

/** The user's own value of `freshLs.terminalProxy` (undefined: never set). */
export function userTerminalProxy(): unknown {
  return vscode.workspace.getConfiguration(SECTION).inspect("terminalProxy")?.globalValue;
}
