import { test } from "node:test";
import assert from "node:assert/strict";
import { wrapText } from "../../static/js/flows/svg.js";
import { healthPath } from "../../static/js/flows/health.js";
import { countdownAt } from "../../static/js/time.js";

test("wrapText breaks between words and keeps each line within its width", () => {
  assert.deepEqual(wrapText("node lifecycle controller", 16), ["node lifecycle", "controller"]);
  assert.deepEqual(wrapText("kube-scheduler", 16), ["kube-scheduler"]);
  assert.deepEqual(wrapText("PATCH on change\nor every 5 min", 40), ["PATCH on change", "or every 5 min"]);
});

test("wrapText breaks Chinese between characters but keeps a short word whole", () => {
  assert.deepEqual(wrapText("ReplicaSet 控制器", 16), ["ReplicaSet", "控制器"]);
  const lines = wrapText("节点生命周期控制器节点生命周期控制器", 16);
  assert.ok(lines.length >= 2);
  assert.equal(lines.join(""), "节点生命周期控制器节点生命周期控制器");
});

test("healthPath lights the branch of the pass and the queue that led to the tainting loop", () => {
  const pass = { t: 100, record: { branch: "no-news", deadline: 90, observed: "Unknown" },
    decisions: [{ rule: "nlc.mark-unknown" }, { rule: "nlc.enqueue-taint" }] };
  const lit = healthPath(pass);
  for (const id of ["signal-no", "grace-yes", "unknown", "observed-unknown", "enq-ur", "to-zones-ur", "zones"]) {
    assert.ok(lit.has(id), id);
  }
  assert.ok(!lit.has("to-zones"));
  assert.equal(healthPath(null).size, 0);
});

test("countdownAt rounds the bar to its steps and prints whole seconds, tenths in the last ten", () => {
  const eviction = { scheduledAt: 0, fireAt: 300 };
  assert.deepEqual(countdownAt(eviction, 100, 300), { left: 200, share: 200 / 300, shown: 200 });
  assert.equal(countdownAt(eviction, 100.2, 300).share, 200 / 300); // a step is 1 s of this wait
  assert.equal(countdownAt(eviction, 100.2, 300).shown, 200);
  assert.equal(countdownAt(eviction, 290.55, 300).shown, 9.5);
  assert.deepEqual(countdownAt(eviction, 301, 300), { left: -1, share: 0, shown: 0 });
});
