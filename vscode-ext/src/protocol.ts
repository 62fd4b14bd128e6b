// The fresh-ls wire contract (v1.2) for the extension: method names and payload types.
//
// The types and names come from protocol.generated.ts, which is generated from the Python
// classes (fresh_ls/protocol/ -> fresh_ls/protocol/protocol.schema.json -> `python -m
// fresh_ls.protocol.ts`); tests/test_ext_contract.py fails when that file is stale and
// checks a live server's answers against the schema. Every other module imports these names
// from here; nothing spells a method string by hand. What is written here by hand is only
// what is not a wire shape: the derived helper types and functions below.
//
// No `vscode` import here: node's test runner loads this module directly.

import { CLIENT_NOTIFICATION_METHODS, ClientMethods, ClientMethodTypes, Status, StatusValues } from "./protocol.generated";

export * from "./protocol.generated";

export type ClientMethod = (typeof ClientMethods)[keyof typeof ClientMethods];

/** Worst last: a view's status is the worst of its units'. */
export const STATUS_ORDER: readonly Status[] = StatusValues;

export type ParamsOf<M extends ClientMethod> = ClientMethodTypes[M]["params"];
export type ResultOf<M extends ClientMethod> = ClientMethodTypes[M]["result"];

/** Methods of `ClientMethods` that are notifications (no result). */
export const CLIENT_NOTIFICATIONS: ReadonlySet<ClientMethod> = new Set<ClientMethod>(CLIENT_NOTIFICATION_METHODS);

/** The worse of two statuses, by the contract's order. */
export function worse(a: Status, b: Status): Status {
  return STATUS_ORDER.indexOf(a) >= STATUS_ORDER.indexOf(b) ? a : b;
}

export function isStale(status: Status): boolean {
  return status !== "fresh";
}
