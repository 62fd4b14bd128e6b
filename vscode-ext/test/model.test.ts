import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  Commands,
  currentRange,
  groupByRecency,
  lensesFor,
  openPlan,
  recencyOf,
  sessionsOlderThan,
  PanelModel,
  naturalCompare,
  relativePath,
  sortSessions,
  staleFiles,
  sortViews,
  type FolderState,
  type Node,
} from "../src/model";
import type { StaleView } from "../src/protocol";
import { CHANGED_FILE, CHANGED_METHOD, DELETED, FRESH_INIT, MOVED, status } from "./fixtures";

function folder(key = "file:///ws", name = "ws"): FolderState {
  return { key, name, root: "/ws", state: "running", views: new Map() };
}

function modelWith(views: Record<string, StaleView[]>, key = "file:///ws"): PanelModel {
  const m = new PanelModel();
  m.upsert(folder(key));
  const sessions = Object.entries(views).map(([session, vs]) => ({
    session,
    views: vs.length,
    stale: vs.filter((v) => v.status !== "fresh").length,
  }));
  m.setSnapshot(key, status(sessions), new Map(Object.entries(views)));
  return m;
}

describe("tree model", () => {
  it("shows sessions → views → units for one folder", () => {
    const m = modelWith({ "agent-1": [FRESH_INIT, CHANGED_METHOD] });
    const top = m.children();
    assert.deepEqual(top, [{ type: "session", folder: "file:///ws", session: "agent-1" }]);
    const views = m.children(top[0]);
    // worst first
    assert.deepEqual(
      views.map((n) => (n as { viewId: string }).viewId),
      ["call_7", "call_3"],
    );
    const units = m.children(views[0]);
    assert.equal(units.length, 1);
    assert.deepEqual(units[0], {
      type: "unit",
      folder: "file:///ws",
      session: "agent-1",
      viewId: "call_7",
      unitId: "u-dad278390b",
    });
    assert.deepEqual(m.children(units[0]), []);
  });

  it("puts folders on top when the workspace has several", () => {
    const m = modelWith({ "agent-1": [CHANGED_METHOD] });
    m.upsert(folder("file:///other", "other"));
    const top = m.children();
    assert.deepEqual(top, [
      { type: "folder", folder: "file:///ws" },
      { type: "folder", folder: "file:///other" },
    ]);
    assert.equal(m.children(top[0]).length, 1);
    const row = m.row(top[0]);
    assert.equal(row.label, "ws");
    assert.equal(row.description, "1 session · 1 stale");
  });

  it("shows why the server is not running, and nothing while no session exists", () => {
    const m = new PanelModel();
    m.upsert({ ...folder(), state: "failed", error: "fresh_ls missing: run “fresh-ls: Use Bundled Sidecar”" });
    const [msg] = m.children();
    assert.equal(msg.type, "message");
    const row = m.row(msg);
    assert.equal(row.label, "fresh-ls is not running");
    assert.match(row.tooltip ?? "", /Use Bundled Sidecar/);

    const empty = modelWith({});
    assert.deepEqual(empty.children(), [], "an empty tree shows the view's welcome text");

    const starting = new PanelModel();
    starting.upsert({ ...folder(), state: "starting" });
    assert.equal(starting.row(starting.children()[0]).label, "starting the sidecar…");
  });

  it("labels a changed view with status icon, label, path and lines, and a click that opens it", () => {
    const m = modelWith({ "agent-1": [CHANGED_METHOD] });
    const node: Node = { type: "view", folder: "file:///ws", session: "agent-1", viewId: "call_7" };
    const row = m.row(node);
    assert.equal(row.label, "cart.py:8-10");
    assert.equal(row.description, "changed");
    assert.match(row.tooltip ?? "", /view call\\_7 of session agent\\-1/);
    assert.deepEqual(row.icon, { id: "diff-modified", color: "editorWarning.foreground" });
    assert.equal(row.contextValue, "view.changed");
    assert.equal(row.collapsible, "collapsed");
    assert.deepEqual(row.click, {
      command: Commands.openView,
      title: "Open view",
      args: [{ folder: "file:///ws", session: "agent-1", viewId: "call_7" }],
    });
    assert.match(row.tooltip ?? "", /\+1 line −1 line in 1 hunk/);
    assert.match(row.tooltip ?? "", /changed by a write no client reported/);
    assert.ok(row.id.includes("call_7"));
  });

  it("labels units with their definition and where they are now", () => {
    const m = modelWith({ "agent-2": [MOVED] });
    const node: Node = { type: "unit", folder: "file:///ws", session: "agent-2", viewId: "call_9", unitId: "u-helper" };
    const row = m.row(node);
    assert.equal(row.label, "function helper");
    assert.equal(row.description, "moved · src/util.py lines 3-4 → now lines 5-6");
    assert.deepEqual(row.icon, { id: "arrow-swap", color: "charts.blue" });
    assert.deepEqual(row.click?.args, [{ folder: "file:///ws", session: "agent-2", viewId: "call_9", unitId: "u-helper" }]);
  });

  it("describes sessions with their counts", () => {
    const m = modelWith({ "agent-1": [CHANGED_METHOD, FRESH_INIT] });
    const row = m.row({ type: "session", folder: "file:///ws", session: "agent-1" });
    assert.equal(row.label, "agent-1");
    assert.equal(row.description, "2 views · 1 stale");
    assert.equal(row.contextValue, "session");
  });

  it("counts stale views for the status bar and keeps summaries true after a session update", () => {
    const m = modelWith({ "agent-1": [CHANGED_METHOD, FRESH_INIT], "agent-2": [MOVED] });
    assert.equal(m.staleCount(), 2);
    assert.equal(m.sessionCount(), 2);
    m.setSessionViews("file:///ws", "agent-1", [FRESH_INIT]);
    assert.equal(m.staleCount(), 1);
    m.setSessionViews("file:///ws", "agent-2", []);
    assert.equal(m.sessionCount(), 1);
    assert.deepEqual(
      m.children().map((n) => (n as { session: string }).session),
      ["agent-1"],
    );
  });

  it("orders views worst first, then path and line, stably", () => {
    const order = sortViews([FRESH_INIT, MOVED, DELETED, CHANGED_FILE, CHANGED_METHOD]).map((v) => v.viewId);
    assert.deepEqual(order, ["call_10", "call_8", "call_7", "call_9", "call_3"]);
  });
});

describe("open plan", () => {
  it("opens a diff for changed views, at the current lines", () => {
    assert.deepEqual(openPlan(CHANGED_METHOD), { kind: "diff", select: { firstLine: 8, lastLine: 10 } });
    assert.deepEqual(openPlan(CHANGED_METHOD, "u-dad278390b"), { kind: "diff", select: { firstLine: 8, lastLine: 10 } });
  });

  it("opens the file for fresh and moved views, the observed text alone for deleted ones", () => {
    assert.deepEqual(openPlan(FRESH_INIT), { kind: "file", select: { firstLine: 5, lastLine: 6 } });
    assert.deepEqual(openPlan(MOVED), { kind: "file", select: { firstLine: 5, lastLine: 6 } });
    assert.deepEqual(openPlan(DELETED), { kind: "observed" });
  });

  it("diffs a view with a deleted definition when other lines are still found", () => {
    const mixed: StaleView = {
      ...CHANGED_METHOD,
      status: "deleted",
      units: [
        CHANGED_METHOD.units[0],
        { ...DELETED.units[0], unitId: "u-x", kind: "symbol", name: "gone" },
      ],
    };
    assert.deepEqual(openPlan(mixed), { kind: "diff", select: { firstLine: 8, lastLine: 10 } });
    assert.deepEqual(openPlan(mixed, "u-x"), { kind: "observed" });
  });

  it("spans the units' current ranges", () => {
    const two: StaleView = {
      ...CHANGED_METHOD,
      units: [
        { ...CHANGED_METHOD.units[0], current: { firstLine: 12, lastLine: 14 } },
        { ...FRESH_INIT.units[0], current: { firstLine: 5, lastLine: 6 } },
        { ...DELETED.units[0] },
      ],
    };
    assert.deepEqual(currentRange(two), { firstLine: 5, lastLine: 14 });
    assert.equal(currentRange(DELETED), null);
  });
});

describe("code lenses", () => {
  it("gives every stale view its lens: one per session and definition, file-level views too", () => {
    const m = modelWith({
      "agent-1": [
        CHANGED_METHOD,
        CHANGED_FILE,
        FRESH_INIT,
        // another view of the same method, whose own lines are now further down
        { ...CHANGED_METHOD, viewId: "call_8", units: [{ ...CHANGED_METHOD.units[0], current: { firstLine: 9, lastLine: 10 } }] },
      ],
      "agent-2": [{ ...CHANGED_METHOD, viewId: "call_x", units: [{ ...CHANGED_METHOD.units[0], current: { firstLine: 8, lastLine: 11 } }] }],
    });
    const lenses = lensesFor(m.get("file:///ws"), "cart.py");
    assert.deepEqual(
      lenses.map((l) => [l.line, l.session, l.viewId, l.title]),
      [
        [8, "agent-1", "call_7", "agent-1 saw an older version · Show diff"],
        [8, "agent-2", "call_x", "agent-2 saw an older version · Show diff"],
        // the whole-file view, at its first changed line
        [9, "agent-1", "call_8", "agent-1 saw an older version of this file · Show diff"],
      ],
    );
    assert.deepEqual(lensesFor(m.get("file:///ws"), "other.py"), []);
    assert.deepEqual(lensesFor(undefined, "cart.py"), []);
  });
});

describe("relativePath", () => {
  it("gives root-relative paths with / and refuses paths outside", () => {
    assert.equal(relativePath("/ws", "/ws/src/a.py"), "src/a.py");
    assert.equal(relativePath("/ws/", "/ws/a.py"), "a.py");
    assert.equal(relativePath("C:\\ws", "C:\\ws\\src\\a.py"), "src/a.py");
    assert.equal(relativePath("/ws", "/wsx/a.py"), undefined);
    assert.equal(relativePath("/ws", "/ws"), undefined);
  });
});

describe("order and attention", () => {
  it("sorts view ids and sessions naturally: call_9 before call_10", () => {
    const views = ["call_10", "call_9", "call_1"].map((viewId) => ({ ...FRESH_INIT, viewId }));
    assert.deepEqual(sortViews(views).map((v) => v.viewId), ["call_1", "call_9", "call_10"]);
    assert.deepEqual(
      sortSessions([{ session: "agent-10", views: 1, stale: 0 }, { session: "agent-2", views: 1, stale: 0 }]).map((s) => s.session),
      ["agent-2", "agent-10"],
    );
    assert.ok(naturalCompare("a", "b") < 0 && naturalCompare("x", "x") === 0);
  });

  it("a moved view does not call for attention; a changed one does", () => {
    const m = new PanelModel();
    m.upsert({ key: "k", name: "ws", root: "/ws", state: "running", views: new Map() });
    m.setSessionViews("k", "s", [{ ...MOVED, viewId: "v1" }, { ...FRESH_INIT, viewId: "v0" }]);
    assert.equal(m.attentionCount(), 0);
    m.setSessionViews("k", "s", [{ ...MOVED, viewId: "v1" }, { ...CHANGED_METHOD, viewId: "v2" }]);
    assert.equal(m.attentionCount(), 1);
  });
});

describe("explorer decorations", () => {
  it("count the views of each file that need attention", () => {
    const m = new PanelModel();
    m.upsert({ key: "k", name: "ws", root: "/ws", state: "running", views: new Map() });
    m.setSessionViews("k", "a", [CHANGED_METHOD, { ...MOVED, viewId: "m" }, FRESH_INIT]);
    m.setSessionViews("k", "b", [{ ...CHANGED_METHOD, viewId: "x" }]);
    assert.deepEqual([...staleFiles(m.get("k"))], [[CHANGED_METHOD.path, 2]]);
    assert.equal(staleFiles(undefined).size, 0);
  });
});

describe("filter and grouping", () => {
  const ids = (nodes: Node[]) => nodes.map((n) => ("viewId" in n ? n.viewId : n.type === "file" ? `file ${n.path}` : n.type));

  it("only stale: drops fresh views, and sessions left with none", () => {
    const m = modelWith({ "agent-1": [FRESH_INIT, CHANGED_METHOD], "agent-2": [FRESH_INIT] });
    m.options = { onlyStale: true, groupBy: "session" };
    const top = m.children();
    assert.deepEqual(top, [{ type: "session", folder: "file:///ws", session: "agent-1" }]);
    assert.deepEqual(ids(m.children(top[0])), ["call_7"]);
  });

  it("only stale with nothing stale says so instead of the welcome text", () => {
    const m = modelWith({ "agent-1": [FRESH_INIT] });
    m.options = { onlyStale: true, groupBy: "session" };
    const top = m.children();
    assert.equal(top.length, 1);
    assert.equal(m.row(top[0]).label, "no stale views");
    // No session at all: still the welcome text (an empty list).
    const empty = modelWith({});
    empty.options = { onlyStale: true, groupBy: "session" };
    assert.deepEqual(empty.children(), []);
  });

  it("by file: files → views of every session, worst first, each row naming its session", () => {
    const m = modelWith({ "agent-2": [CHANGED_FILE, MOVED], "agent-1": [FRESH_INIT, CHANGED_METHOD] });
    m.options = { onlyStale: false, groupBy: "file" };
    const files = m.children();
    assert.deepEqual(ids(files), ["file cart.py", "file src/util.py"]);
    const cart = m.children(files[0]);
    assert.deepEqual(ids(cart), ["call_8", "call_7", "call_3"]);
    assert.deepEqual(cart[0], { type: "view", folder: "file:///ws", session: "agent-2", viewId: "call_8", under: "file" });
    assert.equal(m.row(cart[1]).label, "cart.py:8-10");
    assert.match(m.row(cart[1]).description ?? "", /^changed · agent-1/);
    const fileRow = m.row(files[0]);
    assert.equal(fileRow.label, "cart.py");
    assert.equal(fileRow.description, "3 views · 2 stale · 2 sessions");
    assert.equal(fileRow.contextValue, "file");
    // Units stay under their view.
    assert.equal(m.children(cart[1]).length, 1);
  });

  it("by file and only stale together", () => {
    const m = modelWith({ "agent-1": [FRESH_INIT, CHANGED_METHOD] });
    m.options = { onlyStale: true, groupBy: "file" };
    const files = m.children();
    assert.deepEqual(ids(m.children(files[0])), ["call_7"]);
  });

  it("says when each view was read, by the model's clock", () => {
    const m = new PanelModel(() => 1_700_000_000_000 + 7 * 60_000);
    m.upsert(folder());
    m.setSnapshot("file:///ws", status([{ session: "a", views: 1, stale: 1 }]), new Map([["a", [{ ...CHANGED_METHOD, observedAt: 1_700_000_000 }]]]));
    const [view] = m.children(m.children()[0]);
    assert.equal(m.row(view).description, "changed · read 7 minutes ago");
    const session = m.children()[0];
    assert.match(m.row(session).label, /^a · started \d\d:\d\d$/);
    assert.match(m.row(session).tooltip ?? "", /started .* · last read 7 minutes ago/);
    assert.match(m.row(view).tooltip ?? "", /read 7 minutes ago \(/);
  });
});

describe("sessions by recency", () => {
  const now = new Date(2026, 11, 4, 15, 30).getTime();
  const at = (h: number, m: number, day = 4) => new Date(2026, 11, day, h, m).getTime() / 1000;
  const viewAt = (viewId: string, observedAt: number): StaleView => ({ ...FRESH_INIT, viewId, observedAt });

  it("groups by the last read: the last hour, earlier today, before today", () => {
    assert.equal(recencyOf(at(15, 0), now), "hour");
    assert.equal(recencyOf(at(9, 0), now), "today");
    assert.equal(recencyOf(at(23, 0, 3), now), "older");
    assert.equal(recencyOf(undefined, now), "hour");
    const last: Record<string, number> = { a: at(15, 10), b: at(8, 0), c: at(10, 0, 1), d: at(15, 29) };
    assert.deepEqual(groupByRecency(["a", "b", "c", "d"], (s) => last[s], now), [
      { group: "hour", sessions: ["a", "d"] },
      { group: "today", sessions: ["b"] },
      { group: "older", sessions: ["c"] },
    ]);
  });

  it("shows group rows only when the sessions span two groups", () => {
    const m = new PanelModel(() => now);
    m.upsert(folder());
    const views = new Map([
      ["new", [viewAt("v1", at(15, 20))]],
      ["old", [viewAt("v2", at(9, 0, 2)), viewAt("v3", at(10, 0, 2))]],
    ]);
    m.setSnapshot("file:///ws", status([{ session: "new", views: 1, stale: 0 }, { session: "old", views: 2, stale: 0 }]), views);
    const top = m.children();
    assert.deepEqual(top.map((n) => (n.type === "recency" ? n.group : n.type)), ["hour", "older"]);
    assert.equal(m.row(top[1]).label, "Before today");
    assert.equal(m.row(top[1]).description, "1 session");
    assert.deepEqual(m.children(top[1]).map((n) => (n.type === "session" ? n.session : n.type)), ["old"]);
    // one group: no group rows
    m.setSnapshot("file:///ws", status([{ session: "new", views: 1, stale: 0 }]), new Map([["new", views.get("new") ?? []]]));
    assert.deepEqual(m.children().map((n) => n.type), ["session"]);
  });

  it("finds the sessions older than N hours by their last read", () => {
    const views = new Map([
      ["a", [viewAt("v1", at(15, 0)), viewAt("v2", at(9, 0))]], // last read half an hour ago
      ["b", [viewAt("v3", at(9, 0))]],
      ["c", [{ ...FRESH_INIT, observedAt: undefined }]], // no time: never "old"
    ]);
    assert.deepEqual(sessionsOlderThan(views, now, 1), ["b"]);
    assert.deepEqual(sessionsOlderThan(views, now, 0.25), ["a", "b"]);
    assert.deepEqual(sessionsOlderThan(views, now, 24), []);
  });
});
