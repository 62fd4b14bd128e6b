// VS Code's side of `config.ts`: the one place that calls `getConfiguration`.

import * as vscode from "vscode";
import { readSettings, SECTION, type Settings } from "./config";

export function settings(scope?: vscode.ConfigurationScope): Settings {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return readSettings((key) => config.get(key));
}
