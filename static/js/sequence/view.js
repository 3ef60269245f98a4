// The live sequence diagram, drawn incrementally with d3: one <g> per row, keyed by seq, only for
// the rows in (or near) the viewport. New rows are appended at the bottom and animated once;
// existing rows never move, so nothing flickers and the cost per frame stays flat however long
// the run is. Mermaid is kept for static diagrams and export (see static-diagrams.js).
import { LANES, SequenceModel } from "./model.js";
import { formatOffset } from "../time.js";

const ROW_H = 22;
const GUTTER = 58;
const OVERSCAN = 12;

export class SequenceView {
  /**
   * @param {HTMLElement} root  element with .seq-head, .seq-scroll > svg and .seq-live inside
   * @param {{d3: any, t: Function, onSelect: Function}} options
   */
  constructor(root, { d3, t, onSelect }) {
    this.d3 = d3;
    this.t = t;
    this.onSelect = onSelect;
    this.model = new SequenceModel();
    this.focus = null;
    this.follow = true;
    this.root = root;
    this.head = root.querySelector(".seq-head");
    this.scroller = root.querySelector(".seq-scroll");
    this.svg = d3.select(this.scroller).append("svg").attr("class", "seq-svg").attr("role", "img");
    this.lifelines = this.svg.append("g").attr("class", "lifelines");
    this.rowsLayer = this.svg.append("g").attr("class", "rows");
    this.liveButton = root.querySelector(".seq-live");
    this.droppedSeen = 0;
    this.pending = false;
    this.scroller.addEventListener("scroll", () => {
      const atBottom = this.scroller.scrollTop + this.scroller.clientHeight >= this.scroller.scrollHeight - ROW_H * 2;
      this.follow = atBottom;
      this.liveButton.hidden = atBottom;
      this.schedule();
    }, { passive: true });
    this.liveButton?.addEventListener("click", () => {
      this.follow = true;
      this.liveButton.hidden = true;
      this.scroller.scrollTop = this.scroller.scrollHeight;
    });
    new ResizeObserver(() => this.layout()).observe(this.scroller);
    this.layout();
  }

  /** Lane x positions follow the panel width; recomputed on resize only. */
  layout() {
    const width = Math.max(this.scroller.clientWidth, 480);
    this.width = width;
    this.laneW = (width - GUTTER) / LANES.length;
    this.x = new Map(LANES.map((lane, i) => [lane.id, GUTTER + this.laneW * (i + 0.5)]));
    this.svg.attr("width", width);
    this.renderHead();
    this.lifelines.selectAll("line").data(LANES).join("line")
      .attr("class", (d) => `lifeline lane-${d.id}`)
      .attr("x1", (d) => this.x.get(d.id)).attr("x2", (d) => this.x.get(d.id)).attr("y1", 0);
    this.rowsLayer.selectAll("g.row").remove(); // positions depend on the width: redraw the window once
    this.schedule();
  }

  renderHead() {
    this.head.replaceChildren(...LANES.map((lane) => {
      const div = document.createElement("div");
      div.className = `lane-label lane-${lane.id}`;
      div.style.left = `${this.x.get(lane.id) - this.laneW / 2}px`;
      div.style.width = `${this.laneW}px`;
      div.textContent = this.t(`lane.${lane.id}`, { node: this.focus ?? "" });
      return div;
    }));
  }

  setFocus(node, events) {
    this.focus = node;
    this.model.rebuild(events, node);
    this.droppedSeen = 0;
    this.renderHead();
    this.rowsLayer.selectAll("g.row").remove();
    this.follow = true;
    this.schedule();
  }

  /** Appends the rows of newly arrived events; drawing happens at the next animation frame. */
  append(events, { fresh = true } = {}) {
    for (const e of events) {
      const row = this.model.push(e, this.focus);
      if (row) row.fresh = fresh;
    }
    this.schedule();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.render();
    });
  }

  render() {
    const rows = this.model.rows;
    const height = Math.max(rows.length * ROW_H + 8, this.scroller.clientHeight);
    this.svg.attr("height", height);
    this.lifelines.selectAll("line").attr("y2", height);
    if (this.model.dropped !== this.droppedSeen) {
      // The oldest chunk left the scroll-back buffer: keep the user's view where it was.
      this.scroller.scrollTop -= (this.model.dropped - this.droppedSeen) * ROW_H;
      this.droppedSeen = this.model.dropped;
    }
    if (this.follow) this.scroller.scrollTop = height;
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((top + this.scroller.clientHeight) / ROW_H) + OVERSCAN);
    const visible = [];
    for (let i = first; i < last; i++) visible.push({ row: rows[i], index: i });
    this.rowsLayer.selectAll("g.row")
      .data(visible, (d) => d.row.seq)
      .join(
        (enter) => enter.append("g").each((d, i, nodes) => this.drawRow(this.d3.select(nodes[i]), d.row)),
        (update) => update,
        (exit) => exit.remove(),
      )
      .attr("transform", (d) => `translate(0,${d.index * ROW_H})`);
  }

  drawRow(g, row) {
    const classes = ["row", `row-${row.kind}`];
    if (row.fresh) classes.push("fresh");
    if (row.failed) classes.push("failed");
    if (row.other) classes.push("other");
    if (row.read) classes.push("read");
    if (row.event?.component) classes.push(`c-${row.event.component}`);
    g.attr("class", classes.join(" ")).attr("data-seq", row.seq).attr("data-kind", row.kind)
      .attr("data-node", row.node ?? "").attr("data-label", row.label);
    row.fresh = false; // scrolling back to it later does not replay the animation
    g.on("click", () => this.onSelect?.(row.event));
    g.append("rect").attr("class", "hit").attr("x", 0).attr("y", 0).attr("width", this.width).attr("height", ROW_H);
    g.append("text").attr("class", "gutter").attr("x", 4).attr("y", 15).text(formatOffset(row.t));
    const y = 15;
    if (row.kind === "note") {
      g.append("rect").attr("class", "note-box").attr("x", GUTTER + 4).attr("y", 2).attr("width", this.width - GUTTER - 8).attr("height", ROW_H - 4).attr("rx", 4);
      g.append("text").attr("class", "note-text").attr("x", (GUTTER + this.width) / 2).attr("y", y).attr("text-anchor", "middle").text(`⚡ ${row.label}`);
      return;
    }
    if (row.kind === "decision") {
      const x = this.x.get(row.lane);
      g.append("path").attr("class", "decision-mark").attr("d", `M${x},${y - 9} l7,6 l-7,6 l-7,-6 z`);
      const anchorLeft = x > this.width * 0.7;
      let text = this.t(`rule.${row.label}`, {}, row.label);
      if (row.record) {
        text += ` · ${this.focus}: ${this.t(`branch.${row.record.branch}`, {}, row.record.branch)}`;
        if (row.record.deadline !== undefined && row.record.current !== "Unknown") {
          text += ` · ${this.t("seq.deadline", { t: formatOffset(row.record.deadline, { tenths: false }) })}`;
        }
      }
      if (row.label === "nlc.monitor-pass") g.classed("pass", true);
      g.append("text").attr("class", "decision-text").attr("x", anchorLeft ? x - 10 : x + 10).attr("y", y)
        .attr("text-anchor", anchorLeft ? "end" : "start").text(text);
      return;
    }
    if (row.kind === "watch") {
      const x1 = this.x.get(row.from);
      const xs = row.targets.map((lane) => this.x.get(lane));
      const lo = Math.min(x1, ...xs);
      const hi = Math.max(x1, ...xs);
      g.append("line").attr("class", "arrow watch").attr("x1", lo).attr("x2", hi).attr("y1", y - 4).attr("y2", y - 4);
      for (const x of xs) g.append("path").attr("class", "head watch").attr("d", arrowHead(x, y - 4, x > x1 ? 1 : -1));
      g.append("text").attr("class", "label watch").attr("x", (x1 + Math.max(...xs)) / 2).attr("y", y - 7).attr("text-anchor", "middle").text(`watch ${row.label}`);
      return;
    }
    const x1 = this.x.get(row.from);
    const x2 = this.x.get(row.to);
    const dir = x2 >= x1 ? 1 : -1;
    const end = row.kind === "lost" ? x1 + (x2 - x1) * 0.55 : x2 - dir * 2;
    g.append("line").attr("class", `arrow ${row.kind}`).attr("x1", x1).attr("x2", end).attr("y1", y - 4).attr("y2", y - 4);
    if (row.kind === "lost") {
      g.append("text").attr("class", "lost-x").attr("x", end).attr("y", y).attr("text-anchor", "middle").text("✕");
    } else {
      g.append("path").attr("class", "head").attr("d", arrowHead(x2, y - 4, dir));
    }
    const label = row.code && row.code >= 400 ? `${row.label} → ${row.code}` : row.label;
    const mid = (x1 + x2) / 2;
    g.append("text").attr("class", "label").attr("x", mid).attr("y", y - 7).attr("text-anchor", "middle")
      .text(row.other ? `${label}` : label);
  }

  /** Rows currently drawn, for tests and the benchmark. */
  drawnCount() {
    return this.rowsLayer.selectAll("g.row").size();
  }
}

function arrowHead(x, y, dir) {
  return `M${x},${y} l${-7 * dir},-4 l0,8 z`;
}
