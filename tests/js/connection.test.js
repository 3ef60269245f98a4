// RunConnection's message path as a 100-node page meets it: a snapshot of megabytes parsed by the
// JSON worker (the real json-worker.js, run in a vm context standing in for the worker thread)
// and put back together one slice per task, frames that arrive meanwhile, a worker that fails
// and messages that are not JSON. The websocket is a fake the test drives.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";
import { FRAME_PIECE, RunConnection, framePieces } from "../../static/js/connection.js";

const WORKER_SOURCE = readFileSync(new URL("../../static/js/json-worker.js", import.meta.url), "utf8");

class FakeWebSocket {
  static last = null;

  constructor(url) {
    this.url = url;
    this.listeners = {};
    this.sent = [];
    FakeWebSocket.last = this;
  }

  addEventListener(type, fn) {
    (this.listeners[type] ??= []).push(fn);
  }

  send(text) {
    this.sent.push(text);
  }

  close() {
    this.closed = true;
  }

  /** The server sends `data` (an object is sent as its JSON). */
  receive(data) {
    const text = typeof data === "string" ? data : JSON.stringify(data);
    for (const fn of this.listeners.message ?? []) fn({ data: text });
  }
}

/** json-worker.js in a context of its own; replies arrive in a later task, as a worker's do. */
class VmWorker {
  static started = 0;

  constructor() {
    VmWorker.started++;
    this.context = vm.createContext({ postMessage: (data) => setImmediate(() => this.onmessage?.({ data })) });
    vm.runInContext(WORKER_SOURCE, this.context);
  }

  postMessage(data) {
    this.posted = (this.posted ?? 0) + 1;
    setImmediate(() => this.context.onmessage({ data: structuredClone(data) }));
  }
}

/** A worker whose script could not be loaded: it reports an error instead of replying. */
class BrokenWorker {
  postMessage() {
    setImmediate(() => this.onerror?.(new Event("error")));
  }
}

function pod(i) {
  return {
    apiVersion: "v1", kind: "Pod",
    metadata: { name: `web-${i}`, namespace: "default", uid: `uid-${i}`, resourceVersion: String(1000 + i) },
    spec: {
      nodeName: `node-${i % 100}`,
      tolerations: [{ key: "node.kubernetes.io/unreachable", effect: "NoExecute", tolerationSeconds: 300 }],
    },
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
  };
}

/** A snapshot message over 100 kB with lists longer than the worker's slices (200). */
function bigSnapshot(pods = 950) {
  const nodes = Array.from({ length: 100 }, (_, i) => ({ metadata: { name: `node-${i}` } }));
  return {
    type: "snapshot", last_seq: 500, clock: { t: 20, speed: 1, paused: false },
    snapshot: { last_seq: 500, objects: { nodes, pods: Array.from({ length: pods }, (_, i) => pod(i)), leases: [] } },
  };
}

/** A large snapshot, then a frame, sent now: both arrive whole and in order after the `before`
 * messages already received. */
async function snapshotThenFrame({ ws, got, until }, pods, before) {
  const snapshot = bigSnapshot(pods);
  ws.receive(snapshot);
  ws.receive(frame(501));
  await until(before + 2);
  assert.deepEqual(got[before], snapshot);
  assert.equal(got[before + 1].seq[0], 501);
}

function frame(seq) {
  return { type: "frame", seq: [seq, seq], events: [{ seq, type: "write" }], clock: { t: 20 + seq / 100 } };
}

/** A connection with handlers that record what they get, in order; resolves `until(n)`. */
function connect(WorkerClass, ready = null) {
  globalThis.location = { protocol: "http:", host: "127.0.0.1:8000" };
  globalThis.WebSocket = FakeWebSocket;
  globalThis.Worker = WorkerClass;
  const got = [];
  let last = 0;
  let waiting = null;
  const push = (item) => {
    got.push(item);
    if (waiting && got.length >= waiting.n) waiting.resolve();
  };
  const conn = new RunConnection("/ws/runs/r1/", {
    ready,
    lastSeq: () => last,
    onSnapshot: (msg) => {
      last = msg.last_seq;
      push(msg);
    },
    onFrame: (msg) => {
      last = msg.seq[1];
      push(msg);
    },
  });
  const until = (n) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(
      `only ${got.length} of ${n} messages: ${JSON.stringify(got.map((m) => m.type))}`)), 5000);
    waiting = { n, resolve: () => { clearTimeout(timer); resolve(); } };
    if (got.length >= n) waiting.resolve();
  });
  return { conn, ws: FakeWebSocket.last, got, until };
}

test("a large snapshot parsed by the worker arrives whole, with frames after it in order", async () => {
  const { conn, ws, got, until } = connect(VmWorker);
  const snapshot = bigSnapshot();
  assert.ok(JSON.stringify(snapshot).length > 100_000);
  ws.receive(snapshot);
  ws.receive(frame(501)); // while the worker parses: queued behind the snapshot
  ws.receive(frame(502));
  await until(3);
  assert.equal(conn.jsonWorker.posted, 1);
  assert.deepEqual(got[0], snapshot); // every slice back, in order (950 pods: 5 slices)
  assert.deepEqual(got.slice(1).map((m) => m.seq[0]), [501, 502]);
  assert.equal(conn.state, "live");
  ws.receive(frame(503)); // the queue is drained: frames go straight through again
  await until(4);
  assert.equal(got[3].seq[0], 503);
});

test("a worker that fails hands its message back to be parsed on the page", async () => {
  const connection = connect(BrokenWorker);
  const { conn, ws, got, until } = connection;
  await snapshotThenFrame(connection, 300, 0);
  assert.equal(conn.jsonWorker, null); // not tried again
  ws.receive(bigSnapshot(400));
  await until(3);
  assert.equal(got[2].snapshot.objects.pods.length, 400);
});

test("a page without workers parses large messages itself", async () => {
  class NoWorker {
    constructor() {
      throw new Error("workers are not available here");
    }
  }
  const { ws, got, until } = connect(NoWorker);
  const snapshot = bigSnapshot(250);
  ws.receive(snapshot);
  await until(1);
  assert.deepEqual(got[0], snapshot);
});

test("a large message that is not JSON is dropped and the messages after it still arrive", async () => {
  const connection = connect(VmWorker);
  const { ws, got, until } = connection;
  ws.receive(`{"type": "snapshot", "broken": ${"x".repeat(120_000)}`);
  ws.receive(frame(1));
  ws.receive("[1, 2, 3]"); // JSON, but not a message of ours
  ws.receive(frame(2));
  await until(2);
  assert.deepEqual(got.map((m) => m.seq[0]), [1, 2]);
  await snapshotThenFrame(connection, 210, 2);
});

test("a handler that throws loses only its own message", async () => {
  const { conn, ws, got, until } = connect(VmWorker);
  const original = conn.handlers.onSnapshot;
  let calls = 0;
  conn.handlers.onSnapshot = (msg) => {
    if (++calls === 1) throw new Error("panel failed");
    original(msg);
  };
  const errors = [];
  const consoleError = console.error;
  console.error = (err) => errors.push(String(err));
  try {
    ws.receive(bigSnapshot(201));
    ws.receive(frame(501));
    await until(1);
    ws.receive(bigSnapshot(202));
    await until(2);
  } finally {
    console.error = consoleError;
  }
  assert.deepEqual(got.map((m) => m.type), ["frame", "snapshot"]);
  assert.equal(got[1].snapshot.objects.pods.length, 202);
  assert.deepEqual(errors, ["Error: panel failed"]);
});

/** `text` as the server's parts of `size` characters (heartbeat_site/live/delivery/frames.py split_message). */
function parts(text, message, size) {
  const count = Math.ceil(text.length / size);
  return Array.from({ length: count }, (_, i) => JSON.stringify({
    type: "part", message, part: i, parts: count, data: text.slice(i * size, (i + 1) * size),
  }));
}

test("a message sent in parts arrives whole, with the frames after it in order", async () => {
  const { ws, got, until } = connect(VmWorker);
  const snapshot = bigSnapshot(900);
  const pieces = parts(JSON.stringify(snapshot), 1, 60_000);
  assert.ok(pieces.length > 3);
  for (const piece of pieces) ws.receive(piece);
  ws.receive(frame(501));
  await until(2);
  assert.deepEqual(got[0], snapshot);
  assert.equal(got[1].seq[0], 501);
});

test("parts of a message cut short by a new one are dropped, not glued to it", async () => {
  const { ws, got, until } = connect(VmWorker);
  const first = parts(JSON.stringify(bigSnapshot(300)), 1, 50_000);
  ws.receive(first[0]); // the connection's next message starts over: part 0 of message 2
  const second = bigSnapshot(250);
  for (const piece of parts(JSON.stringify(second), 2, 50_000)) ws.receive(piece);
  await until(1);
  assert.deepEqual(got[0], second);
  assert.equal(got.length, 1);
});

/** A node-level frame of a large cluster's busy second: `n` kept events with gaps between their
 * seqs (the events left out), and the frame's extras. */
function bigFrame(first, n) {
  const events = Array.from({ length: n }, (_, i) => ({
    seq: first + 2 * i, type: "transition", node: `node-${i}`, kind: "node-ready", from: "True", to: "Unknown",
  }));
  return { type: "frame", seq: [first, first + 2 * n + 5], events, clock: { t: 75 }, detail: "nodes",
    renewals: { "node-9": "2026-01-01T00:01:14.000000Z" }, failed: { "node-3": 2 }, omitted: { write: 7 } };
}

test("a frame of thousands of events reaches the page in consecutive pieces, a task each", async () => {
  const { conn, ws, got, until } = connect(VmWorker);
  ws.receive({ type: "snapshot", last_seq: 99, clock: { t: 70 }, snapshot: { last_seq: 99, objects: { nodes: [] } } });
  await until(1);
  const big = bigFrame(100, 2500);
  assert.ok(JSON.stringify(big).length > 100_000);
  ws.receive(big);
  ws.receive(frame(big.seq[1] + 1));
  await until(5);
  assert.equal(conn.jsonWorker.posted, 1);
  const pieces = got.slice(1, 4);
  assert.deepEqual(pieces.map((m) => m.events.length), [FRAME_PIECE, FRAME_PIECE, 500]);
  // consecutive seq ranges that cover the frame's exactly: no hole for the page to reconnect over
  assert.deepEqual(pieces.map((m) => m.seq), [[100, 2098], [2099, 4098], [4099, big.seq[1]]]);
  assert.deepEqual(pieces.flatMap((m) => m.events), big.events);
  // the extras come once, with the last piece
  assert.deepEqual([pieces[0].renewals, pieces[1].failed], [undefined, undefined]);
  assert.deepEqual([pieces[2].renewals, pieces[2].failed, pieces[2].omitted], [big.renewals, big.failed, big.omitted]);
  assert.equal(got[4].seq[0], big.seq[1] + 1);
  assert.ok(!ws.closed);
});

test("framePieces leaves small frames and other messages whole", () => {
  const small = frame(7);
  assert.deepEqual(framePieces(small), [small]);
  const snapshot = { type: "snapshot", events: Array.from({ length: 2000 }, (_, i) => ({ seq: i })) };
  assert.deepEqual(framePieces(snapshot), [snapshot]);
});

test("a large snapshot's core/v1 Events stay in its objects (not taken for a frame's events)", async () => {
  const { ws, got, until } = connect(VmWorker);
  const snapshot = bigSnapshot(300);
  snapshot.snapshot.objects.events = Array.from({ length: 450 },
    (_, i) => ({ kind: "Event", metadata: { name: `e-${i}` } }));
  ws.receive(snapshot);
  await until(1);
  assert.deepEqual(got[0], snapshot);
  assert.equal(got[0].events, undefined);
});

test("messages that come while the page builds its panels wait for it, in order, " +
  "the snapshot already parsed", async () => {
  let built;
  const ready = new Promise((resolve) => {
    built = resolve;
  });
  const { conn, ws, got, until } = connect(VmWorker, ready);
  const snapshot = bigSnapshot();
  ws.receive(snapshot);
  ws.receive(frame(501));
  ws.receive({ type: "clock", clock: { t: 25 } });
  ws.receive(frame(502));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(got.length, 0); // nothing handed over before the panels are built...
  assert.equal(conn.jsonWorker.posted, 1); // ...but the snapshot went to the worker at once
  built();
  await until(3);
  assert.deepEqual(got[0], snapshot);
  assert.deepEqual(got.slice(1).map((m) => m.seq[0]), [501, 502]);
  ws.receive(frame(503)); // ready: frames go straight through again
  await until(4);
  assert.equal(got[3].seq[0], 503);
});
