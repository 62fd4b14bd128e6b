// The fresh-ls wire contract (v1) as TypeScript: method names and payload types, defined once.
//
// Every other module imports these names; nothing spells a method string by hand.
// tests/test_ext_contract.py (pytest) reads this file and checks it against the Python side:
// the methods of `ClientMethods` must be exactly the keys of `fresh_ls.server.params.PARAMS`,
// each `*Params` interface must have exactly the fields of its Python params class (optional
// here exactly when it has a default there), `InitializationOptions` likewise, and every
// result interface must name exactly the keys a live server returns. Keep the layout
// (one `name?: type;` per line) so that test can read it.
//
// No `vscode` import here: node's test runner loads this module directly.

/** Requests and notifications a client sends to the server. */
export const ClientMethods = {
  observe: "fresh/observe",
  stale: "fresh/stale",
  project: "fresh/project",
  commit: "fresh/commit",
  forget: "fresh/forget",
  status: "fresh/status",
  viewText: "fresh/viewText",
  didWrite: "fresh/didWrite",
} as const;

/** Notifications the server pushes to its clients. */
export const ServerMethods = {
  didInvalidate: "fresh/didInvalidate",
} as const;

export type ClientMethod = (typeof ClientMethods)[keyof typeof ClientMethods];

/** Contract error codes (JSON-RPC `error.code`). */
export const ErrorCodes = {
  invalidParams: -32602,
  outsideRoot: -32010,
  fileUnreadable: -32011,
  unknownView: -32012,
  unauthorized: -32013,
} as const;

export type Status = "fresh" | "moved" | "changed" | "ambiguous" | "deleted" | "unreadable";
/** Worst last: a view's status is the worst of its units'. */
export const STATUS_ORDER: readonly Status[] = ["fresh", "moved", "changed", "ambiguous", "deleted", "unreadable"];
export type UnitKind = "symbol" | "text" | "file";
export type ViewKind = "read" | "editResult";
export type Policy = "stale" | "all";
export type OmissionReason = "over-budget" | "ambiguous" | "deleted" | "unreadable";

export interface LineRange {
  firstLine: number;
  lastLine: number;
}

// ---- initialize ------------------------------------------------------------------------------

export interface InitializationOptions {
  token?: string;
  budgetBytes?: number;
  policy?: Policy;
}

// ---- params ----------------------------------------------------------------------------------

export interface ObserveParams {
  session: string;
  path: string;
  viewId?: string;
  firstLine?: number;
  lastLine?: number;
  text?: string;
  kind?: ViewKind;
}

export interface StaleParams {
  session: string;
  viewIds?: string[];
}

export interface ProjectParams {
  session: string;
  budgetBytes?: number;
  policy?: Policy;
  viewIds?: string[];
}

export interface CommitParams {
  planId: string;
}

export interface ForgetParams {
  session: string;
  viewIds?: string[];
}

export interface StatusParams {}

export interface ViewTextParams {
  session: string;
  viewId: string;
}

export interface DidWriteParams {
  path: string;
  session?: string;
}

export interface DidInvalidateParams {
  session: string;
  viewIds: string[];
  path: string;
}

// ---- results ---------------------------------------------------------------------------------

export interface ObservedUnit {
  unitId: string;
  kind: UnitKind;
  name?: string;
  symbolKind?: string;
  firstLine: number;
  lastLine: number;
}

export interface ObserveResult {
  viewId: string;
  path: string;
  kind?: ViewKind;
  firstLine: number;
  lastLine: number;
  status: Status;
  units: ObservedUnit[];
}

export interface StaleUnit {
  unitId: string;
  kind: UnitKind;
  name?: string;
  symbolKind?: string;
  status: Status;
  observed: LineRange;
  current: LineRange | null;
  diff: string | null;
  changedBy?: string | null;
}

export interface ObservedRange extends LineRange {
  sha256: string;
}

export interface StaleView {
  viewId: string;
  path: string;
  kind?: ViewKind;
  status: Status;
  editorDirty: boolean;
  observed: ObservedRange;
  units: StaleUnit[];
}

export interface StaleResult {
  views: StaleView[];
}

export interface Entry {
  unitId: string;
  label?: string;
  viewIds: string[];
  path: string;
  firstLine: number;
  lastLine: number;
  kind: UnitKind;
  name?: string;
  symbolKind?: string;
  bytes: number;
  sha256: string;
  status: Status;
  editorDirty?: boolean;
  header: string;
  text: string;
}

export interface Omission {
  unitId: string;
  viewIds: string[];
  path: string;
  name?: string;
  reason: OmissionReason;
  bytes?: number;
}

export interface Marker {
  viewId: string;
  text: string;
}

export interface ProjectResult {
  planId: string;
  entries: Entry[];
  omitted: Omission[];
  markers: Marker[];
  usedBytes: number;
  budgetBytes: number;
  rendered: string;
}

export interface CommitResult {
  ok: boolean;
  changed: string[];
}

export interface ForgetResult {
  forgotten: number;
}

export interface SessionSummary {
  session: string;
  views: number;
  stale: number;
}

export interface StatusResult {
  version: string;
  root: string;
  sessions: SessionSummary[];
  sources: number;
  watching: boolean;
  stateDir: string;
  plans?: number;
}

export interface ViewTextResult {
  viewId: string;
  path: string;
  kind?: ViewKind;
  firstLine: number;
  lastLine: number;
  text: string;
  sha256: string;
}

/** `<stateDir>/endpoint.json`, written by a listening server. */
export interface Endpoint {
  address: string;
  token: string;
  pid: number;
}

// ---- the method table ------------------------------------------------------------------------

/** Each client method with its params and result (`void` for notifications). */
export interface ClientMethodTypes {
  "fresh/observe": { params: ObserveParams; result: ObserveResult };
  "fresh/stale": { params: StaleParams; result: StaleResult };
  "fresh/project": { params: ProjectParams; result: ProjectResult };
  "fresh/commit": { params: CommitParams; result: CommitResult };
  "fresh/forget": { params: ForgetParams; result: ForgetResult };
  "fresh/status": { params: StatusParams; result: StatusResult };
  "fresh/viewText": { params: ViewTextParams; result: ViewTextResult };
  "fresh/didWrite": { params: DidWriteParams; result: void };
}

export interface ServerMethodTypes {
  "fresh/didInvalidate": { params: DidInvalidateParams };
}

export type ParamsOf<M extends ClientMethod> = ClientMethodTypes[M]["params"];
export type ResultOf<M extends ClientMethod> = ClientMethodTypes[M]["result"];

/** Methods of `ClientMethods` that are notifications (no result). */
export const CLIENT_NOTIFICATIONS: ReadonlySet<ClientMethod> = new Set<ClientMethod>([ClientMethods.didWrite]);

/** The worse of two statuses, by the contract's order. */
export function worse(a: Status, b: Status): Status {
  return STATUS_ORDER.indexOf(a) >= STATUS_ORDER.indexOf(b) ? a : b;
}

export function isStale(status: Status): boolean {
  return status !== "fresh";
}
