// The run's websocket: snapshot first, then frames. On a drop it reconnects with
// `?after=<last seq>` so the server replays exactly what was missed (or sends a fresh snapshot
// when the gap is too old), and reports its state for the clock bar.
import { nextTask } from "./dom.js";

export class RunConnection {
  constructor(path, { onSnapshot, onFrame, onPresence, onStatus, onError, onState, onClock, lastSeq }) {
    this.path = path;
    this.handlers = { onSnapshot, onFrame, onPresence, onStatus, onError, onState, onClock };
    this.lastSeq = lastSeq;
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
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      this.#enqueue(ws, msg);
    });
    ws.addEventListener("close", (e) => {
      if (this.ws !== ws || this.closed) return;
      // 4xxx: the server will not take us back (unknown run, refused origin): stop trying.
      if (e.code >= 4000 && e.code < 5000) {
        this.setState("gone", e.reason);
        return;
      }
      this.setState("reconnecting");
      const delay = Math.min(5000, 300 * 2 ** this.retry++);
      setTimeout(() => this.open(), delay);
    });
  }

  /**
   * A snapshot (megabytes on a 100-node run) is parsed in its message's task and handled in the
   * next one, so parsing and loading it do not add up to one long task; messages arriving
   * meanwhile wait behind it, in order, each in its own task. Other messages go straight through.
   */
  #enqueue(ws, msg) {
    if (this.queue) this.queue.push([ws, msg]);
    else if (msg.type === "snapshot") {
      this.queue = [[ws, msg]];
      this.#drain();
    } else this.#dispatch(msg);
  }

  async #drain() {
    while (this.queue.length) {
      await nextTask();
      const [ws, msg] = this.queue.shift();
      if (ws === this.ws) this.#dispatch(msg); // a replaced socket's rest is replayed by the new one
    }
    this.queue = null;
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
      case "status":
        h.onStatus?.(msg);
        break;
      case "error":
        h.onError?.(msg.message);
        break;
      default:
        break;
    }
  }

  setState(state, detail) {
    this.state = state;
    this.handlers.onState?.(state, detail);
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
