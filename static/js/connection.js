// @ts-check
// The run's websocket: snapshot first, then frames. On a drop it reconnects with
// `?after=<last seq>` so the server replays exactly what was missed (or sends a fresh snapshot
// when the gap is too old), and reports its state for the clock bar.
import { nextTask } from "#js/dom.js";

const LARGE = 100_000; // characters: a message this long is parsed by the worker (json-worker.js)
// A message over the server's 1 MiB limit arrives as parts: {"type": "part", "message": id,
// "part": i, "parts": n, "data": "<a slice of its JSON text>"} (docs/websocket-protocol.md).
const PART_PREFIX = '{"type":"part",';
const TRY_AGAIN = 4503; // close code: reconnect with ?after= (docs/websocket-protocol.md)
// The messages of a lesson or drill run (docs/websocket-protocol.md), each to its handler.
const LESSON_HANDLERS = { lesson: "onLesson", step: "onStep", "fast-forward": "onFastForward", question: "onQuestion",
  tally: "onTally",
  reveal: "onReveal", "answer-ack": "onAnswerAck", follow: "onFollow", comparison: "onComparison" };

// Events a frame handler gets at once: a larger frame (a 5,000-node outage's second) is handed
// over in consecutive pieces, a task each, so that applying it is no long task either.
export const FRAME_PIECE = 1000;

/**
 * `msg` as the messages the handlers get: a frame of more than FRAME_PIECE events as consecutive
 * frames covering its seq range (the last one with its clock and its extras: renewals, podCounts,
 * failed, details, omitted); anything else as it is.
 */
export function framePieces(msg) {
  const events = msg.events;
  if (msg.type !== "frame" || !Array.isArray(events) || events.length <= FRAME_PIECE || !Array.isArray(msg.seq)) {
    return [msg];
  }
  const pieces = [];
  let from = msg.seq[0];
  for (let i = 0; i < events.length; i += FRAME_PIECE) {
    const chunk = events.slice(i, i + FRAME_PIECE);
    if (i + FRAME_PIECE >= events.length) {
      pieces.push({ ...msg, seq: [from, msg.seq[1]], events: chunk });
    } else {
      const to = chunk[chunk.length - 1].seq;
      pieces.push({ type: "frame", seq: [from, to], events: chunk, clock: msg.clock, detail: msg.detail });
      from = to + 1;
    }
  }
  return pieces;
}

export class RunConnection {
  /** `handlers`: onSnapshot, onFrame, onPresence, onStatus, onError, onState, onClock, onDetail, and
   *  for lessons and drills onLesson, onStep, onFastForward, onQuestion, onTally, onReveal, onAnswerAck. */
  /** `ready`: a promise; messages wait for it (the page's panels being built) while the socket
   *  already receives them and the worker parses the large ones. */
  constructor(path, { lastSeq, ready = null, ...handlers }) {
    this.path = path;
    this.handlers = handlers;
    this.lastSeq = lastSeq;
    this.ready = ready;
    ready?.finally(() => {
      this.ready = null;
    });
    this.retry = 0;
    this.closed = false;
    this.everConnected = false;
    this.open();
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const after = this.lastSeq() > 0 ? `?after=${this.lastSeq()}` : "";
    return `${scheme}://${location.host}${this.path}${after}`;
  }

  open() {
    this.setState(this.everConnected ? "reconnecting" : "connecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.retry = 0;
    });
    ws.addEventListener("message", (e) => {
      let text = e.data;
      if (text.startsWith(PART_PREFIX)) {
        text = this.#joinPart(ws, text);
        if (text === null) return; // more parts to come
      }
      if (text.length > LARGE && this.#worker()) {
        this.#enqueue(ws, this.#parseLarge(text));
        return;
      }
      let msg;
      try {
        msg = JSON.parse(text);
      } catch {
        return;
      }
      if (msg && typeof msg === "object") this.#enqueue(ws, msg); // anything else is not ours
    });
    ws.addEventListener("close", (e) => {
      if (this.ws !== ws || this.closed) return;
      // 4xxx: the server will not take us back (unknown run, refused origin): stop trying;
      // except 4503, the live service lost Redis for a moment: try again.
      if (e.code >= 4000 && e.code < 5000 && e.code !== TRY_AGAIN) {
        this.setState("gone", e.reason);
        return;
      }
      this.setState("reconnecting");
      const delay = Math.min(5000, 300 * 2 ** this.retry++);
      setTimeout(() => this.open(), delay);
    });
  }

  /**
   * Keeps one part of a split message; returns the whole message's text once its last part is
   * here, else null. Parts of one message arrive together and in order on one socket.
   */
  #joinPart(ws, text) {
    let part;
    try {
      part = JSON.parse(text);
    } catch {
      return null;
    }
    if (this.parts?.ws !== ws || this.parts.message !== part.message || part.part === 0) {
      this.parts = { ws, message: part.message, data: [] };
    }
    if (part.part !== this.parts.data.length) return null; // out of order: not ours to guess
    this.parts.data.push(part.data);
    if (this.parts.data.length < part.parts) return null;
    const whole = this.parts.data.join("");
    this.parts = null;
    return whole;
  }

  /** The JSON worker, started on first use (null where workers are not available). */
  #worker() {
    if (this.jsonWorker === undefined) {
      try {
        // Through the page's import map, as the modules are: its hashed URL with hashed static files.
        this.jsonWorker = new Worker(import.meta.resolve("#js/json-worker.js"));
        this.jsonWorker.onmessage = (e) => this.#workerReply(e.data);
        // A worker that fails (its script did not load): what it was given is parsed here.
        this.jsonWorker.onerror = () => {
          this.jsonWorker = null;
          for (const { resolve, text } of this.parsing.values()) resolve({ head: text, slices: [] });
        };
        this.parsing = new Map(); // id -> {resolve, text, head, slices}
        this.parseId = 0;
      } catch {
        this.jsonWorker = null;
      }
    }
    return this.jsonWorker;
  }

  /** The worker's replies about one message: its head, its slices, then done (json-worker.js). */
  #workerReply(data) {
    const entry = this.parsing.get(data.id);
    if (!entry) return;
    if (data.error) entry.resolve({ error: true });
    else if (data.head !== undefined) entry.head = data.head;
    else if (data.slice) entry.slices.push(data.slice);
    else if (data.done) entry.resolve({ head: entry.head, slices: entry.slices });
  }

  /**
   * A large message, parsed by the worker and put back together here one slice per task (each a
   * few ms), so neither receiving nor parsing a 100-node snapshot or a 5,000-node frame is a long
   * task (> 50 ms). Resolves with the message, or null if it was not JSON.
   */
  async #parseLarge(text) {
    const id = ++this.parseId;
    const reply = await new Promise((resolve) => {
      this.parsing.set(id, { resolve, text, slices: [] });
      this.jsonWorker.postMessage({ id, text });
    });
    this.parsing.delete(id);
    if (reply.error) return null;
    let msg;
    try {
      msg = JSON.parse(reply.head);
    } catch {
      return null;
    }
    for (const [kind, slice] of reply.slices) {
      await nextTask();
      const list = JSON.parse(slice);
      if (msg.type === "frame") msg.events.push(...list); // a snapshot's "events" are Event objects
      else msg.snapshot.objects[kind].push(...list);
    }
    return msg;
  }

  /**
   * A snapshot (megabytes on a 100-node run) is handled in a task of its own, after the one that
   * received it (and after the worker parsed it, for a large one), so receiving, parsing and
   * loading it do not add up to one long task; messages arriving meanwhile wait behind it, in
   * order, each in its own task. Other messages go straight through. `msg`: the message, or a
   * promise of it.
   */
  #enqueue(ws, msg) {
    if (this.queue) this.queue.push([ws, msg]);
    else if (this.ready || msg instanceof Promise || msg.type === "snapshot") {
      this.queue = [[ws, msg]];
      this.#drain();
    } else this.#dispatch(msg);
  }

  async #drain() {
    // One bad message (a failed parse, a handler that throws) is dropped and reported; the
    // queue goes on, so the page does not stop following the run.
    try {
      while (this.queue.length) {
        if (this.ready) await this.ready.catch(() => {});
        let msg = null;
        try {
          msg = await this.queue[0][1];
        } catch (err) {
          console.error(err);
        }
        await nextTask();
        const [ws] = this.queue.shift();
        // Not JSON: dropped. A replaced socket's rest is replayed by the new one.
        if (msg && typeof msg === "object") {
          for (const [i, piece] of framePieces(msg).entries()) {
            if (i) await nextTask();
            if (ws !== this.ws) break;
            try {
              this.#dispatch(piece);
            } catch (err) {
              console.error(err);
            }
          }
        }
      }
    } finally {
      this.queue = null;
    }
  }

  #dispatch(msg) {
    const h = this.handlers;
    switch (msg.type) {
      case "snapshot":
        h.onSnapshot?.(msg);
        this.setState(this.everConnected ? "resynced" : "live");
        this.everConnected = true;
        break;
      case "frame": {
        const [first] = msg.seq ?? [0];
        if (this.lastSeq() > 0 && first > this.lastSeq() + 1) {
          // A hole in the stream: reconnecting with ?after= asks the server for the missing part.
          this.ws.close();
          return;
        }
        if (!this.everConnected) this.everConnected = true;
        if (this.state === "reconnecting" || this.state === "connecting") this.setState("resynced");
        h.onFrame?.(msg);
        // A summarised frame left routine events out: ask for a fresh snapshot (at most every 5 s).
        if (msg.summarised && performance.now() - (this.lastResync ?? -1e9) > 5000) {
          this.lastResync = performance.now();
          this.ws.send(JSON.stringify({ type: "resync" }));
        }
        break;
      }
      case "resumed":
        // The server replays what we missed from its log; frames follow.
        h.onClock?.(msg.clock);
        if (msg.run) h.onStatus?.(msg.run);
        this.everConnected = true;
        this.setState("resynced");
        break;
      case "clock":
        h.onClock?.(msg.clock);
        break;
      case "presence":
        h.onPresence?.(msg.viewers);
        break;
      case "detail":
        h.onDetail?.(msg);
        break;
      case "status":
        h.onStatus?.(msg);
        break;
      case "error":
        h.onError?.(msg.message, msg);
        break;
      default:
        h[LESSON_HANDLERS[msg.type]]?.(msg);
        break;
    }
  }

  setState(state, detail) {
    this.state = state;
    this.handlers.onState?.(state, detail);
  }

  /** Sends a message to the server if the socket is open (a `detail` request, a ping, an answer);
   *  says whether it went. */
  send(message) {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  /** Drops the socket as a flaky network would (used by the tests and the "reconnect" button). */
  drop() {
    this.ws?.close();
  }

  close() {
    this.closed = true;
    this.ws?.close();
  }
}
