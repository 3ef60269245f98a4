import { test } from "node:test";
import assert from "node:assert/strict";
import { EventHistory } from "../../static/js/history.js";
import { SequenceModel } from "../../static/js/sequence/model.js";
import { TimeAxis } from "../../static/js/sequence/time-axis.js";

/** A kubelet's Lease renewal of node-2 at virtual time `t` (a row of the focused node's diagram). */
function renewal(seq, t) {
  return {
    seq, t, type: "write", component: "kubelet-lease", node: "node-2", verb: "update", resource: "leases",
    subresource: "", namespace: "kube-node-lease", name: "node-2", code: 200, watchers: [],
  };
}

function side(times) {
  const history = new EventHistory({ max: 100, trim: 10 });
  const model = new SequenceModel(history);
  model.rebuild("node-2");
  times.forEach((t, i) => {
    const event = renewal(i + 1, t);
    history.push(event);
    model.push(event);
  });
  return model;
}

test("each virtual second starts at one height on both sides, as many rows high as the busier side made", () => {
  // side a writes three times in second 10 where side b writes once; both write in seconds 0 and 20
  const a = side([0.5, 10.1, 10.2, 10.3, 20.4]);
  const b = side([0.5, 10.6, 20.1, 20.2]);
  const axis = new TimeAxis({ a, b });
  axis.update();
  assert.deepEqual(axis.slots.a, [0, 1, 2, 3, 4]);
  assert.deepEqual(axis.slots.b, [0, 1, 4, 5]); // second 20 starts below side a's three rows of second 10
  assert.equal(axis.total, 6);
  assert.deepEqual(axis.rowsIn("b", 2, 5), [2, 3]); // heights 2 to 4: side b has only its row at 4 there
});

test("a row that comes later on one side moves the other side's later seconds down", () => {
  const a = side([1.0, 2.0]);
  const b = side([1.0]);
  const axis = new TimeAxis({ a, b });
  axis.update();
  const version = axis.version;
  assert.deepEqual(axis.slots.a, [0, 1]);
  const event = renewal(2, 1.5);
  b.history.push(event);
  b.push(event);
  axis.update();
  assert.ok(axis.version > version);
  assert.deepEqual(axis.slots.a, [0, 2]); // second 1 has two rows now (side b's)
  assert.deepEqual(axis.slots.b, [0, 1]);
  axis.update();
  assert.equal(axis.version, version + 1); // nothing changed: placed once
});
