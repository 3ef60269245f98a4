import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTranslator } from "../../static/js/i18n.js";
import { leaseAge, leaseLevel, leaseStep, wholeLeaseAge } from "../../static/js/lease-age.js";
import { naturalCompare, naturalSort } from "../../static/js/k8s.js";
import { cellLabel, cellState, taintMark } from "../../static/js/node-cell.js";
import { node } from "./fixtures.js";

const t = makeTranslator({ "overview.taints": "taints {taints}", "overview.no-taints": "no taints" });
const unreachable = (effect) => ({ key: "node.kubernetes.io/unreachable", effect, timeAdded: "2026-01-01T00:01:50Z" });

test("a cell's STATUS is kubectl's: Unknown reads NotReady, a cordoned node SchedulingDisabled", () => {
  assert.deepEqual(cellState(node("node-1")), { status: "Ready", ready: true, taint: "" });
  assert.deepEqual(cellState(node("node-2", { ready: "Unknown" })), { status: "NotReady", ready: false, taint: "" });
  assert.deepEqual(cellState(node("node-3", { ready: "False" })), { status: "NotReady", ready: false, taint: "" });
  assert.equal(cellState(node("node-4", { unschedulable: true })).status, "Ready,SchedulingDisabled");
  const bare = node("node-5");
  bare.status.conditions = [];
  assert.equal(cellState(bare).status, "Unknown");
});

test("a cell's corner mark is its strongest scheduling taint", () => {
  assert.equal(taintMark(node("a")), "");
  assert.equal(taintMark(node("a", { taints: [{ key: "x", effect: "PreferNoSchedule" }] })), "");
  assert.equal(taintMark(node("a", { taints: [unreachable("NoSchedule")] })), "NoSchedule");
  assert.equal(taintMark(node("a", { taints: [unreachable("NoSchedule"), unreachable("NoExecute")] })), "NoExecute");
});

test("a cell's label says in words what its colour and marks show", () => {
  const down = node("node-7", { ready: "Unknown", taints: [unreachable("NoSchedule"), unreachable("NoExecute")] });
  assert.equal(cellLabel(t, "node-7", down, "Lease renewed 52 s ago (grace 50 s)"),
    "node-7 · NotReady · Ready=Unknown · taints node.kubernetes.io/unreachable:NoSchedule, "
    + "node.kubernetes.io/unreachable:NoExecute"
    + " · Lease renewed 52 s ago (grace 50 s)");
  assert.equal(cellLabel(t, "node-8", node("node-8"), "L"), "node-8 · Ready · no taints · L");
});

test("Lease ages against the grace period: levels, whole seconds and a coarse gauge", () => {
  assert.equal(leaseAge(10, 12), 0); // the interpolated clock may be behind the renewal
  assert.equal(wholeLeaseAge(20.1, 9.9), 11);
  assert.deepEqual([10, 25, 26, 50, 70].map((age) => leaseLevel(age, 50)), ["ok", "ok", "warn", "over", "over"]);
  // thirds: a Lease renewed every 10 s (a little later with jitter) stays at 0 for 40 and 50 s
  assert.deepEqual([10.4, 13.4, 26.7, 39.9, 40, 90].map((age) => leaseStep(age, 40, 3)), [0, 1, 2, 2, 3, 3]);
  assert.equal(leaseStep(10.4, 50, 3), 0);
});

test("naturalSort orders names as naturalCompare does, node-2 before node-10", () => {
  const names = ["node-10", "node-2", "zone-b", "node-01", "node-1", "node-1a", "Node-3", "node-",
    "node-9007199254740993", "node-9007199254740992", "a10b2", "a10b10", ""];
  const expected = [...names].sort(naturalCompare);
  assert.deepEqual(naturalSort([...names]), expected);
  const many = Array.from({ length: 500 }, (_, i) => `node-${(i * 7919) % 500}`);
  assert.deepEqual(naturalSort([...many]), [...many].sort(naturalCompare));
});

test("naturalSort's fast path (one prefix, distinct numbers) and its way out of it", () => {
  const shuffled = Array.from({ length: 3000 }, (_, i) => `node-${((i * 7919) % 3000) + 1}`);
  assert.deepEqual(naturalSort([...shuffled]), Array.from({ length: 3000 }, (_, i) => `node-${i + 1}`));
  assert.deepEqual(naturalSort(["node-1", "node-01", "node-0"]), ["node-1", "node-01", "node-0"].sort(naturalCompare));
});
