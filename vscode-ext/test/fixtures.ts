// Payloads as a real fresh-ls server returned them (cart.py, `* RATE` → `* RATE * 2`).

import type { StaleView, StatusResult } from "../src/protocol";

export const CART_BEFORE =
  "RATE = 10\n\n\nclass Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self, quantity):\n        subtotal = quantity * RATE\n        return subtotal\n";
export const CART_AFTER = CART_BEFORE.replace("* RATE", "* RATE * 2");
export const TOTAL_OBSERVED = "    def total(self, quantity):\n        subtotal = quantity * RATE\n        return subtotal\n";

export const CHANGED_METHOD: StaleView = {
  viewId: "call_7",
  path: "cart.py",
  kind: "read",
  status: "changed",
  editorDirty: false,
  observed: { firstLine: 8, lastLine: 10, sha256: "1292d62b61b5bc71866ae2ee8b656d5d4bdb0c6e146585c444ec9d1df09d2b36" },
  units: [
    {
      unitId: "u-dad278390b",
      kind: "symbol",
      name: "Cart.total",
      symbolKind: "method",
      status: "changed",
      observed: { firstLine: 8, lastLine: 10 },
      current: { firstLine: 8, lastLine: 10 },
      diff:
        "--- cart.py lines 8-10 (observed)\n+++ cart.py lines 8-10 (current)\n@@ -8,3 +8,3 @@\n" +
        "     def total(self, quantity):\n-        subtotal = quantity * RATE\n+        subtotal = quantity * RATE * 2\n         return subtotal\n",
      changedBy: "outside",
    },
  ],
};

export const CHANGED_FILE: StaleView = {
  viewId: "call_8",
  path: "cart.py",
  kind: "read",
  status: "changed",
  editorDirty: false,
  observed: { firstLine: 1, lastLine: 10, sha256: "ef9ac2987b23cfded875869d7de8ad16624641003019c1c52e0fdbcaf1d204ce" },
  units: [
    {
      unitId: "u-d59a678c0f",
      kind: "file",
      status: "changed",
      observed: { firstLine: 1, lastLine: 10 },
      current: { firstLine: 1, lastLine: 10 },
      diff:
        "--- cart.py lines 1-10 (observed)\n+++ cart.py lines 1-10 (current)\n@@ -6,5 +6,5 @@\n" +
        "         self.items = []\n \n     def total(self, quantity):\n-        subtotal = quantity * RATE\n+        subtotal = quantity * RATE * 2\n         return subtotal\n",
      changedBy: "outside",
    },
  ],
};

export const FRESH_INIT: StaleView = {
  viewId: "call_3",
  path: "cart.py",
  kind: "read",
  status: "fresh",
  editorDirty: false,
  observed: { firstLine: 5, lastLine: 6, sha256: "00" },
  units: [
    {
      unitId: "u-init",
      kind: "symbol",
      name: "Cart.__init__",
      symbolKind: "method",
      status: "fresh",
      observed: { firstLine: 5, lastLine: 6 },
      current: { firstLine: 5, lastLine: 6 },
      diff: null,
      changedBy: null,
    },
  ],
};

export const MOVED: StaleView = {
  viewId: "call_9",
  path: "src/util.py",
  kind: "editResult",
  status: "moved",
  editorDirty: true,
  observed: { firstLine: 3, lastLine: 4, sha256: "11" },
  units: [
    {
      unitId: "u-helper",
      kind: "symbol",
      name: "helper",
      symbolKind: "function",
      status: "moved",
      observed: { firstLine: 3, lastLine: 4 },
      current: { firstLine: 5, lastLine: 6 },
      diff: null,
      changedBy: "session:agent-2",
    },
  ],
};

export const DELETED: StaleView = {
  viewId: "call_10",
  path: "gone.py",
  kind: "read",
  status: "deleted",
  editorDirty: false,
  observed: { firstLine: 1, lastLine: 2, sha256: "22" },
  units: [
    {
      unitId: "u-gone",
      kind: "file",
      status: "deleted",
      observed: { firstLine: 1, lastLine: 2 },
      current: null,
      diff: null,
      changedBy: null,
    },
  ],
};

export function status(sessions: StatusResult["sessions"]): StatusResult {
  return {
    version: "0.1.0",
    root: "/ws",
    sessions,
    sources: 1,
    watching: true,
    stateDir: "/ws/.fresh-ls",
    plans: 0,
  };
}
