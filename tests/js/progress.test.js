// A learner alone (progress.js, lesson-model.js soloScore): the score counts the answers the
// reveals say were right, and this browser keeps the best score of each lesson and drill.
import { test } from "node:test";
import assert from "node:assert/strict";
import { soloScore } from "../../static/js/lesson-model.js";
import { readProgress, recordFinish } from "../../static/js/progress.js";

function memoryStorage() {
  const items = new Map();
  return { getItem: (k) => items.get(k) ?? null, setItem: (k, v) => items.set(k, String(v)), items };
}

test("the score counts right answers, an unanswered question as wrong, and is done once all are revealed", () => {
  const answers = { a: { value: 52 }, b: { choice: "x" } };
  const reveals = new Map([["a", { correct: 50, tolerance: 5 }], ["b", { correct: "y" }]]);
  assert.deepEqual(soloScore(["a", "b", "c"], (id) => answers[id], reveals), { score: 1, of: 3, done: false });
  reveals.set("c", { correct: 10, tolerance: 0 });
  assert.deepEqual(soloScore(["a", "b", "c"], (id) => answers[id], reveals), { score: 1, of: 3, done: true });
});

test("a finish keeps the best score, per kind, and a worse one changes nothing", () => {
  const storage = memoryStorage();
  assert.deepEqual(readProgress("lesson", storage), {});
  const first = new Date("2026-01-02T03:04:05Z");
  recordFinish("lesson", "versions", { score: 1, of: 2 }, { storage, now: first });
  recordFinish("lesson", "versions", { score: 0, of: 2 }, { storage, now: new Date("2026-02-01T00:00:00Z") });
  assert.deepEqual(readProgress("lesson", storage).versions,
    { finished: true, score: 1, of: 2, at: first.toISOString() });
  recordFinish("lesson", "versions", { score: 2, of: 2 }, { storage, now: first });
  assert.equal(readProgress("lesson", storage).versions.score, 2);
  assert.deepEqual(readProgress("drill", storage), {}, "drills are kept apart");
  storage.setItem("heartbeat-drills", "not json");
  assert.deepEqual(readProgress("drill", storage), {});
});
