// GENERATED from fresh_ls/protocol/protocol.schema.json by
// `python -P -m fresh_ls.protocol.ts` (make protocol): do not edit. The Python classes
// in fresh_ls/protocol/__init__.py are the source; change them, then run
// `make protocol`. tests/test_ext_contract.py fails while either file is stale.
//
// No imports: node's test runner loads this module directly.

export const PROTOCOL_VERSION = "1.3";

/** Requests and notifications a client sends to the server. */
export const ClientMethods = {
  observe: "fresh/observe",
  stale: "fresh/stale",
  statuses: "fresh/statuses",
  project: "fresh/project",
  commit: "fresh/commit",
  forget: "fresh/forget",
  status: "fresh/status",
  viewText: "fresh/viewText",
  checkEdit: "fresh/checkEdit",
  gate: "fresh/gate",
  didWrite: "fresh/didWrite",
} as const;

/** Notifications the server pushes to its clients. */
export const ServerMethods = {
  didInvalidate: "fresh/didInvalidate",
} as const;

/** Methods of the contract this server does not serve yet (they answer -32601). */
export const UNSERVED_METHODS = [
] as const;

/** Contract error codes (JSON-RPC `error.code`). */
export const ErrorCodes = {
  invalidParams: -32602,
  outsideRoot: -32010,
  fileUnreadable: -32011,
  unknownView: -32012,
  unauthorized: -32013,
} as const;

export type CheckEditReason = "known" | "changed" | "unseen" | "ambiguous" | "missing";
export const CheckEditReasonValues: readonly CheckEditReason[] = [
  "known",
  "changed",
  "unseen",
  "ambiguous",
  "missing",
];

export type OmissionReason = "over-budget" | "ambiguous" | "deleted" | "unreadable";
export const OmissionReasonValues: readonly OmissionReason[] = [
  "over-budget",
  "ambiguous",
  "deleted",
  "unreadable",
];

export type Placement = "end" | "anchored";
export const PlacementValues: readonly Placement[] = [
  "end",
  "anchored",
];

export type Policy = "stale" | "all";
export const PolicyValues: readonly Policy[] = [
  "stale",
  "all",
];

export type Status = "fresh" | "moved" | "changed" | "ambiguous" | "deleted" | "unreadable";
export const StatusValues: readonly Status[] = [
  "fresh",
  "moved",
  "changed",
  "ambiguous",
  "deleted",
  "unreadable",
];

export type UnitKind = "symbol" | "text" | "file";
export const UnitKindValues: readonly UnitKind[] = [
  "symbol",
  "text",
  "file",
];

export type Verdict = "allow" | "deny";
export const VerdictValues: readonly Verdict[] = [
  "allow",
  "deny",
];

export type ViewKind = "read" | "editResult";
export const ViewKindValues: readonly ViewKind[] = [
  "read",
  "editResult",
];

export interface CheckEditParams {
  session: string;
  path: string;
  oldText?: string;
  firstLine?: number;
  lastLine?: number;
  wholeFile?: boolean;
}

export interface CheckEditResult {
  verdict: Verdict;
  reason: CheckEditReason;
  units: CheckEditUnit[];
  text: string;
  viewId?: string;
  retryable?: boolean; // addition to the contract
}

/** A unit of the edit's region: its current lines (a definition whole), and what the session knew of it. ``status`` is ``changed`` (or the view's worse status) when it changed since the session's view, else ``fresh``; ``known`` (an addition) is false when the session never saw all of it. */
export interface CheckEditUnit {
  kind: UnitKind;
  name?: string;
  symbolKind?: string;
  firstLine: number;
  lastLine: number;
  status: Status;
  changedBy: string | null;
  diff: string | null;
  known?: boolean; // addition to the contract
}

export interface CommitParams {
  planId: string;
}

export interface CommitResult {
  ok: boolean;
  changed: string[];
}

export interface DidInvalidateParams {
  session: string;
  viewIds: string[];
  path: string;
}

export interface DidWriteParams {
  path: string;
  session?: string;
  firstLine?: number;
  lastLine?: number;
}

/** ``<stateDir>/endpoint.json``, written by a listening server. */
export interface Endpoint {
  address: string;
  token: string;
  pid: number;
}

export interface Entry {
  unitId: string;
  label?: string; // addition to the contract
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
  editorDirty?: boolean; // addition to the contract
  header: string;
  text: string;
}

export interface ForgetParams {
  session: string;
  viewIds?: string[];
}

export interface ForgetResult {
  forgotten: number;
}

export interface GateParams {
  session: string;
  viewIds?: string[];
}

export interface GateResult {
  proceed: boolean;
  stale: GateStaleView[];
}

export interface GateStaleView {
  viewId: string;
  path: string;
  status: Status;
  changedBy: string | null;
}

export interface InitializationOptions {
  token?: string;
  budgetBytes?: number;
  policy?: Policy;
}

export interface LineRange {
  firstLine: number;
  lastLine: number;
}

export interface Marker {
  viewId: string;
  text: string;
}

export interface ObserveParams {
  session: string;
  path: string;
  viewId?: string;
  firstLine?: number;
  lastLine?: number;
  ranges?: ObserveRange[];
  text?: string;
  kind?: ViewKind;
  result?: string;
}

/** One range of a sparse view (v1.3 ``ranges``): 1-based, inclusive. */
export interface ObserveRange {
  firstLine: number;
  lastLine: number;
}

export interface ObserveResult {
  viewId: string;
  path: string;
  firstLine: number;
  lastLine: number;
  kind?: ViewKind; // addition to the contract
  status: Status;
  units: ObservedUnit[];
  ranges?: LineRange[];
}

export interface ObservedRange {
  firstLine: number;
  lastLine: number;
  sha256: string;
}

export interface ObservedUnit {
  unitId: string;
  kind: UnitKind;
  name?: string;
  symbolKind?: string;
  firstLine: number;
  lastLine: number;
}

export interface Omission {
  unitId: string;
  viewIds: string[];
  path: string;
  name?: string;
  reason: OmissionReason;
  bytes?: number;
}

export interface ProjectParams {
  session: string;
  budgetBytes?: number;
  policy?: Policy;
  viewIds?: string[];
  placement?: Placement;
  results?: string[];
  bytesAfter?: number[];
}

export interface ProjectResult {
  planId: string;
  entries: Entry[];
  omitted: Omission[];
  markers: Marker[];
  usedBytes: number;
  budgetBytes: number;
  rendered: string;
  placement?: Placement;
  refreshes?: Refresh[];
  refreshBytes?: number;
}

/** One refresh of ``placement: anchored``: ``text`` goes right after the tool result of the tool call ``after``, in every request that still holds that tool result. */
export interface Refresh {
  refreshId: string;
  after: string;
  text: string;
}

export interface SessionSummary {
  session: string;
  views: number;
  stale: number;
}

export interface StaleParams {
  session: string;
  viewIds?: string[];
}

export interface StaleResult {
  views: StaleView[];
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
  changedBy: string | null;
}

export interface StaleView {
  viewId: string;
  path: string;
  kind?: ViewKind; // addition to the contract
  status: Status;
  editorDirty: boolean;
  observed: ObservedRange;
  units: StaleUnit[];
  observedAt?: number; // addition to the contract
  ranges?: LineRange[];
}

export interface StatusParams {}

export interface StatusResult {
  version: string;
  root: string;
  sessions: SessionSummary[];
  sources: number;
  watching: boolean;
  stateDir: string;
  plans?: number; // addition to the contract
}

/** ``fresh/statuses`` (an addition): each view's status and nothing else, for a client that only needs to know which views the server holds and which went stale (the proxy, on every model request): ``fresh/stale`` also builds every view's units and diffs. */
export interface StatusesResult {
  views: ViewStatus[];
}

export interface ViewStatus {
  viewId: string;
  status: Status;
}

export interface ViewTextParams {
  session: string;
  viewId: string;
}

export interface ViewTextResult {
  viewId: string;
  path: string;
  kind: ViewKind;
  firstLine: number;
  lastLine: number;
  text: string;
  sha256: string;
  ranges?: LineRange[];
}

/** Each client method with its params and result (`void` for notifications). */
export interface ClientMethodTypes {
  "fresh/observe": { params: ObserveParams; result: ObserveResult };
  "fresh/stale": { params: StaleParams; result: StaleResult };
  "fresh/statuses": { params: StaleParams; result: StatusesResult };
  "fresh/project": { params: ProjectParams; result: ProjectResult };
  "fresh/commit": { params: CommitParams; result: CommitResult };
  "fresh/forget": { params: ForgetParams; result: ForgetResult };
  "fresh/status": { params: StatusParams; result: StatusResult };
  "fresh/viewText": { params: ViewTextParams; result: ViewTextResult };
  "fresh/checkEdit": { params: CheckEditParams; result: CheckEditResult };
  "fresh/gate": { params: GateParams; result: GateResult };
  "fresh/didWrite": { params: DidWriteParams; result: void };
}

export interface ServerMethodTypes {
  "fresh/didInvalidate": { params: DidInvalidateParams };
}

/** Methods of `ClientMethods` that are notifications (no result). */
export const CLIENT_NOTIFICATION_METHODS = [
  "fresh/didWrite",
] as const;
