import { test } from "node:test";
import assert from "node:assert/strict";
import { EventHistory, PassRecords } from "../../static/js/history.js";
import { rowFor, SequenceModel } from "../../static/js/sequence/model.js";
import { findCause } from "../../static/js/why.js";

/** A kubelet's Lease renewal as the websocket frames carry it (with the written object). */
function renewal(seq, node = `node-${seq % 100}`) {
  return {
    seq, t: seq / 10, time: "2026-01-01T00:00:20.031794Z", type: "write", component: "kubelet-lease", node,
    user: `system:node:${node}`, verb: "update", resource: "leases", subresource: "", namespace: "kube-node-lease",
    name: node, code: 200, message: null, removed: false, watchers: ["node-lifecycle-controller"],
    summary: `renew Lease ${node}`, requestReceivedTimestamp: "2026-01-01T00:00:20.029794Z",
    object: { metadata: { name: node, namespace: "kube-node-lease" }, spec: { holderIdentity: node } },
  };
}

function monitorPass(seq, nodes = 3) {
  const records = {};
  for (let i = 1; i <= nodes; i++) {
    records[`node-${i}`] = { t: seq / 10, branch: i === 2 ? "no-news" : "fresh-status", probeTimestamp: 1,
      gracePeriod: 50, deadline: 65.03 + i, observed: "True", current: i === 2 ? "Unknown" : "True", zone: "zone-a" };
  }
  return {
    seq, t: seq / 10, type: "decision", component: "node-lifecycle-controller", node: null, rule: "nlc.monitor-pass",
    inputs: { nodes, gracePeriod: 50 }, outcome: `${nodes} nodes checked`, pod: null,
    source: "pkg/controller/nodelifecycle/node_lifecycle_controller.go", explain: "monitorNodeHealth: one pass",
    nodes: records, zones: { "zone-a": { state: "Normal" } },
  };
}

test("the history keeps between max and max + trim events, dropping the oldest trim at once", () => {
  const history = new EventHistory({ max: 50, trim: 10 });
  const buffers = [history.seq, history.t, history.columns.name];
  for (let seq = 1; seq <= 60; seq++) history.push(renewal(seq));
  assert.equal(history.length, 60);
  assert.equal(history.firstSeq(), 1);
  history.push(renewal(61));
  assert.equal(history.length, 51);
  assert.equal(history.dropped, 10);
  assert.equal(history.firstSeq(), 11);
  for (let seq = 62; seq <= 10_000; seq++) history.push(renewal(seq));
  assert.ok(history.length >= 50 && history.length <= 60, String(history.length));
  assert.equal(history.at(history.length - 1).seq, 10_000);
  // Nothing was allocated again: the columns are the ones made at the start.
  assert.deepEqual([history.seq, history.t, history.columns.name], buffers);
});

test("the string table holds only the strings of the events kept", () => {
  const history = new EventHistory({ max: 50, trim: 10 });
  // Every event names a new pod: the table would grow for ever if it kept old names.
  for (let seq = 1; seq <= 5000; seq++) {
    history.push({ ...renewal(seq, "node-1"), resource: "pods", name: `web-${seq}` });
  }
  assert.ok(history.strings.list.length <= 60 + 10, String(history.strings.list.length));
  assert.equal(history.at(0).name, `web-${history.firstSeq()}`);
});

test("a request comes back with what rows and explanations read, without its object", () => {
  const history = new EventHistory({ max: 10, trim: 5 });
  const raw = renewal(7, "node-2");
  history.push(raw);
  history.push({ ...renewal(8, "node-2"), code: 409, message: "the object has been modified" });
  const back = history.get(7);
  for (const field of ["seq", "t", "type", "component", "node", "user", "verb", "resource", "subresource", "name",
    "code", "message"]) {
    assert.deepEqual(back[field], raw[field], field);
  }
  assert.equal(back.object, undefined);
  assert.equal(history.get(8).message, "the object has been modified");
  assert.equal(history.get(9), null);
  assert.deepEqual(rowFor(back, "node-2"), { ...rowFor(raw, "node-2"), event: back });
});

test("a monitor pass keeps each node's branch, deadline and Ready, not the whole record", () => {
  const history = new EventHistory({ max: 10, trim: 5 });
  const raw = monitorPass(5, 3);
  history.push(raw);
  const back = history.get(5);
  assert.ok(back.nodes instanceof PassRecords);
  assert.deepEqual(back.nodes.get("node-2"), { branch: "no-news", current: "Unknown", deadline: 67.03 });
  assert.equal(back.nodes.get("node-9"), null);
  assert.equal(back.zones, undefined);
  for (const field of ["rule", "outcome", "source", "explain", "component"]) {
    assert.equal(back[field], raw[field], field);
  }
  assert.deepEqual(back.inputs, raw.inputs);
  assert.deepEqual(rowFor(back, "node-2").record, { branch: "no-news", current: "Unknown", deadline: 67.03 });
  assert.equal(rowFor(back, "node-2").label, rowFor(raw, "node-2").label);
});

test("transitions, faults and unknown kinds keep their own fields", () => {
  const history = new EventHistory({ max: 10, trim: 5 });
  const transition = { seq: 1, t: 1, type: "transition", component: "node-lifecycle-controller", node: "node-2",
    kind: "node-ready", from: "True", to: "Unknown", pod: null, key: null, effect: null };
  const fault = { seq: 2, t: 2, type: "fault", component: "trainer", node: null, zone: "zone-b", action: "zone-outage",
    command: 3 };
  const other = { seq: 3, t: 3, type: "something-new", component: "x", detail: { a: 1 } };
  for (const e of [transition, fault, other]) history.push(e);
  assert.deepEqual(history.get(1),
    { ...transition, user: null, verb: null, resource: null, subresource: null, name: null, message: null });
  assert.equal(history.get(2).zone, "zone-b");
  assert.equal(history.get(2).action, "zone-outage");
  assert.equal(history.get(3).type, "something-new");
  assert.equal(history.typeAt(2), "something-new");
  assert.deepEqual(history.get(3).detail, { a: 1 });
});

test("the sequence rows follow the history: they go when their events go", () => {
  const history = new EventHistory({ max: 20, trim: 10 });
  const model = new SequenceModel(history);
  model.rebuild("node-2");
  for (let seq = 1; seq <= 100; seq++) {
    const event = seq % 10 === 0 ? monitorPass(seq) : renewal(seq);
    history.push(event);
    model.push(event);
  }
  assert.ok(model.length <= history.length);
  assert.equal(model.seqAt(0), history.firstSeq());
  assert.equal(model.dropped, 100 - model.length);
  const last = model.row(model.length - 1);
  assert.equal(last.seq, 100);
  assert.equal(last.kind, "decision");
  assert.equal(last.record.branch, "no-news");
  // Another focus: the same events, rows drawn for node-77 (its kubelet is no "other" any more).
  model.rebuild("node-77");
  const lease77 = model.rows.find((r) => r.label === "PUT leases/node-77");
  assert.equal(lease77.from, "kubelet-lease");
  assert.equal(model.rows.length, model.length);
  assert.equal(model.row(model.length), null);
});

test("'why' finds the decision behind a write in the history", () => {
  const history = new EventHistory({ max: 20, trim: 10 });
  const decision = { seq: 1, t: 10, type: "decision", component: "node-lifecycle-controller", node: "node-2",
    rule: "nlc.mark-unknown", inputs: { grace: 50 }, outcome: "Unknown", pod: null };
  const write = { ...renewal(3, "node-2"), t: 10.5, component: "node-lifecycle-controller", resource: "nodes" };
  history.push(decision);
  history.push({ ...renewal(2, "node-5"), t: 10.2 });
  history.push(write);
  assert.equal(findCause(history.get(3), history).rule, "nlc.mark-unknown");
  assert.equal(findCause({ ...write, t: 13 }, history), null); // more than 2 s later
  assert.equal(findCause({ ...write, component: "kubelet-lease" }, history), null);
});

test("a cleared history starts again from the events pushed after it (a replay seeking back)", () => {
  const history = new EventHistory({ max: 10, trim: 2 });
  for (let seq = 1; seq <= 8; seq++) history.push(renewal(seq));
  history.clear();
  assert.equal(history.length, 0);
  assert.equal(history.get(5), null);
  history.push(renewal(3));
  assert.equal(history.length, 1);
  assert.equal(history.get(3).name, "node-3");
  assert.equal(history.firstSeq(), 3);
});
