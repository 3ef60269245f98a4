// The page's object store at node level (docs/websocket-protocol.md "Detail levels"): pod counts
// from the server, Lease renewals condensed into `renewals`, a frame that covers more seqs than
// it carries events, and one opened node's details kept exact by the frames' `details`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ObjectStore } from "../../static/js/store.js";

const lease = (name, renewTime) => ({
  metadata: { name, namespace: "kube-node-lease" }, spec: { holderIdentity: name, renewTime },
});
const podOn = (name, node, ready = true) => ({
  metadata: { name, namespace: "default" }, spec: { nodeName: node },
  status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});

function nodeLevelStore() {
  const store = new ObjectStore();
  store.loadSnapshot({
    last_seq: 100, detail: "nodes",
    objects: {
      nodes: [{ metadata: { name: "node-1" } }, { metadata: { name: "node-2" } }],
      leases: [lease("node-1", "t0"), lease("node-2", "t0")], pods: [],
    },
    podCounts: {
      "node-1": { total: 3, ready: 3, notReady: 0, terminating: 0 },
      "": { total: 0, ready: 0, notReady: 0, terminating: 0 },
    },
  });
  return store;
}

test("pod counts come from the server at node level and are counted from pods otherwise", () => {
  const store = nodeLevelStore();
  assert.equal(store.podCounts("node-1").ready, 3);
  store.applyFrameExtras({
    seq: [101, 140], podCounts: { "node-1": { total: 3, ready: 1, notReady: 2, terminating: 0 } },
  });
  assert.deepEqual(store.podCounts("node-1"), { total: 3, ready: 1, notReady: 2, terminating: 0 });

  const small = new ObjectStore();
  small.loadSnapshot({ last_seq: 1, objects: { pods: [podOn("a", "node-1"), podOn("b", "node-1", false)] } });
  assert.deepEqual(small.podCounts("node-1"), { total: 2, ready: 1, notReady: 1, terminating: 0 });
});

test("a node-level frame moves lastSeq to its end and applies its renewals", () => {
  const store = nodeLevelStore();
  store.applyFrameExtras({ seq: [101, 180], renewals: { "node-2": "t9" } });
  assert.equal(store.lastSeq, 180);
  assert.equal(store.lease("node-2").spec.renewTime, "t9");
  assert.equal(store.lease("node-2").spec.holderIdentity, "node-2");
  assert.equal(store.lease("node-1").spec.renewTime, "t0");
});

test("an opened node's details replace the last one's and follow the frames after them", () => {
  const store = nodeLevelStore();
  store.loadDetail({ node: "node-1", last_seq: 150, objects: { pods: [podOn("a", "node-1"), podOn("b", "node-1")] } });
  assert.equal(store.podsOn("node-1").length, 2);
  const write = (seq, obj, removed = false) => ({
    seq, type: "write", resource: "pods", code: 200, object: obj, removed,
  });
  store.applyFrameExtras({
    seq: [140, 160],
    details: {
      "node-1": [write(149, podOn("old", "node-1")), write(151, podOn("a", "node-1", false)),
        write(152, podOn("b", "node-1"), true)],
      "node-2": [write(153, podOn("x", "node-2"))],
    },
  });
  assert.deepEqual(store.podsOn("node-1").map((p) => [p.metadata.name, p.status.conditions[0].status]),
    [["a", "False"]]);
  assert.equal(store.podsOn("node-2").length, 0); // another viewer's node
  store.loadDetail({ node: "node-2", last_seq: 170, objects: { pods: [podOn("x", "node-2")] } });
  assert.deepEqual([store.podsOn("node-1").length, store.podsOn("node-2").length], [0, 1]);
});
