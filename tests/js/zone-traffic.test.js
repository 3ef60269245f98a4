// Other kubelets' traffic counted per zone over the last ten virtual seconds (large clusters).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ZoneTraffic } from "../../static/js/sequence/zone-traffic.js";

const zoneOf = (node) => (Number(node.split("-")[1]) <= 3 ? "zone-a" : "zone-b");
const kubelets = new Map([["zone-a", 2], ["zone-b", 3]]);

test("renewals and kubelet requests are counted per zone, the focused node's left out", () => {
  const traffic = new ZoneTraffic();
  traffic.add({ clock: { t: 40.5 }, renewals: { "node-1": "x", "node-2": "x", "node-5": "x" }, events: [
    { t: 40.2, type: "write", component: "kubelet-status", node: "node-4", resource: "nodes", code: 200 },
    { t: 40.3, type: "request-failed", component: "kubelet-lease", node: "node-6", resource: "leases" },
    { t: 40.3, type: "write", component: "kubelet-lease", node: "node-3", resource: "leases", code: 500 },
    { t: 40.4, type: "decision", component: "node-lifecycle-controller", node: "node-4" },
  ] }, { zoneOf, focus: "node-2" });
  assert.deepEqual(traffic.summary(41, kubelets), [
    { zone: "zone-a", kubelets: 2, leasePuts: 1, statusWrites: 0, failed: 1 },
    { zone: "zone-b", kubelets: 3, leasePuts: 1, statusWrites: 1, failed: 1 },
  ]);
});

test("failed kubelet requests condensed into `failed` count per zone, the focused node's left out", () => {
  const traffic = new ZoneTraffic();
  traffic.add({ clock: { t: 70 }, failed: { "node-4": 2, "node-5": 1, "node-2": 3 }, events: [] },
    { zoneOf, focus: "node-2" });
  traffic.add({ clock: { t: 73 }, failed: { "node-4": 1 }, events: [] }, { zoneOf, focus: "node-2" });
  assert.deepEqual(traffic.summary(74, kubelets), [
    { zone: "zone-a", kubelets: 2, leasePuts: 0, statusWrites: 0, failed: 0 },
    { zone: "zone-b", kubelets: 3, leasePuts: 0, statusWrites: 0, failed: 4 },
  ]);
});

test("only the last ten virtual seconds count: a zone that stops renewing drops to zero", () => {
  const traffic = new ZoneTraffic();
  for (let t = 0; t < 30; t++) {
    const renewals = t < 12 ? { "node-1": "x", "node-4": "x" } : { "node-1": "x" };
    traffic.add({ clock: { t }, renewals, events: [] }, { zoneOf, focus: null });
  }
  const [a, b] = traffic.summary(29.5, kubelets);
  assert.equal(a.leasePuts, 10);
  assert.equal(b.leasePuts, 0);
  assert.ok(traffic.seconds.size <= 11);
});
