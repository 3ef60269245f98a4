import { test } from "node:test";
import assert from "node:assert/strict";

import { NodeAnnouncer, statusChanges, summary } from "../../static/js/announcer.js";

const ready = (node, from, to, t = 0) => ({ type: "transition", kind: "node-ready", node, from, to, t });

/** A fake clock: `later` queues, `advance(ms)` runs what is due. */
function fakeClock() {
  const clock = { t: 0, queue: [] };
  clock.now = () => clock.t;
  clock.later = (fn, ms) => clock.queue.push({ at: clock.t + ms, fn });
  clock.advance = (ms) => {
    clock.t += ms;
    for (const item of clock.queue.filter((q) => q.at <= clock.t)) {
      clock.queue.splice(clock.queue.indexOf(item), 1);
      item.fn();
    }
  };
  return clock;
}

test("only a change of kubectl's STATUS counts: True -> Unknown is NotReady, False -> Unknown is not news", () => {
  const events = [
    ready("node-2", "True", "Unknown"),
    ready("node-3", "False", "Unknown"),
    ready("node-4", null, "False"), // registration
    { type: "write", resource: "leases", name: "node-1" },
    ready("node-5", "Unknown", "True"),
  ];
  assert.deepEqual(statusChanges(events), [["node-2", "Ready", "NotReady"], ["node-5", "NotReady", "Ready"]]);
});

test("a summary names three nodes per state, then how many more", () => {
  const changes = new Map([["node-1", "NotReady"], ["node-2", "NotReady"], ["node-3", "NotReady"],
    ["node-4", "NotReady"], ["node-9", "Ready"]]);
  assert.equal(summary(changes, (n) => `and ${n} more`), "node-1, node-2, node-3 and 1 more NotReady; node-9 Ready");
});

test("at most one announcement every 2 s, summing up what changed meanwhile", () => {
  const clock = fakeClock();
  const region = { dataset: { more: "and {n} more" }, textContent: "" };
  const announcer = new NodeAnnouncer(region, clock);
  announcer.add([ready("node-2", "True", "Unknown")]);
  clock.advance(299);
  assert.equal(region.textContent, "");
  clock.advance(1);
  assert.equal(region.textContent, "node-2 NotReady");
  const said = [];
  for (let i = 0; i < 30; i++) { // a node every 100 ms for 3 s
    announcer.add([ready(`node-${10 + i}`, "True", "Unknown")]);
    clock.advance(100);
    if (region.textContent !== said.at(-1)) said.push(region.textContent);
  }
  // 2 s after the first: one sentence for the 20 nodes that changed by then; the others wait
  assert.deepEqual(said, ["node-2 NotReady", "node-10, node-11, node-12 and 17 more NotReady"]);
  clock.advance(999);
  assert.equal(region.textContent, said[1]);
  clock.advance(1001);
  assert.equal(region.textContent, "node-30, node-31, node-32 and 7 more NotReady");
});

test("a node that went and came back before the announcement is not announced", () => {
  const clock = fakeClock();
  const region = { dataset: {}, textContent: "" };
  const announcer = new NodeAnnouncer(region, clock);
  announcer.add([ready("node-2", "True", "False"), ready("node-2", "False", "True")]);
  clock.advance(5000);
  assert.equal(region.textContent, "");
});
