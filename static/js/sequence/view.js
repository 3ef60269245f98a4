// @ts-check
// The live sequence diagram, drawn incrementally with d3: one <g> per row, keyed by seq, only for
// the rows in (or near) the viewport. New rows are appended at the bottom; existing rows never
// move, so nothing flickers and the cost per frame stays flat however long the run is.
//
// How it stays cheap at ten frames a second:
// - rows are drawn by the page's frame pass, not on every event; an arrow arriving is drawn in
//   over the next few passes (its line grows from the sender to the receiver) instead of by a CSS
//   animation, which would cost a full frame of layout and paint at 60 Hz;
// - rows live in blocks of BLOCK rows, each block an SVG of its own (and a paint layer of its
//   own): a new row repaints its block, not the whole window;
// - the lifelines are one SVG behind the blocks that, like the scroll height, grows a chunk of
//   rows at a time: while rows arrive, nothing already drawn is laid out or painted again.
//   Below the live row there is blank space until the chunk is full: following the live end
//   scrolls to the live row, not to the bottom, and scrolling into the blank snaps back;
// - each block starts with an invisible rect as large as the block, so the block's paint keeps
//   its extent while rows come and go (Chrome rebuilds the page's compositing layers when a
//   paint chunk changes extent);
// - following the live end scrolls before the page's pass, never in it (`scrollToLive`):
//   setting scrollTop lays out everything written before it.
// Mermaid is kept for static diagrams and export (see static-diagrams.js).
/** @typedef {import("#js/history.js").EventHistory} EventHistory */
import { lanesFor, LANES, SequenceModel } from "#js/sequence/model.js";
import { formatOffset } from "#js/time.js";
import { setText } from "#js/dom.js";

// A row's height and the times' gutter: a laptop's (text of 10 to 10.5 px), and a narrow panel's (a phone, a
// tablet: every text 12 px, the smallest a phone's screen shows legibly, so rows a little taller). The CSS
// (site.css, `.seq.compact`) sets the text sizes these are measured for.
const WIDE = { rowH: 22, gutter: 58, base: 15, charW: 6.3, sansW: 6.1 };
const NARROW = { rowH: 26, gutter: 60, base: 19, charW: 7.25, sansW: 7 };
const OVERSCAN = 6; // rows drawn above the viewport (for scrolling back a little)
const BLOCK = 16; // rows per block SVG
const DRAW_MS = 400; // an arriving arrow is drawn in over this long
const FRESH_MS = 900; // and its time is marked as new for this long
const ARRIVING_MAX = 6; // a burst (catch-up, high speed) animates only its last rows
const CHUNK_ROWS = 100; // the scroll height grows by this many rows at a time
const SILENT_FROM = 3; // kubelets in a zone before a window without Lease renewals marks it silent

export class SequenceView {
  /**
   * @param {HTMLElement} root  element with .seq-head, .seq-scroll and .seq-live inside
   * @param {{d3: any, t: Function, history: EventHistory, onSelect: Function, request?: Function,
   *   compact?: boolean}} options
   *   `history` holds the events the rows are made from; `request` asks the page for a frame
   *   pass (which calls `render`); `compact`: the panel is narrow from the start (`setCompact`)
   */
  constructor(root, { d3, t, history, onSelect, request, compact = false }) {
    this.d3 = d3;
    this.t = t;
    this.onSelect = onSelect;
    this.request = request ?? (() => this.schedule());
    this.model = new SequenceModel(history);
    this.focus = null;
    this.follow = true;
    this.root = root;
    this.head = root.querySelector(".seq-head");
    this.scroller = root.querySelector(".seq-scroll");
    this.lifelineSvg = d3.select(this.scroller).append("svg").attr("class", "seq-lifelines")
      .attr("aria-hidden", "true");
    this.blocksLayer = d3.select(this.scroller).append("div").attr("class", "seq-blocks").attr("role", "group")
      .attr("aria-labelledby", "seq-title").node();
    /** @type {HTMLElement | null} */
    this.liveButton = root.querySelector(".seq-live");
    /** @type {HTMLElement} */
    this.zonesBox = root.parentElement?.querySelector(".seq-zones") ?? document.createElement("div");
    this.reducedMotion = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
    this.droppedSeen = 0;
    // A narrow panel (a phone, a tablet): see setCompact. Known from the start, the first drawing of the head
    // measures no name (on a phone that read laid the whole page out in the middle of its opening).
    this.compact = Boolean(compact);
    this.geo = this.compact ? NARROW : WIDE; // the geometry: row height, gutter, character widths
    this.volumes = false; // a run with StatefulSets and volumes: see setVolumes
    this.lanes = LANES;
    this.pending = false;
    this.dirty = true;
    this.height = 0;
    this.top = 0; // the scroll position, as last set or seen (never read back in a frame pass)
    this.drawn = new Map(); // seq -> {g, row, index, block}
    this.blocks = new Map(); // block number -> {svg, rows: Set(seq)}
    this.arriving = new Map(); // seq -> {g, row, arrivedAt, line, x1, x2, head, label, gutter}
    this.fresh = new Set(); // seqs of rows that arrived while following, not drawn yet
    this.arrivedAt = new Map(); // seq -> when its row was first drawn (for the last FRESH_MS)
    this.axis = null; // a time axis shared with another diagram (setAxis), else rows one after the other
    this.axisKey = null;
    this.axisSeen = -1;
    this.scroller.addEventListener("scroll", () => {
      const top = this.scroller.scrollTop;
      if (Math.abs(top - this.top) < 1) return; // the scroll the view made itself
      this.top = top;
      const atBottom = top + this.viewHeight >= this.height - this.geo.rowH * 2; // the live row, not the blank
      this.follow = atBottom;
      this.liveButton.hidden = atBottom;
      this.dirty = true;
      this.schedule(); // the user is scrolling: draw the rows coming into view at once
    }, { passive: true });
    const select = (target) => {
      const g = target.closest?.("g.row");
      const item = g && this.drawn.get(Number(g.dataset.seq));
      if (item) this.onSelect?.(item.row.event);
      return Boolean(item);
    };
    this.scroller.addEventListener("click", (e) => select(e.target));
    this.scroller.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
      if ((e.key === "Enter" || e.key === " ") && select(e.target)) e.preventDefault();
    });
    this.liveButton?.addEventListener("click", () => {
      this.follow = true;
      this.liveButton.hidden = true;
      this.dirty = true;
      this.scrollToLive();
      this.schedule();
    });
    new ResizeObserver(() => this.layout()).observe(this.scroller);
    this.layout();
  }

  /**
   * A narrow panel (a phone, a tablet) draws no lane for the other kubelets while their requests
   * are counted per zone instead (`setAggregate`): the focused node's lanes and the controllers
   * share the width, and the diagram fits down to 300 px instead of 480.
   */
  setCompact(on) {
    if (this.compact === on) return;
    this.compact = on;
    this.geo = on ? NARROW : WIDE;
    if (this.volumes) this.#relane();
    else this.layout();
  }

  /**
   * A run with StatefulSets and volumes: lanes for the StatefulSet controller, the attach/detach
   * controller and Pod GC (one grouped lane on a narrow panel), rows rebuilt once for them.
   */
  setVolumes(on) {
    if (this.volumes === on) return;
    this.volumes = on;
    this.#relane();
  }

  #relane() {
    this.model.lanes = lanesFor({ volumes: this.volumes, compact: this.compact });
    this.layout();
    if (this.focus !== null) this.setFocus(this.focus);
  }

  /** Lane x positions follow the panel width; recomputed on resize only. */
  layout() {
    const width = Math.max(this.scroller.clientWidth, this.compact ? 300 : 480);
    const lanes = this.model.lanes;
    this.lanes = this.compact && this.model.aggregate ? lanes.filter((lane) => lane.id !== "other-kubelets") : lanes;
    this.width = width;
    this.viewHeight = this.scroller.clientHeight;
    this.laneW = (width - this.geo.gutter) / this.lanes.length;
    this.x = new Map(this.lanes.map((lane, i) => [lane.id, this.geo.gutter + this.laneW * (i + 0.5)]));
    this.renderHead();
    this.lifelineSvg.attr("width", width);
    this.lifelineSvg.selectAll("line").data(this.lanes).join("line")
      .attr("class", (d) => `lifeline lane-${d.id}`)
      .attr("x1", (d) => this.x.get(d.id)).attr("x2", (d) => this.x.get(d.id))
      .attr("y1", 0).attr("y2", this.svgHeight ?? 0);
    this.#clear(); // positions depend on the width: redraw the window once
    this.height = -1; // and the height on the panel's
    this.dirty = true;
    this.schedule();
  }

  /**
   * Lane names in two staggered tiers (even lanes above, odd lanes below), each centred on its
   * lifeline and free to use two lanes' width, so long names ("node-2 kubelet syncNodeStatus")
   * are neither cut nor overlapping on a laptop. A narrow panel has three tiers, each name three
   * lanes wide.
   */
  renderHead() {
    const tiers = this.compact ? 3 : 2;
    this.root.classList.toggle("compact", this.compact);
    const labels = this.lanes.map((lane, i) => {
      const div = document.createElement("div");
      div.className = `lane-label lane-${lane.id} tier-${i % tiers}`;
      const x = this.x.get(lane.id);
      // Labels of one tier never overlap: each spans `tiers` lanes' width around its lifeline.
      const left = Math.max(0, x - (this.laneW * tiers) / 2 + 2);
      const right = Math.min(this.width, x + (this.laneW * tiers) / 2 - 2);
      div.style.left = `${left}px`;
      div.style.width = `${right - left}px`;
      div.style.setProperty("--tick", `${x - left}px`);
      const text = this.t(`lane.${lane.label ?? lane.id}`, { node: this.focus ?? "" });
      const span = document.createElement("span");
      span.textContent = text;
      div.title = text.replace(/\n/g, " ");
      div.append(span);
      return div;
    });
    this.head.replaceChildren(...labels);
    // A name that does not fit in its two lines takes its short form, if it has one (on resize
    // and refocus only: the one layout read of the head). A narrow panel takes it at once, without
    // a layout of the page to find out (a phone's opening runs this several times).
    this.lanes.forEach((lane, i) => {
      const span = /** @type {HTMLElement} */ (labels[i].firstChild);
      const short = this.t(`lane-short.${lane.label ?? lane.id}`, {}, "");
      if (short && (this.compact || span.scrollHeight > span.clientHeight + 1)) span.textContent = short;
    });
  }

  /**
   * Large clusters: other kubelets' requests are counted per zone (`renderZones`) instead of drawn
   * one arrow each; the rows are rebuilt when this changes.
   */
  setAggregate(on) {
    if (this.model.aggregate === on) return;
    this.model.aggregate = on;
    this.zonesBox.hidden = !on;
    if (this.compact) this.layout(); // the other kubelets' lane comes or goes
    this.setFocus(this.focus);
  }

  /** One line per zone: "zone-b: 1,667 kubelets · 0 Lease PUTs · ... in the last 10 s". Lines are
   *  kept and only their changed texts written (once per virtual second, ten times a second at 10x). */
  renderZones(summary) {
    while (this.zonesBox.children.length > summary.length) this.zonesBox.lastChild.remove();
    summary.forEach((z, i) => {
      let div = /** @type {HTMLElement} */ (this.zonesBox.children[i]);
      if (!div) {
        div = this.zonesBox.appendChild(document.createElement("div"));
        div.className = "seq-zone";
      }
      // Silent: no Lease renewal in the window from a zone of several kubelets. (One kubelet renews
      // every 10 s, with jitter: a window of 10 s may miss its renewal without anything wrong.)
      const silent = String(z.kubelets >= SILENT_FROM && z.leasePuts === 0);
      if (div.dataset.silent !== silent) div.dataset.silent = silent;
      setText(div, this.t("seq.zone-traffic", {
        zone: z.zone || this.t("cluster.no-zone"), kubelets: z.kubelets.toLocaleString("en"),
        leases: z.leasePuts.toLocaleString("en"), status: z.statusWrites.toLocaleString("en"),
        failed: z.failed.toLocaleString("en"),
      }));
    });
  }

  /** Rows for another node, rebuilt from the history. */
  setFocus(node) {
    this.focus = node;
    this.model.rebuild(node);
    this.droppedSeen = 0;
    this.renderHead();
    this.#clear();
    this.follow = true;
    this.liveButton.hidden = true;
    this.dirty = true;
    this.request();
  }

  /**
   * Rows placed on a time axis shared with another diagram (time-axis.js: the comparison page's two sides), the
   * same virtual second at the same height in both, instead of one after the other. `key`: this side's.
   */
  setAxis(axis, key) {
    this.axis = axis;
    this.axisKey = key;
    this.axisSeen = -1;
    this.#clear();
    this.dirty = true;
    this.request();
  }

  /** The height of row `i`, in rows. */
  #slot(i) {
    return this.axis ? this.axis.slot(this.axisKey, i) : i;
  }

  /** The height of every row, in rows. */
  #slots() {
    this.axis?.update();
    return this.axis ? this.axis.total : this.model.length;
  }

  /** Appends the rows of newly arrived events; they are drawn by the next frame pass. */
  append(events, { fresh = true } = {}) {
    const added = [];
    for (const e of events) if (this.model.push(e)) added.push(e.seq);
    if (!added.length) return;
    // Arrivals are animated one by one as they come; in a burst only the last few are, so a
    // catch-up after a reconnect does not light up the whole diagram.
    if (fresh && !this.reducedMotion) this.newRows = (this.newRows ?? []).concat(added).slice(-ARRIVING_MAX);
    this.dirty = true;
    this.request();
  }

  /** Draws at the next animation frame (scrolling by the user, resizes). */
  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.scrollToLive();
      this.render();
    });
  }

  /**
   * When following the live end, scrolls to the live row. Setting scrollTop first lays out
   * whatever was written before it, so the page calls this before its pass (FrameScheduler's
   * `prepare`, in the task that asks for the animation frame), when there is next to nothing to
   * lay out; the browser then also fires the scroll event in the frame that draws the pass
   * instead of in a frame of its own.
   */
  scrollToLive() {
    if (!this.follow) return;
    this.#sizeTo(this.#slots());
    this.#scrollTo(this.#liveTop());
  }

  /** The scroll position that shows the live row at the bottom of the view. */
  #liveTop() {
    return Math.max(0, this.height - this.viewHeight);
  }

  /** The scroll height for `rows` rows: the lifeline layer grows a chunk at a time. */
  #sizeTo(rows) {
    const height = Math.max(rows * this.geo.rowH + 8, this.viewHeight);
    if (height === this.height) return;
    this.height = height;
    const chunk = this.geo.rowH * CHUNK_ROWS;
    const svgHeight = Math.max(this.viewHeight, Math.ceil(height / chunk) * chunk);
    if (svgHeight !== this.svgHeight) {
      this.svgHeight = svgHeight;
      this.lifelineSvg.attr("height", svgHeight);
      this.lifelineSvg.selectAll("line").attr("y2", svgHeight);
    }
  }

  /**
   * Draws the rows in the window and the next step of the arriving ones. Writes only (when
   * following, the window is the live end's, where `scrollToLive` scrolls before the next
   * pass). Returns whether an arrow is still being drawn in or that scroll is still to come.
   */
  render() {
    const now = performance.now();
    if (this.newRows) {
      if (this.follow) for (const seq of this.newRows) this.fresh.add(seq);
      this.newRows = null;
    }
    for (const [seq, at] of this.arrivedAt) if (now - at >= FRESH_MS) this.arrivedAt.delete(seq);
    if (this.axis) { // the other side's rows may have moved this side's
      this.axis.update();
      if (this.axis.version !== this.axisSeen) {
        this.axisSeen = this.axis.version;
        this.dirty = true;
      }
    }
    if (this.dirty) {
      this.dirty = false;
      this.#window(now);
    }
    this.fresh.clear(); // an arrival not drawn in its pass is not animated later
    for (const [seq, item] of this.arriving) {
      if (!this.drawn.has(seq) || this.#arrive(item, now)) this.arriving.delete(seq);
    }
    return this.arriving.size > 0 || (this.follow && Math.abs(this.top - this.#liveTop()) >= 1);
  }

  #clear() {
    for (const block of this.blocks.values()) block.svg.remove();
    this.blocks.clear();
    this.drawn.clear();
    this.arriving.clear();
  }

  #window(now) {
    const model = this.model;
    this.#sizeTo(this.#slots());
    if (this.model.dropped !== this.droppedSeen) {
      // The oldest chunk left the scroll-back buffer: every row moves up (drawn again, once per
      // chunk), and the user's view stays where it was.
      const shift = (this.model.dropped - this.droppedSeen) * this.geo.rowH;
      this.droppedSeen = this.model.dropped;
      this.#clear();
      if (!this.follow) this.#scrollTo(Math.max(0, this.top - shift));
    }
    const top = this.follow ? this.#liveTop() : this.top;
    const rowH = this.geo.rowH;
    const firstSlot = Math.max(0, Math.floor(top / rowH) - OVERSCAN);
    const lastSlot = Math.ceil((top + this.viewHeight) / rowH) + 1;
    const [first, last] = this.axis ? this.axis.rowsIn(this.axisKey, firstSlot, lastSlot)
      : [firstSlot, Math.min(model.length, lastSlot)];
    // Rows that left the window (or moved on the time axis) go, with their block when it is empty.
    for (const [seq, item] of this.drawn) {
      if (item.index >= first && item.index < last && model.seqAt(item.index) === seq
        && item.slot === this.#slot(item.index)) continue;
      item.g.remove();
      this.drawn.delete(seq);
      const block = this.blocks.get(item.block);
      block.rows.delete(seq);
      if (!block.rows.size) {
        block.svg.remove();
        this.blocks.delete(item.block);
      }
    }
    for (let i = first; i < last; i++) {
      if (this.drawn.has(model.seqAt(i))) continue;
      const row = model.row(i);
      if (!row) continue;
      const slot = this.#slot(i);
      const b = Math.floor(slot / BLOCK);
      const block = this.#block(b);
      const g = this.d3.select(block.svg).append("g");
      this.drawRow(g, row, now, (slot - b * BLOCK) * rowH);
      block.rows.add(row.seq);
      this.drawn.set(row.seq, { g: g.node(), row, index: i, slot, block: b });
    }
  }

  /** The SVG of block `b` (rows b*BLOCK ... b*BLOCK+BLOCK-1), created on first use. */
  #block(b) {
    let block = this.blocks.get(b);
    if (!block) {
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.setAttribute("class", "seq-svg seq-block");
      svg.setAttribute("width", String(this.width));
      svg.setAttribute("height", String(BLOCK * this.geo.rowH));
      svg.style.top = `${b * BLOCK * this.geo.rowH}px`;
      const extent = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      extent.setAttribute("class", "block-extent");
      extent.setAttribute("width", String(this.width));
      extent.setAttribute("height", String(BLOCK * this.geo.rowH));
      svg.append(extent);
      block = { svg, rows: new Set() };
      this.blocks.set(b, block);
      this.blocksLayer.append(svg);
    }
    return block;
  }

  /** Scrolls (a write: the position is remembered, not read back). */
  #scrollTo(top) {
    if (Math.abs(this.top - top) < 1) return;
    this.top = top;
    this.scroller.scrollTop = top;
  }

  /** One row, `top` px down its block (d3 selection `g`). */
  drawRow(g, row, now = performance.now(), top = 0) {
    const classes = ["row", `row-${row.kind}`];
    if (row.failed) classes.push("failed");
    if (row.other) classes.push("other");
    if (row.read) classes.push("read");
    if (row.event?.component) classes.push(`c-${row.event.component}`);
    g.attr("class", classes.join(" ")).attr("data-seq", row.seq).attr("data-kind", row.kind)
      .attr("data-node", row.node ?? "").attr("data-label", row.label)
      // a row is a button to the Why? panel, by keyboard too (Enter or Space: see the constructor)
      .attr("tabindex", 0).attr("role", "button"); // named by its text: the time and the request or decision
    // Scrolling back to a row later does not replay its arrival.
    if (this.fresh.delete(row.seq)) this.arrivedAt.set(row.seq, now);
    const { rowH, gutter, base } = this.geo;
    const y = top + base; // the baseline of the row's time and decision; an arrow 4 px over it, its label 7 px
    const item = { row, arrivedAt: this.arrivedAt.get(row.seq) };
    g.append("rect").attr("class", "hit").attr("x", 0).attr("y", top).attr("width", this.width).attr("height", rowH);
    item.gutter = g.append("text").attr("class", "gutter").attr("x", 4).attr("y", y).text(formatOffset(row.t));
    if (row.kind === "note") {
      g.append("rect").attr("class", "note-box").attr("x", gutter + 4).attr("y", top + 2)
        .attr("width", this.width - gutter - 8).attr("height", rowH - 4).attr("rx", 4);
      const text = `⚡ ${row.label}`;
      g.append("text").attr("class", "note-text").attr("x", (gutter + this.width) / 2).attr("y", y)
        .attr("text-anchor", "middle").text(this.compact ? fit(text, this.width - gutter - 16, 7.6) : text);
      if (this.compact) g.append("title").text(text);
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
      const anchorLeft = x > (gutter + this.width) / 2;
      const room = anchorLeft ? x - gutter - 14 : this.width - x - 14;
      g.append("text").attr("class", "decision-text").attr("x", anchorLeft ? x - 10 : x + 10).attr("y", y)
        .attr("text-anchor", anchorLeft ? "end" : "start").text(fit(text, room, this.geo.sansW));
      g.append("title").text(text);
    } else if (row.kind === "watch") {
      const x1 = this.x.get(row.from);
      const xs = row.targets.map((lane) => this.x.get(lane));
      const lo = Math.min(x1, ...xs);
      const hi = Math.max(x1, ...xs);
      g.append("line").attr("class", "arrow watch").attr("x1", lo).attr("x2", hi).attr("y1", y - 4).attr("y2", y - 4);
      for (const x of xs) g.append("path").attr("class", "head watch").attr("d", arrowHead(x, y - 4, x > x1 ? 1 : -1));
      this.#label(g, `watch ${row.label}`, x1, Math.max(...xs), y - 7, "label watch");
    } else {
      const x1 = this.x.get(row.from) ?? gutter + 4; // the trainer's kubectl: from the left edge
      const x2 = this.x.get(row.to);
      const dir = x2 >= x1 ? 1 : -1;
      const end = row.kind === "lost" ? x1 + (x2 - x1) * 0.55 : x2 - dir * 2;
      item.line = g.append("line").attr("class", `arrow ${row.kind}`).attr("x1", x1).attr("x2", end)
        .attr("y1", y - 4).attr("y2", y - 4);
      item.x1 = x1;
      item.x2 = end;
      if (row.kind === "lost") {
        item.head = g.append("text").attr("class", "lost-x").attr("x", end).attr("y", y)
          .attr("text-anchor", "middle").text("✕");
      } else {
        item.head = g.append("path").attr("class", "head").attr("d", arrowHead(x2, y - 4, dir));
      }
      const label = row.code && row.code >= 400 ? `${row.label} → ${row.code}` : row.label;
      item.label = this.#label(g, label, x1, x2, y - 7, "label");
    }
    if (item.arrivedAt !== undefined && now - item.arrivedAt < FRESH_MS && !this.#arrive(item, now)) {
      this.arriving.set(row.seq, item);
    }
  }

  /**
   * An arrow's label (d3 selection): centred over its arrow, or, in a narrow panel, moved as little as needed
   * to keep it off the times' gutter and inside the panel, and shortened with an ellipsis when it is wider
   * than the panel (a title keeps the whole of it).
   */
  #label(g, label, x1, x2, y, cls) {
    let x = (x1 + x2) / 2;
    let text = label;
    if (this.compact) {
      const { gutter, charW } = this.geo;
      text = fit(label, this.width - gutter - 6, charW);
      const half = (units(text) * charW) / 2;
      x = Math.max(gutter + half, Math.min(this.width - 2 - half, x));
    }
    const node = g.append("text").attr("class", cls).attr("x", x).attr("y", y).attr("text-anchor", "middle").text(text);
    if (text !== label) g.append("title").text(label);
    return node;
  }

  /**
   * One step of an arriving row: the arrow's line grows towards its receiver (head and label
   * show when it gets there), and its time stays marked a moment. Returns true when done. Each
   * step writes an attribute of one element, never a class on the row (which would restyle it).
   */
  #arrive(item, now) {
    const age = now - item.arrivedAt;
    if (item.line) {
      const f = Math.min(1, Math.max(0.25, age / DRAW_MS));
      const x = f >= 1 ? item.x2 : item.x1 + (item.x2 - item.x1) * (1 - (1 - f) ** 2);
      if (item.shownX !== x) {
        item.shownX = x;
        item.line.attr("x2", x);
      }
      const visibility = f < 1 ? "hidden" : null;
      if (item.visibility !== visibility) {
        item.visibility = visibility;
        item.head.attr("visibility", visibility);
        item.label.attr("visibility", visibility);
      }
    }
    const fresh = age < FRESH_MS;
    if (item.fresh !== fresh) {
      item.fresh = fresh;
      item.gutter.classed("new", fresh);
    }
    return !fresh;
  }

  /** Rows currently drawn, for tests and the benchmark. */
  drawnCount() {
    return this.drawn.size;
  }
}

function arrowHead(x, y, dir) {
  return `M${x},${y} l${-7 * dir},-4 l0,8 z`;
}

/** Shortens a text to about `room` pixels (at ~`perChar` px a character, twice that for a
 *  Chinese one), with an ellipsis. */
function fit(text, room, perChar) {
  const max = Math.max(8, Math.floor(room / perChar));
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    used += text.charCodeAt(i) >= 0x2e80 ? 2 : 1;
    if (used > max) return `${text.slice(0, Math.max(1, i - 1))}…`;
  }
  return text;
}

/** A text's width in characters of the Latin alphabet (a Chinese one counts two). */
function units(text) {
  let n = 0;
  for (let i = 0; i < text.length; i++) n += text.charCodeAt(i) >= 0x2e80 ? 2 : 1;
  return n;
}
