// @ts-check
// Replay and seek on the run page: an ended run's "Replay", a live run's "Look back". The page
// leaves its websocket and is fed from the REST API instead, through the very paths a live
// snapshot and live frames take (RunPage.onSnapshot, RunPage.onFrame in run-page.js):
//  - a seek to t loads the snapshot at t - WINDOW (GET /api/runs/<id>/snapshot?t=, built on the
//    server from the deterministic simulation) and feeds the events of the WINDOW before t as
//    frames, so the sequence diagram shows the traffic that led to the moment, the timeline its
//    markers and the cluster view, flows and kubectl panels the state at t;
//  - play, step and speed feed the following events (GET /api/runs/<id>/events, paged) as frames
//    while a clock of the replay's own advances;
//  - the export menu's cluster objects (objects.yaml) are those at the cursor, `?t=`, until the page is live again.
// "Back to live" (or "Leave replay") opens a new websocket with the page's handlers: a fresh snapshot.
import { RunConnection } from "#js/connection.js";
import { formatOffset } from "#js/time.js";

const ENDED = new Set(["finished", "idle", "failed", "stopped"]);
const WINDOW = 30; // virtual seconds of traffic shown before the cursor after a seek
const TICK_MS = 100; // a replayed frame every 100 ms of wall time, as the live driver sends them
const STEP = 5; // virtual seconds: one node-monitor-period, a controller pass
const PAGE = 5000; // events per page read (the API's largest)
const FRAME_PIECE = 1000; // events per frame handed to the page (connection.js FRAME_PIECE)

async function getJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "omit" });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error(body?.message ?? response.statusText);
  return body;
}

export class Replay {
  constructor(page, runId, els) {
    this.page = page;
    this.run = runId;
    this.els = els;
    this.on = false;
    this.cursor = 0; // virtual seconds the page shows
    this.end = 0; // the run's reached time when the replay opened
    this.speed = 1;
    this.timer = null;
    this.token = null; // the latest seek: an older one's answers are dropped
    this.buffer = []; // events read ahead of the cursor (seq order)
    this.after = 0; // seq the next page is read after
    this.more = true; // whether the run has events after `after`
    // The export menu's cluster objects: at the cursor while the page looks back, else at the run's clock
    this.objectsLink = document.querySelector('.export-menu a[href*="/export/objects.yaml"]');
    this.objectsHref = this.objectsLink?.getAttribute("href");
    els.open.addEventListener("click", () => this.open());
    els.exit.addEventListener("click", () => this.close());
    els.play.addEventListener("click", () => (this.timer ? this.pause() : this.play()));
    els.step.addEventListener("click", () => this.step());
    els.speed.addEventListener("change", () => {
      this.speed = Number(els.speed.value) || 1;
    });
    els.range.addEventListener("input", () => this.#showCursor(Number(els.range.value)));
    els.range.addEventListener("change", () => this.seek(Number(els.range.value)));
  }

  /** The "Replay" button of an ended run, "Look back" on a live one. */
  showOpen(status) {
    const ended = ENDED.has(status);
    this.els.open.textContent = ended ? this.els.open.dataset.ended : this.els.open.dataset.live;
    this.els.exit.textContent = ended ? this.els.exit.dataset.ended : this.els.exit.dataset.live;
    this.els.open.hidden = this.on || !status || status === "pending";
  }

  async open() {
    if (this.on) return;
    const run = await getJson(`/api/runs/${encodeURIComponent(this.run)}`);
    this.on = true;
    document.body.dataset.replay = "on";
    this.page.connection.close(); // the page is fed from here until "back to live"
    this.end = run.clock?.t ?? 0;
    this.els.range.max = String(this.end);
    this.els.bar.hidden = false;
    this.els.open.hidden = true;
    await this.seek(ENDED.has(run.status) ? 0 : this.end);
  }

  close() {
    if (!this.on) return;
    this.pause();
    this.on = false;
    this.token = null;
    delete document.body.dataset.replay;
    this.els.bar.hidden = true;
    this.#exportAt(null);
    const old = this.page.connection;
    this.#forget();
    this.page.store.lastSeq = 0; // the new socket starts with a snapshot, not a resume
    this.page.connection = new RunConnection(old.path, { lastSeq: old.lastSeq, ...old.handlers });
    this.showOpen(document.body.dataset.runStatus);
  }

  /** The page's events and markers go: what it shows next comes from one seek. */
  #forget() {
    this.page.history.clear();
    this.page.timeline.clear();
    this.page.sequence.setFocus(this.page.focus);
  }

  /** The page as of virtual time `t`: the snapshot at t - WINDOW, then the events up to t as frames. */
  async seek(t) {
    const target = Math.min(Math.max(0, t), this.end);
    const token = (this.token = {});
    this.#showCursor(target);
    const from = Math.max(0, Math.round((target - WINDOW) * 1e6) / 1e6);
    let body;
    try {
      body = await getJson(`/api/runs/${encodeURIComponent(this.run)}/snapshot?t=${from}`);
    } catch (e) {
      this.page.toast(String(e.message ?? e), true);
      return;
    }
    if (token !== this.token) return;
    this.#forget();
    this.page.onSnapshot({ type: "snapshot", last_seq: body.last_seq, clock: body.clock, snapshot: body.snapshot });
    this.buffer = [];
    this.after = body.last_seq;
    this.more = true;
    this.cursor = from;
    await this.#advance(target, true, token);
  }

  /** Feeds the events before `t` as frames and moves the page's clock to `t`. */
  async #advance(t, paused, token = this.token) {
    while (this.more && (!this.buffer.length || this.buffer[this.buffer.length - 1].t < t)) {
      const page = await getJson(`/api/runs/${encodeURIComponent(this.run)}/events?after=${this.after}&limit=${PAGE}`);
      if (token !== this.token) return false;
      this.buffer.push(...page.events);
      this.more = Boolean(page.has_more) && page.next_after > this.after;
      this.after = page.next_after;
    }
    let n = 0;
    while (n < this.buffer.length && this.buffer[n].t < t) n++;
    const due = this.buffer.splice(0, n);
    const clock = { t, speed: this.speed, paused };
    for (let i = 0; i < due.length; i += FRAME_PIECE) {
      const events = due.slice(i, i + FRAME_PIECE);
      this.page.onFrame({ type: "frame", seq: [events[0].seq, events[events.length - 1].seq], events, clock });
    }
    if (!due.length) this.page.clock.update(clock);
    this.cursor = t;
    this.#showCursor(t);
    this.#exportAt(t);
    if (paused && this.page.store.nodeLevel) await this.#podCounts(t, token);
    this.page.frames.request();
    return true;
  }

  /**
   * A node-level run (a large cluster) counts pods on the server: the events fed as frames do not carry
   * the counts, so where the replay stops they come from the snapshot at that time (a parked simulation
   * continued a few seconds on the server).
   */
  async #podCounts(t, token) {
    try {
      const body = await getJson(`/api/runs/${encodeURIComponent(this.run)}/snapshot?t=${t}`);
      if (token === this.token) this.page.store.applyFrameExtras({ podCounts: body.snapshot.podCounts ?? {} });
    } catch {
      // the counts stay as of the last stop
    }
  }

  play() {
    if (this.timer || !this.on) return;
    if (this.cursor >= this.end) return;
    this.els.play.textContent = this.els.play.dataset.pause;
    let busy = false;
    this.timer = setInterval(async () => {
      if (busy) return; // a page of events still loading: the replay waits for it
      busy = true;
      const next = Math.min(this.end, this.cursor + (TICK_MS / 1000) * this.speed);
      try {
        await this.#advance(next, next >= this.end);
      } finally {
        busy = false;
      }
      if (next >= this.end) this.pause();
    }, TICK_MS);
  }

  pause() {
    clearInterval(this.timer);
    this.timer = null;
    this.els.play.textContent = this.els.play.dataset.play;
    if (this.on) this.page.clock.update({ t: this.cursor, speed: this.speed, paused: true });
    this.page.frames.request();
  }

  async step() {
    this.pause();
    await this.#advance(Math.min(this.end, this.cursor + STEP), true);
  }

  /** objects.yaml of the moment the page shows: `?t=` the cursor (microseconds, as the API keeps times), or none. */
  #exportAt(t) {
    if (!this.objectsLink) return;
    const at = t === null ? "" : `?t=${Math.round(t * 1e6) / 1e6}`;
    this.objectsLink.setAttribute("href", `${this.objectsHref}${at}`);
  }

  #showCursor(t) {
    this.els.range.value = String(t);
    this.els.at.textContent = `T+${formatOffset(t)}`;
  }
}

/**
 * The replay bar of the run page `page` (run-page.js RunPage), once its panels and connection exist: opened from
 * "Replay" or "Look back", which shows while `body[data-run-status]` allows it.
 * @param {import("#js/run-page.js").RunPage} page
 * @param {{run: string}} config  the page's run-config
 */
export function startReplay(page, config) {
  const $ = (id) => document.getElementById(id);
  const els = { bar: $("replay-bar"), open: $("btn-replay"), exit: $("replay-exit"), play: $("replay-play"),
    step: $("replay-step"), speed: $("replay-speed"), range: $("replay-time"), at: $("replay-at") };
  if (!els.bar || !els.open) return;
  const replay = new Replay(page, config.run, els);
  window.heartbeatReplay = replay; // tests read and drive the replay from here
  const follow = () => replay.showOpen(document.body.dataset.runStatus);
  new MutationObserver(follow).observe(document.body, { attributes: true, attributeFilter: ["data-run-status"] });
  follow();
}
