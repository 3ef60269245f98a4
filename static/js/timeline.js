// @ts-check
// The event timeline: virtual time on x, one lane per kind of change (faults, node Ready,
// taints, pods, zones), markers bucketed per few pixels so a 100-node run stays a few hundred SVG
// elements. Clicking a marker explains the event behind it.
import { formatOffset } from "#js/time.js";

const LANES = ["fault", "node", "taint", "pod", "zone"];
const LANE_H = 18;
const TOP = 16;
const LEFT = 70;
const BUCKET = 7;

/** Timeline lane of an event, or null when the timeline does not show it. */
export function timelineLane(event) {
  if (event.type === "fault") return "fault";
  if (event.type !== "transition") return null;
  if (event.kind === "node-ready" || event.kind === "node-condition" || event.kind === "node-created"
    || event.kind === "node-deleted") return "node";
  if (event.kind === "taint-added" || event.kind === "taint-removed") return "taint";
  if (event.kind === "zone-state") return "zone";
  if (event.kind?.startsWith("pod-") || event.kind === "endpoint") return "pod";
  return null;
}

export class Timeline {
  constructor(root, { t, onSelect, duration }) {
    this.root = root;
    this.t = t;
    this.onSelect = onSelect;
    this.duration = duration || 600;
    this.buckets = new Map(); // "lane:x" -> {event, count, el}
    this.events = [];
    const ns = "http://www.w3.org/2000/svg";
    this.svg = document.createElementNS(ns, "svg");
    this.svg.setAttribute("class", "timeline-svg");
    this.axis = document.createElementNS(ns, "g");
    this.marks = document.createElementNS(ns, "g");
    this.nowLine = document.createElementNS(ns, "line");
    this.nowLine.setAttribute("class", "now-line");
    this.svg.append(this.axis, this.marks, this.nowLine);
    root.replaceChildren(this.svg);
    const select = (target) => {
      const mark = target.closest?.("[data-seq]");
      if (mark) this.onSelect?.(this.byseq.get(Number(mark.dataset.seq)));
      return Boolean(mark);
    };
    this.svg.addEventListener("click", (e) => select(e.target));
    // a marker is a button to the Why? panel, by keyboard too
    this.svg.addEventListener("keydown", (e) => {
      if ((e.key === "Enter" || e.key === " ") && select(e.target)) e.preventDefault();
    });
    this.byseq = new Map();
    this.queue = []; // [event, lane] waiting for the next frame pass
    this.grow = false;
    this.nowX = null;
    // Sized when the observer first reports (before the next paint, the page laid out by then): its width read
    // here laid out the whole page in the middle of its opening (a task too long on a phone). Until then the
    // axis is drawn at the narrowest width.
    new ResizeObserver(() => this.layout()).observe(root);
    this.layout(0);
  }

  /** Fits the axis to the panel's width (`width`: as known, when it is not to be read from the page). */
  layout(width = this.root.clientWidth) {
    this.width = Math.max(300, width);
    this.height = TOP + LANES.length * LANE_H + 4;
    this.svg.setAttribute("width", String(this.width));
    this.svg.setAttribute("height", String(this.height));
    this.nowLine.setAttribute("y1", String(TOP - 2));
    this.nowLine.setAttribute("y2", String(this.height));
    this.nowX = null;
    this.redraw();
  }

  x(t) {
    return LEFT + (t / this.duration) * (this.width - LEFT - 10);
  }

  setDuration(seconds) {
    this.duration = this.events.reduce((d, e) => Math.max(d, e.event.t * 1.05), Math.max(seconds, 60));
    this.redraw();
  }

  /** Forgets every marker: a replay seeking back draws the ones before its cursor again. */
  clear() {
    this.events = [];
    this.byseq.clear();
    this.redraw();
  }

  /** Adds events from before the page opened (the run's earlier faults and transitions). */
  merge(events) {
    const all = new Map(this.events.map(({ event }) => [event.seq, event]));
    for (const e of events) if (!all.has(e.seq)) all.set(e.seq, e);
    this.events = [];
    this.byseq.clear();
    for (const e of [...all.values()].sort((x, y) => x.seq - y.seq)) this.#keep(e);
    this.redraw();
  }

  #keep(event) {
    const lane = timelineLane(event);
    if (!lane) return null;
    this.events.push({ event, lane });
    this.byseq.set(event.seq, event);
    if (event.t > this.duration * 0.98) {
      this.duration = Math.ceil((event.t * 1.5) / 60) * 60; // the run outlived the scenario's length
      return "grow";
    }
    return lane;
  }

  /** Keeps the events it shows; their markers are drawn by the next frame pass (`flush`). */
  append(events) {
    for (const e of events) {
      const kept = this.#keep(e);
      if (kept === "grow") this.grow = true;
      else if (kept) this.queue.push([e, kept]);
    }
  }

  /** Draws the markers that arrived since the last pass (all of them again when the axis grew). */
  flush() {
    if (this.grow) {
      this.grow = false;
      this.redraw(); // marks every kept event, the queued ones too
      return;
    }
    for (const [event, lane] of this.queue) this.#mark(event, lane);
    this.queue = [];
  }

  redraw() {
    this.queue = [];
    this.nowX = null;
    this.buckets.clear();
    this.marks.replaceChildren();
    this.#drawAxis();
    for (const { event, lane } of this.events) this.#mark(event, lane);
  }

  #drawAxis() {
    const ns = "http://www.w3.org/2000/svg";
    this.axis.replaceChildren();
    LANES.forEach((lane, i) => {
      const y = TOP + i * LANE_H;
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", String(4));
      label.setAttribute("y", String(y + 12));
      label.setAttribute("class", "tl-lane");
      label.textContent = this.t(`timeline.${lane}`);
      const line = document.createElementNS(ns, "line");
      line.setAttribute("x1", String(LEFT));
      line.setAttribute("x2", String(this.width - 10));
      line.setAttribute("y1", String(y + 9));
      line.setAttribute("y2", String(y + 9));
      line.setAttribute("class", "tl-track");
      this.axis.append(label, line);
    });
    // At most 12 times, at least 44 px apart (a time is about 35 px wide at 12 px, a phone's size),
    // none running past the right edge.
    const plot = this.width - LEFT - 10;
    const step = [30, 60, 120, 300, 600, 1800, 3600, 7200]
      .find((s) => this.duration / s <= 12 && (plot * s) / this.duration >= 44) ?? 7200;
    for (let t = 0; t <= this.duration && this.x(t) + 20 <= this.width; t += step) {
      const tick = document.createElementNS(ns, "text");
      tick.setAttribute("x", String(this.x(t)));
      tick.setAttribute("y", String(11));
      tick.setAttribute("text-anchor", "middle");
      tick.setAttribute("class", "tl-tick");
      tick.textContent = formatOffset(t, { tenths: false });
      this.axis.append(tick);
    }
  }

  #mark(event, lane) {
    const ns = "http://www.w3.org/2000/svg";
    // One marker per BUCKET pixels and lane: markers never cover each other's centres, so each
    // stays clickable (and a long run stays a few hundred elements).
    const px = Math.round(this.x(event.t) / BUCKET) * BUCKET;
    const key = `${lane}:${px}`;
    const bucket = this.buckets.get(key);
    if (bucket) {
      bucket.count++;
      // Faults and node changes outrank pod noise in a shared pixel.
      if (lane !== "pod") bucket.el.dataset.seq = String(event.seq);
      bucket.el.setAttribute("data-count", String(bucket.count));
      return;
    }
    const y = TOP + LANES.indexOf(lane) * LANE_H + 9;
    const mark = document.createElementNS(ns, lane === "fault" ? "path" : "circle");
    if (lane === "fault") mark.setAttribute("d", `M${px},${y - 7} l6,12 l-12,0 z`);
    else {
      mark.setAttribute("cx", String(px));
      mark.setAttribute("cy", String(y));
      mark.setAttribute("r", String(3.5));
    }
    const detail = event.kind ? `${event.kind} ${event.to ?? ""}` : event.action;
    mark.setAttribute("class", `tl-mark tl-${lane} ${event.kind ? `k-${event.kind}` : ""} ` +
      `${detail?.includes("False") || detail?.includes("Unknown") ? "bad" : ""}`);
    mark.dataset.seq = String(event.seq);
    mark.setAttribute("tabindex", "0");
    mark.setAttribute("role", "button");
    const title = document.createElementNS(ns, "title");
    title.textContent = `${formatOffset(event.t)} ${event.node ?? event.key ?? ""} ${detail ?? ""}`;
    mark.append(title);
    this.marks.append(mark);
    this.buckets.set(key, { el: mark, count: 1 });
  }

  /** Moves the "now" line, when it moved by a pixel (about every second on a 15-minute axis). */
  setNow(t) {
    const x = Math.round(this.x(t));
    if (x === this.nowX) return;
    this.nowX = x;
    this.nowLine.setAttribute("x1", String(x));
    this.nowLine.setAttribute("x2", String(x));
  }
}
