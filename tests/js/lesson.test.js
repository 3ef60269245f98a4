// The pure parts of the lesson pages (static/js/lesson-model.js): the evidence matcher agrees with
// the server's (simulation/lessons/matchers.py), and the tally's bars add up; and RunConnection
// hands a lesson run's messages to their handlers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { RunConnection } from "../../static/js/connection.js";
import {
  answerIsRight, bucketHolds, bucketRange, localText, matches, tallyBars,
} from "../../static/js/lesson-model.js";

const unknown = { seq: 812, t: 110.22, type: "transition", kind: "node-ready", component: "node-lifecycle-controller",
  node: "node-2", from: "True", to: "Unknown", pod: null };
const endpoint = { seq: 820, type: "transition", kind: "endpoint", node: "node-2", key: "web",
  pod: "web-cb2f5a939-9fg5n", from: { ready: true, serving: true, terminating: false },
  to: { ready: false, serving: false, terminating: false } };

test("a matcher matches when every field it names is equal", () => {
  assert.ok(matches({ type: "transition", kind: "node-ready", node: "node-2", to: "Unknown" }, unknown));
  assert.ok(!matches({ type: "transition", kind: "node-ready", node: "node-3", to: "Unknown" }, unknown));
  assert.ok(!matches({ type: "transition", rule: "nlc.mark-unknown" }, unknown),
    "a field the event lacks never matches");
  assert.ok(matches({ pod: null }, unknown), "null equals null");
  assert.ok(!matches({ pod: null }, endpoint));
  assert.ok(!matches(null, unknown) && !matches({ type: "fault" }, null));
});

test("a string ending in * is a prefix, a list is any of its items", () => {
  assert.ok(matches({ pod: "web-*" }, endpoint));
  assert.ok(!matches({ pod: "agent-*" }, endpoint));
  assert.ok(!matches({ node: "node-*" }, { node: null }), "a prefix wants a string");
  assert.ok(matches({ to: ["False", "Unknown"] }, unknown));
  assert.ok(matches({ type: ["decision", "transition"], component: ["kubelet", "node-lifecycle-controller"] },
    unknown));
  assert.ok(!matches({ to: ["False", "True"] }, unknown));
});

test("a mapping matches a mapping holding at least its keys", () => {
  assert.ok(matches({ from: { ready: true } }, endpoint));
  assert.ok(matches({ to: { ready: false, serving: false, terminating: false } }, endpoint));
  assert.ok(!matches({ to: { terminating: true } }, endpoint));
  assert.ok(!matches({ to: { ready: false } }, unknown), "a mapping never equals a string");
  assert.ok(!matches({ to: null }, endpoint));
});

test("a boolean only equals a boolean", () => {
  const podReady = { type: "transition", kind: "pod-ready", from: true, to: false };
  assert.ok(matches({ to: false }, podReady));
  assert.ok(!matches({ to: 0 }, podReady));
  assert.ok(!matches({ code: true }, { code: 1 }));
  assert.ok(matches({ code: 200 }, { code: 200.0 }));
});

test("tally bars: choices in their order, shares of the answers, whole percents adding up to 100", () => {
  const bars = tallyBars({ "not-ready": 2, removed: 1 },
    { order: ["removed", "not-ready", "until-deleted"], answers: 3 });
  assert.deepEqual(bars.map((b) => [b.key, b.count]), [["removed", 1], ["not-ready", 2], ["until-deleted", 0]]);
  assert.deepEqual(bars.map((b) => b.percent), [33, 67, 0]);
  assert.equal(bars[1].share, 2 / 3);
  assert.equal(bars.reduce((n, b) => n + b.percent, 0), 100);
  const seven = tallyBars({ a: 1, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1 }, { answers: 7 });
  assert.equal(seven.reduce((n, b) => n + b.percent, 0), 100);
});

test("tally bars of no answers are empty, of number ranges lowest first", () => {
  assert.deepEqual(tallyBars({}, { order: ["a", "b"], answers: 0 }).map((b) => [b.share, b.percent]), [[0, 0], [0, 0]]);
  assert.deepEqual(tallyBars({}, {}), []);
  const ranges = tallyBars({ "90-100": 1, "40-50": 1, "-10-0": 1, 50: 2 });
  assert.deepEqual(ranges.map((b) => b.key), ["-10-0", "40-50", "50", "90-100"]);
  assert.equal(ranges[2].share, 2 / 5);
  // a tally older than the answer count (tallies come at most once a second): shares of the count
  assert.deepEqual(tallyBars({ a: 1 }, { order: ["a", "b"], answers: 2 }).map((b) => b.share), [0.5, 0]);
});

test("number ranges and tolerance", () => {
  assert.deepEqual(bucketRange("40-50"), { low: 40, high: 50, single: false });
  assert.deepEqual(bucketRange("-20--10"), { low: -20, high: -10, single: false });
  assert.deepEqual(bucketRange("50"), { low: 50, high: 50, single: true });
  assert.equal(bucketRange("1e+06-2e+06").high, 2e6);
  assert.equal(bucketRange("fast"), null);
  assert.ok(bucketHolds("50-60", 50, 5) && bucketHolds("40-50", 50, 5), "45..55 overlaps both");
  assert.ok(!bucketHolds("40-45", 50, 5), "[40, 45) ends before 45");
  assert.ok(!bucketHolds("90-100", 50, 5));
  assert.ok(bucketHolds("50", 50, 0) && !bucketHolds("51", 50, 0));
  assert.ok(!bucketHolds("50", "50", 0));
});

test("a viewer's answer against the reveal", () => {
  assert.ok(answerIsRight({ value: 47 }, { correct: 50, tolerance: 5 }));
  assert.ok(!answerIsRight({ value: 90 }, { correct: 50, tolerance: 5 }));
  assert.ok(answerIsRight({ value: 300 }, { correct: 300 }));
  assert.ok(answerIsRight({ choice: "not-ready" }, { correct: "not-ready" }));
  assert.ok(!answerIsRight({ choice: "removed" }, { correct: "not-ready" }));
  assert.ok(answerIsRight({ choice: "cause-1", node: "node-3" }, { correct: "cause-1", node: "node-3" }));
  assert.ok(!answerIsRight({ choice: "cause-1", node: "node-2" }, { correct: "cause-1", node: "node-3" }));
  assert.ok(!answerIsRight(null, { correct: 1 }));
});

test("texts in the page's language and matchers in a line", () => {
  assert.equal(localText({ en: "Drill", zh: "演练" }, "zh-hans"), "演练");
  assert.equal(localText({ en: "Drill", zh: "演练" }, "en"), "Drill");
  assert.equal(localText({ en: "Drill" }, "zh-hans"), "Drill");
  assert.equal(localText(undefined, "en"), "");
});

test("a lesson run's messages reach their handlers, in order behind the snapshot", async () => {
  class Socket {
    constructor() {
      this.listeners = {};
      Socket.last = this;
    }

    addEventListener(type, fn) {
      (this.listeners[type] ??= []).push(fn);
    }

    close() {}

    receive(message) {
      for (const fn of this.listeners.message) fn({ data: JSON.stringify(message) });
    }
  }
  globalThis.location = { protocol: "http:", host: "127.0.0.1:8000" };
  globalThis.WebSocket = Socket;
  const got = [];
  const record = (name) => (msg) => got.push([name, msg.type]);
  const handlers = Object.fromEntries(
    ["onSnapshot", "onLesson", "onStep", "onQuestion", "onTally", "onReveal", "onAnswerAck"]
      .map((name) => [name, record(name)]));
  new RunConnection("/ws/runs/r1/", {
    lastSeq: () => 0, ...handlers, onError: (message, msg) => got.push(["onError", msg.error]),
  });
  const messages = ["snapshot", "lesson", "step", "question", "tally", "answer-ack", "reveal"]
    .map((type) => ({ type, snapshot: {} }));
  for (const message of messages) Socket.last.receive(message);
  Socket.last.receive({ type: "error", error: "question-closed", message: "closed" });
  Socket.last.receive({ type: "lesson-of-the-future" }); // unknown: nobody's
  for (let i = 0; got.length < 8 && i < 200; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(got, [["onSnapshot", "snapshot"], ["onLesson", "lesson"], ["onStep", "step"],
    ["onQuestion", "question"], ["onTally", "tally"], ["onAnswerAck", "answer-ack"], ["onReveal", "reveal"],
    ["onError", "question-closed"]]);
});

test("an order question: right when nothing comes before what happened earlier, ties either way", async () => {
  const { orderIsRight, orderTimes, tapOrder } = await import("../../static/js/lesson-model.js");
  const reveal = { kind: "order", correct: ["a", "b", "c"], items: [
    { id: "a", event: { seq: 1, t: 10 } }, { id: "b", event: { seq: 2, t: 20 } }, { id: "c", event: { seq: 3, t: 20 } }] };
  assert.ok(orderIsRight(["a", "b", "c"], reveal));
  assert.ok(orderIsRight(["a", "c", "b"], reveal), "b and c happened at the same instant");
  assert.ok(!orderIsRight(["b", "a", "c"], reveal));
  assert.ok(!orderIsRight(["a", "b"], reveal) && !orderIsRight(["a", "b", "b"], reveal));
  assert.ok(answerIsRight({ order: ["a", "c", "b"] }, reveal) && !answerIsRight({ choice: "a" }, reveal));
  const before = { kind: "order", correct: ["a", "b", "c"], items: [
    { id: "a", event: null }, { id: "b", event: null }, { id: "c", event: null }] };
  assert.deepEqual(orderTimes(before), { a: 0, b: 1, c: 2 }, "before its events: the lesson's order, exactly");
  assert.ok(!orderIsRight(["a", "c", "b"], before));
  assert.deepEqual(tapOrder([], "b"), ["b"]);
  assert.deepEqual(tapOrder(["b", "a", "c"], "a"), ["b", "c"], "tapped again: out, the rest move up");
});

test("an order's times read to the millisecond only where two would read the same", async () => {
  const { orderTimeLabels } = await import("../../static/js/lesson-model.js");
  const labels = orderTimeLabels([{ id: "unknown", event: { t: 110.22 } }, { id: "endpoints", event: { t: 110.225 } },
    { id: "noexecute", event: { t: 115.3 } }, { id: "later", event: null }]);
  assert.deepEqual(labels, { unknown: "T+01:50.220", endpoints: "T+01:50.225", noexecute: "T+01:55.3" });
});

test("alone, an order question scores like the others", async () => {
  const { soloScore } = await import("../../static/js/lesson-model.js");
  const reveals = new Map([["chain", { question: "chain", kind: "order", correct: ["a", "b", "c"],
    items: [{ id: "a", event: { t: 1 } }, { id: "b", event: { t: 2 } }, { id: "c", event: { t: 3 } }] }]]);
  assert.deepEqual(soloScore(["chain"], () => ({ order: ["a", "b", "c"] }), reveals), { score: 1, of: 1, done: true });
  assert.deepEqual(soloScore(["chain"], () => ({ order: ["b", "a", "c"] }), reveals), { score: 0, of: 1, done: true });
});

test("the lesson bar shows a reveal's evidence only where it was revealed", async () => {
  const { barEvidence } = await import("../../static/js/lesson-model.js");
  const last = { question: "who-writes", step: 1 };
  const folded = { question: "who-writes", step: 1, open: false, shown: false };
  assert.equal(barEvidence(last, folded), "who-writes", "the card folded away: the bar keeps the evidence");
  assert.equal(barEvidence(last, { ...folded, shown: true }), null, "the card on the screen shows it itself");
  assert.equal(barEvidence(last, { question: "chain", step: 2, open: true, shown: true }), null,
    "the next question is open: the previous evidence is past");
  assert.equal(barEvidence(last, { question: "chain", step: 2, open: true, shown: false }), null,
    "not even with the new question's card folded away");
  assert.equal(barEvidence(last, { ...folded, step: 2 }), null, "the next step started");
  assert.equal(barEvidence(null, folded), null);
});

test("an order revealed before its events, with no answer written: placed as they happen", async () => {
  const { revealOrder, settleReveal, soloScore } = await import("../../static/js/lesson-model.js");
  const match = (kind) => ({ type: "transition", kind, node: "node-2" });
  const reveal = () => ({ question: "q", kind: "order", correct: null, items: [
    { id: "a", event: null, match: match("node-ready") }, { id: "b", event: null, match: match("taint-removed") },
    { id: "c", event: null, match: match("pod-deleted") }] });
  const r = reveal();
  assert.deepEqual(revealOrder(r), { placed: [], pending: ["a", "b", "c"] }, "nothing placed: no empty answer");
  r.items[1].event = { seq: 9, t: 600.2 };
  r.items[0].event = { seq: 8, t: 600.2 };
  assert.deepEqual(revealOrder(r), { placed: ["a", "b"], pending: ["c"] }, "by time, then seq");
  const answered = () => ({ order: ["a", "b", "c"] });
  assert.equal(soloScore(["q"], answered, new Map([["q", r]])).done, false, "scored once the order is known");
  r.items[2].event = { seq: 20, t: 601 };
  assert.deepEqual(revealOrder(r), { placed: ["a", "b", "c"], pending: [] });
  assert.deepEqual(soloScore(["q"], answered, new Map([["q", r]])), { score: 1, of: 1, done: true });
  assert.deepEqual(revealOrder({ correct: ["c", "a"], items: [] }), { placed: ["c", "a"], pending: [] });

  // a page joining after the reveal: it watches for what its state says is still to come
  const summary = reveal();
  summary.items[0].event = { seq: 8, t: 600.2 };
  const joined = settleReveal(undefined, summary);
  assert.equal(joined.reveal, summary);
  assert.deepEqual(joined.waits.map((w) => w.item), ["b", "c"]);
  assert.deepEqual(joined.waits[1].match, match("pod-deleted"));
  // a page that held the reveal and missed an event while away: completed from the summary
  const held = reveal();
  const again = settleReveal(held, summary);
  assert.equal(again.reveal, held);
  assert.deepEqual(held.items[0].event, { seq: 8, t: 600.2 });
  assert.deepEqual(again.waits.map((w) => w.item), ["b", "c"]);
});
