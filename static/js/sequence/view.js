// The live sequence diagram, drawn incrementally with d3: one <g> per row, keyed by seq, only for
// the rows in (or near) the viewport. New rows are appended at the bottom; existing rows never
// move, so nothing flickers and the cost per frame stays flat however long the run is.
//
// Rows are drawn by the page's frame pass (about ten a second), not on every event: an arrow
// arriving is drawn in over the next few passes (its line grows from the sender to the receiver)
// instead of by a CSS animation, which would cost a full frame of layout and paint at 60 Hz.
// The lifelines are a separate SVG behind the scroller: they never change while rows arrive.
// Mermaid is kept for static diagrams and export (see static-diagrams.js).
import { LANES, SequenceModel } from "./model.js";
import { formatOffset } from "../time.js";

const ROW_H = 22;
const GUTTER = 58;
const OVERSCAN = 12;
const DRAW_MS = 400; // an arriving arrow is drawn in over this long
const FRESH_MS = 900; // and marked as new for this long
const ARRIVING_MAX = 6; // a burst (catch-up, high speed) animates only its last rows
const SVG_CHUNK = ROW_H * 200;

export class SequenceView {
  /**
   * @param {HTMLElement} root  element with .seq-head, .seq-scroll and .seq-live inside
   * @param {{d3: any, t: Function, onSelect: Function, request?: Function}} options
   *   `request` asks the page for a frame pass (which calls `render`)
   */
  constructor(root, { d3, t, onSelect, request }) {
    this.d3 = d3;
    this.t = t;
    this.onSelect = onSelect;
    this.request = request ?? (() => this.schedule());
    this.model = new SequenceModel();
    this.focus = null;
    this.follow = true;
    this.root = root;
    this.head = root.querySelector(".seq-head");
    this.scroller = root.querySelector(".seq-scroll");
    this.lifelineSvg = d3.select(root).insert("svg", ".seq-scroll").attr("class", "seq-lifelines").attr("aria-hidden", "true");
    // The scroll height is the height of a clipping box around the SVG; the SVG itself grows a
    // chunk of rows at a time, so while rows arrive its size, and the layout of its rows, stay.
    this.canvas = d3.select(this.scroller).append("div").attr("class", "seq-canvas");
    this.svg = this.canvas.append("svg").attr("class", "seq-svg").attr("role", "img");
    this.rowsLayer = this.svg.append("g").attr("class", "rows");
    this.liveButton = root.querySelector(".seq-live");
    this.reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
    this.droppedSeen = 0;
    this.pending = false;
    this.dirty = true;
    this.height = 0;
    this.top = 0; // the scroll position, as last set or seen (never read back in a frame pass)
    this.arriving = new Map(); // seq -> {g, row, line, x1, x2}: rows drawn in over the next passes
    this.scroller.addEventListener("scroll", () => {
      const top = this.scroller.scrollTop;
      if (Math.abs(top - this.top) < 1) return; // the scroll the view made itself
      this.top = top;
      const atBottom = top + this.viewHeight >= this.height - ROW_H * 2;
      this.follow = atBottom;
      this.liveButton.hidden = atBottom;
      this.dirty = true;
      this.schedule(); // the user is scrolling: draw the rows coming into view at once
    }, { passive: true });
    this.liveButton?.addEventListener("click", () => {
      this.follow = true;
      this.liveButton.hidden = true;
      this.dirty = true;
      this.schedule();
    });
    new ResizeObserver(() => this.layout()).observe(this.scroller);
    this.layout();
  }

  /** Lane x positions follow the panel width; recomputed on resize only. */
  layout() {
    const width = Math.max(this.scroller.clientWidth, 480);
    this.width = width;
    this.viewHeight = this.scroller.clientHeight;
    this.laneW = (width - GUTTER) / LANES.length;
    this.x = new Map(LANES.map((lane, i) => [lane.id, GUTTER + this.laneW * (i + 0.5)]));
    this.svg.attr("width", width);
    this.renderHead();
    this.lifelineSvg.attr("width", width).attr("height", this.viewHeight);
    this.lifelineSvg.selectAll("line").data(LANES).join("line")
      .attr("class", (d) => `lifeline lane-${d.id}`)
      .attr("x1", (d) => this.x.get(d.id)).attr("x2", (d) => this.x.get(d.id)).attr("y1", 0).attr("y2", this.viewHeight);
    this.rowsLayer.selectAll("g.row").remove(); // positions depend on the width: redraw the window once
    this.arriving.clear();
    this.dirty = true;
    this.schedule();
  }

  /**
   * Lane names in two staggered tiers (even lanes above, odd lanes below), each centred on its
   * lifeline and free to use two lanes' width, so long names ("node-2 kubelet syncNodeStatus")
   * are neither cut nor overlapping on a laptop.
   */
  renderHead() {
    this.head.replaceChildren(...LANES.map((lane, i) => {
      const div = document.createElement("div");
      div.className = `lane-label lane-${lane.id} tier-${i % 2}`;
      const x = this.x.get(lane.id);
      // From the previous lane's lifeline to the next one's: labels of one tier never overlap.
      const left = Math.max(0, x - this.laneW + 2);
      const right = Math.min(this.width, x + this.laneW - 2);
      div.style.left = `${left}px`;
      div.style.width = `${right - left}px`;
      div.style.setProperty("--tick", `${x - left}px`);
      const text = this.t(`lane.${lane.id}`, { node: this.focus ?? "" });
      const span = document.createElement("span");
      span.textContent = text;
      div.title = text.replace(/\n/g, " ");
      div.append(span);
      return div;
    }));
  }

  setFocus(node, events) {
    this.focus = node;
    this.model.rebuild(events, node);
    this.droppedSeen = 0;
    this.renderHead();
    this.rowsLayer.selectAll("g.row").remove();
    this.arriving.clear();
    this.follow = true;
    this.liveButton.hidden = true;
    this.dirty = true;
    this.request();
  }

  /** Appends the rows of newly arrived events; they are drawn by the next frame pass. */
  append(events, { fresh = true } = {}) {
    const added = [];
    for (const e of events) {
      const row = this.model.push(e, this.focus);
      if (row) added.push(row);
    }
    if (!added.length) return;
    // Arrivals are animated one by one as they come; in a burst only the last few are, so a
    // catch-up after a reconnect does not light up the whole diagram.
    if (fresh && !this.reducedMotion) {
      this.newRows = (this.newRows ?? []).concat(added).slice(-ARRIVING_MAX);
    }
    this.dirty = true;
    this.request();
  }

  /** Draws at the next animation frame (scrolling by the user, resizes). */
  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.render();
    });
  }

  /**
   * Draws the rows in the window and the next step of the arriving ones. Writes only, apart from
   * the scroll position it keeps itself. Returns whether an arrow is still being drawn in.
   */
  render() {
    const now = performance.now();
    if (this.newRows) {
      if (this.follow) for (const row of this.newRows) row.fresh = true;
      this.newRows = null;
    }
    if (this.dirty) {
      this.dirty = false;
      this.#window();
    }
    for (const [seq, item] of this.arriving) {
      if (!item.g.node().isConnected || this.#arrive(item, now)) this.arriving.delete(seq);
    }
    return this.arriving.size > 0;
  }

  #window() {
    const rows = this.model.rows;
    const height = Math.max(rows.length * ROW_H + 8, this.viewHeight);
    if (height !== this.height) {
      this.height = height;
      this.canvas.style("height", `${height}px`);
      const svgHeight = Math.ceil(height / SVG_CHUNK) * SVG_CHUNK;
      if (svgHeight !== this.svgHeight) {
        this.svgHeight = svgHeight;
        this.svg.attr("height", svgHeight);
      }
    }
    if (this.model.dropped !== this.droppedSeen) {
      // The oldest chunk left the scroll-back buffer: keep the user's view where it was.
      const shift = (this.model.dropped - this.droppedSeen) * ROW_H;
      this.droppedSeen = this.model.dropped;
      if (!this.follow) this.#scrollTo(Math.max(0, this.top - shift));
    }
    if (this.follow) this.#scrollTo(Math.max(0, height - this.viewHeight));
    const top = this.top;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((top + this.viewHeight) / ROW_H) + OVERSCAN);
    const visible = [];
    for (let i = first; i < last; i++) visible.push({ row: rows[i], index: i });
    const now = performance.now();
    this.rowsLayer.selectAll("g.row")
      .data(visible, (d) => d.row.seq)
      .join(
        (enter) => enter.append("g").each((d, i, nodes) => this.drawRow(this.d3.select(nodes[i]), d.row, now)),
        (update) => update,
        (exit) => exit.remove(),
      )
      // Rows keep their place: only a new row (or all of them, when the oldest chunk of the
      // scroll-back is dropped) gets a transform written.
      .each(function (d) {
        if (this.__index !== d.index) {
          this.__index = d.index;
          this.setAttribute("transform", `translate(0,${d.index * ROW_H})`);
        }
      });
  }

  /** Scrolls (a write: the position is remembered, not read back). */
  #scrollTo(top) {
    if (Math.abs(this.top - top) < 1) return;
    this.top = top;
    this.scroller.scrollTop = top;
  }

  drawRow(g, row, now = performance.now()) {
    const classes = ["row", `row-${row.kind}`];
    if (row.failed) classes.push("failed");
    if (row.other) classes.push("other");
    if (row.read) classes.push("read");
    if (row.event?.component) classes.push(`c-${row.event.component}`);
    g.attr("class", classes.join(" ")).attr("data-seq", row.seq).attr("data-kind", row.kind)
      .attr("data-node", row.node ?? "").attr("data-label", row.label);
    if (row.fresh) {
      row.fresh = false; // scrolling back to it later does not replay the arrival
      row.arrivedAt = now;
    }
    g.on("click", () => this.onSelect?.(row.event));
    g.append("rect").attr("class", "hit").attr("x", 0).attr("y", 0).attr("width", this.width).attr("height", ROW_H);
    g.append("text").attr("class", "gutter").attr("x", 4).attr("y", 15).text(formatOffset(row.t));
    const y = 15;
    let arrow = null;
    if (row.kind === "note") {
      g.append("rect").attr("class", "note-box").attr("x", GUTTER + 4).attr("y", 2).attr("width", this.width - GUTTER - 8).attr("height", ROW_H - 4).attr("rx", 4);
      g.append("text").attr("class", "note-text").attr("x", (GUTTER + this.width) / 2).attr("y", y).attr("text-anchor", "middle").text(`⚡ ${row.label}`);
    } else if (row.kind === "decision") {
      const x = this.x.get(row.lane);
      g.append("path").attr("class", "decision-mark").attr("d", `M${x},${y - 9} l7,6 l-7,6 l-7,-6 z`);
      let text = this.t(`rule.${row.label}`, {}, row.label);
      if (row.record) {
        text += ` · ${this.focus}: ${this.t(`branch.${row.record.branch}`, {}, row.record.branch)}`;
        if (row.record.deadline !== undefined && row.record.current !== "Unknown") {
          text += ` · ${this.t("seq.deadline", { t: formatOffset(row.record.deadline, { tenths: false }) })}`;
        }
      }
      if (row.label === "nlc.monitor-pass") g.classed("pass", true);
      // The text goes to the side with more room; a title keeps the whole of it.
      const anchorLeft = x > (GUTTER + this.width) / 2;
      const room = anchorLeft ? x - GUTTER - 14 : this.width - x - 14;
      g.append("text").attr("class", "decision-text").attr("x", anchorLeft ? x - 10 : x + 10).attr("y", y)
        .attr("text-anchor", anchorLeft ? "end" : "start").text(fit(text, room, 6.1));
      g.append("title").text(text);
    } else if (row.kind === "watch") {
      const x1 = this.x.get(row.from);
      const xs = row.targets.map((lane) => this.x.get(lane));
      const lo = Math.min(x1, ...xs);
      const hi = Math.max(x1, ...xs);
      g.append("line").attr("class", "arrow watch").attr("x1", lo).attr("x2", hi).attr("y1", y - 4).attr("y2", y - 4);
      for (const x of xs) g.append("path").attr("class", "head watch").attr("d", arrowHead(x, y - 4, x > x1 ? 1 : -1));
      g.append("text").attr("class", "label watch").attr("x", (x1 + Math.max(...xs)) / 2).attr("y", y - 7).attr("text-anchor", "middle").text(`watch ${row.label}`);
    } else {
      const x1 = this.x.get(row.from);
      const x2 = this.x.get(row.to);
      const dir = x2 >= x1 ? 1 : -1;
      const end = row.kind === "lost" ? x1 + (x2 - x1) * 0.55 : x2 - dir * 2;
      const line = g.append("line").attr("class", `arrow ${row.kind}`).attr("x1", x1).attr("x2", end).attr("y1", y - 4).attr("y2", y - 4);
      arrow = { line, x1, x2: end };
      if (row.kind === "lost") {
        g.append("text").attr("class", "lost-x").attr("x", end).attr("y", y).attr("text-anchor", "middle").text("✕");
      } else {
        g.append("path").attr("class", "head").attr("d", arrowHead(x2, y - 4, dir));
      }
      const label = row.code && row.code >= 400 ? `${row.label} → ${row.code}` : row.label;
      g.append("text").attr("class", "label").attr("x", (x1 + x2) / 2).attr("y", y - 7).attr("text-anchor", "middle").text(label);
    }
    if (row.arrivedAt !== undefined && now - row.arrivedAt < FRESH_MS) {
      const item = { g, row, ...arrow };
      if (!this.#arrive(item, now)) this.arriving.set(row.seq, item);
    }
  }

  /**
   * One step of an arriving row: the arrow's line grows towards its receiver (head and label show
   * when it gets there), then the row stays highlighted a moment. Returns true when done.
   */
  #arrive(item, now) {
    const age = now - item.row.arrivedAt;
    if (item.line) {
      const f = Math.min(1, Math.max(0.25, age / DRAW_MS));
      const x = f >= 1 ? item.x2 : item.x1 + (item.x2 - item.x1) * (1 - (1 - f) ** 2);
      if (item.shownX !== x) {
        item.shownX = x;
        item.line.attr("x2", x);
      }
      const drawing = f < 1;
      if (item.drawing !== drawing) {
        item.drawing = drawing;
        item.g.classed("drawing", drawing);
      }
    }
    const fresh = age < FRESH_MS;
    if (item.fresh !== fresh) {
      item.fresh = fresh;
      item.g.classed("fresh", fresh);
    }
    return !fresh;
  }

  /** Rows currently drawn, for tests and the benchmark. */
  drawnCount() {
    return this.rowsLayer.selectAll("g.row").size();
  }
}

function arrowHead(x, y, dir) {
  return `M${x},${y} l${-7 * dir},-4 l0,8 z`;
}

/** Shortens a text to about `room` pixels (at ~`perChar` px a character), with an ellipsis. */
function fit(text, room, perChar) {
  const max = Math.max(8, Math.floor(room / perChar));
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
