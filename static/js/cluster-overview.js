// @ts-check
// The overview of a large cluster: one small square per node, grouped by zone, coloured by the
// node's kubectl STATUS, marked by its strongest taint and underlined by its Lease age against
// the grace period. Zone headers carry the node lifecycle controller's disruption state, the rate
// limiter and the Ready count. The cluster view puts the focused node's full card in `focusBox`,
// under the cells: a trainer sees an outage spread across 5,000 nodes at a glance, and one node
// in detail.
//
// Cost: the squares are painted on one canvas per zone (cell-painter.js); over it lies each
// cell's element, transparent and without children, whose data attributes and title say in
// words what is painted, for assistive technology, the pointer, the keyboard and the tests. A
// cell is painted and its attributes written only when what it shows changed. A node is looked
// at again when something touched it (a write of its Node or Lease) and, for the Lease ages
// (renewals may come without a write event), once per clock second at most: a scan of plain
// values, a few milliseconds at 5,000 nodes. The cells are sized so that the whole cluster fits
// the panel (down to CELL.min px; then it scrolls). So that no pass of the page is a long task,
// large amounts of work come a step per pass: the cells of a rebuild (BUILD_STEP), the touched
// nodes (UPDATE_STEP), the cells to redraw (DRAW_STEP: a zone outage changes 1,700 cells at
// once) and their labels (LABEL_STEP).
import { AGE_STEPS, colourProbes, paintCell, readColours, sizeCanvas } from "#js/cell-painter.js";
import { el, setText } from "#js/dom.js";
import { nameOf, naturalCompare, naturalSort, zoneOf } from "#js/k8s.js";
import { leaseAge, leaseStep, wholeLeaseAge } from "#js/lease-age.js";
import { cellLabel, cellState } from "#js/node-cell.js";
import { fillZoneHead } from "#js/zone-head.js";

const LEASE_NAMESPACE = "kube-node-lease";
// what a cell shows, in words
const ATTRIBUTES = [["status", "data-status"], ["taint", "data-taint"], ["age", "data-age"]];
const BUILD_STEP = 300;
const SCAN_MS = 400;
const UPDATE_STEP = 400;
const DRAW_STEP = 400;
const LABEL_STEP = 300;
const CELL = { min: 6, max: 32 }; // px
// Spaces (px) the fitting counts on, set on the element as CSS variables so that the style sheet
// and the arithmetic cannot disagree: under a zone's header, between zones. The headers' own
// heights (they wrap on a narrow panel, and their texts change) are measured by the observer.
const SPACE = { below: 4, zoneGap: 8 };
const HEAD_GUESS = 44; // a header not measured yet
const LEGEND_CELL = 13; // px
const gapOf = (size) => (size >= 12 ? 2 : 1);
// The legend's keys, drawn as the cells are. Their words are kubectl's (not translated).
const LEGEND = [
  { status: "Ready", text: "Ready" },
  { status: "NotReady", text: "NotReady" },
  { status: "Ready,SchedulingDisabled", text: "SchedulingDisabled" },
  { status: "Ready", taint: "NoSchedule", text: "NoSchedule" },
  { status: "Ready", taint: "NoExecute", text: "NoExecute" },
];

export class ClusterOverview {
  /**
   * @param {{t: (key: string, params?: object) => string, store: import("#js/store.js").ObjectStore,
   *   controllers: import("#js/controllers.js").ControllerState, clock: import("#js/time.js").VirtualClock}} page
   */
  constructor({ t, store, controllers, clock }) {
    this.t = t;
    this.store = store;
    this.controllers = controllers;
    this.clock = clock;
    this.el = el("div", "overview");
    this.pending = el("span", "ov-pending");
    this.zonesBox = el("div", "ov-zones");
    this.focusBox = el("div", "ov-focus");
    this.probes = colourProbes();
    const probes = el("div", "ov-colours");
    probes.append(...this.probes);
    this.colours = null; // the theme's, read when first painted (see cell-painter.js)
    this.el.append(this.#legend(), this.zonesBox, this.focusBox, probes);
    // node name -> {name, section, index, pos, node, status, ready, taint, renew, age, el, shown, ...}
    this.cells = new Map();
    this.sections = []; // zones in name order: {zone, el, head, grid, canvas, ctx, cells, ready}
    this.order = []; // every cell, zone by zone, in natural name order
    this.built = 0; // cells of `order` that have their element (see mountRest)
    this.box = { width: 0, height: 0 };
    this.heads = new WeakMap(); // zone header -> its height, from the observer
    this.size = 0;
    this.perRow = 1;
    this.focus = null;
    this.tabStop = null; // the one cell reached by Tab (arrows move it)
    this.unlabelled = new Set(); // drawn cells whose label is still to be written
    this.touched = new Set(); // nodes whose cells wait for their update (#updateStep)
    this.redraw = new Set(); // cells whose attributes wait to be written (#drawStep)
    this.countsVersion = 0; // bumps when a zone's Ready count moves
    this.template = el("div", "ov-cell");
    this.template.setAttribute("role", "button");
    this.template.tabIndex = -1;
    // Sizes come from the observer, after the browser's layout: the fitting never forces one.
    this.resizes = new ResizeObserver((entries) => {
      for (const entry of entries) {
        if (entry.target === this.zonesBox) {
          this.box = { width: entry.contentRect.width, height: entry.contentRect.height };
        } else {
          const head = /** @type {HTMLElement} */ (entry.target);
          this.heads.set(head, entry.borderBoxSize?.[0]?.blockSize ?? head.offsetHeight);
        }
      }
      this.#fit();
    });
    this.resizes.observe(this.zonesBox);
    this.el.style.setProperty("--ov-below", `${SPACE.below}px`);
    this.el.style.setProperty("--ov-zone-gap", `${SPACE.zoneGap}px`);
    this.zonesBox.addEventListener("keydown", (e) => this.#arrow(e));
    // A label's Lease age is as of the cell's last change: the cell pointed at or focused gets it
    // brought up to date before its tooltip or its name is read.
    for (const type of ["pointerover", "focusin"]) {
      this.zonesBox.addEventListener(type, (e) => {
        const cell = this.#cellOf(e.target);
        if (cell) this.#label(cell);
      });
    }
  }

  /**
   * Brings the cells up to date: all of them after a snapshot (`full`); else the `touched` ones
   * wait for mountRest, UPDATE_STEP a pass. The zones and their order are rebuilt only when the
   * node set changed. Returns true when it rebuilt them (their cells then come a step per pass).
   */
  render({ full, touched }) {
    const now = this.clock.now();
    const grace = this.controllers.gracePeriod;
    let rebuilt = false;
    for (const name of touched) if (name !== "") this.touched.add(name);
    if (full || this.#nodeSetChanged(touched)) {
      this.touched.clear();
      if (this.#sameNodes()) this.#updateAll(now, grace); // a resync: in one pass, as rare as snapshots
      else {
        this.#rebuild();
        rebuilt = true;
      }
      if (full) this.colours = null; // a theme change comes as `full`
      this.#fit(true);
    }
    this.#heads();
    const waiting = this.store.podCounts("").total;
    setHidden(this.pending, !waiting);
    if (waiting) setText(this.pending, this.t("overview.pending", { n: waiting }));
    return rebuilt;
  }

  /**
   * Every pass: the labels still to write (some of them). Then the Lease ages (and any node
   * changed without a touch): once per clock second, and at most every SCAN_MS (at 10x a second
   * of the clock is a pass; a cell's bar moves in thirds of the grace period, tens of seconds).
   */
  tick() {
    this.#writeLabels();
    if (this.#building) return;
    const now = this.clock.now();
    const grace = this.controllers.gracePeriod;
    const second = Math.floor(now);
    const wall = performance.now();
    if (grace === this.tickedGrace && (second === this.tickedSecond || wall - this.tickedAt < SCAN_MS)) return;
    this.tickedSecond = second;
    this.tickedGrace = grace;
    this.tickedAt = wall;
    this.#updateAll(now, grace);
    this.#heads();
  }

  /**
   * The rest of the work of a rebuild or a large change, a step per pass: the next BUILD_STEP
   * cells of a rebuild into their zones (true), else the touched nodes (UPDATE_STEP) and the
   * cells to redraw (DRAW_STEP); true when more wait. False: nothing was left.
   */
  mountRest() {
    if (!this.#building) {
      const more = this.#updateStep();
      return this.#drawStep() || more;
    }
    const end = Math.min(this.order.length, this.built + BUILD_STEP);
    const now = this.clock.now();
    const grace = this.controllers.gracePeriod;
    let grid = null;
    let batch = null;
    for (let i = this.built; i < end; i++) {
      const cell = this.order[i];
      if (cell.section.grid !== grid) {
        if (batch) grid.append(batch);
        grid = cell.section.grid;
        batch = document.createDocumentFragment();
      }
      this.#update(cell, now, grace, this.store.node(cell.name), this.store.lease(cell.name));
      batch.append(this.#element(cell));
    }
    if (batch) grid.append(batch);
    this.built = end;
    if (!this.#building) this.#heads(); // with the zones' counts now
    return true;
  }

  /** Cells of a rebuild are still to come (mountRest). */
  get #building() {
    return this.built < this.order.length;
  }

  setFocus(name) {
    this.cells.get(this.focus)?.el?.classList.remove("focused");
    this.focus = name;
    const cell = this.cells.get(name);
    if (!cell) return;
    cell.el?.classList.add("focused");
    this.#setTabStop(cell);
  }

  /** The focused node's card (an element of the cluster view), or none. */
  showCard(card) {
    if (this.focusBox.firstChild === card && this.focusBox.childNodes.length === (card ? 1 : 0)) return;
    if (card) this.focusBox.replaceChildren(card);
    else this.focusBox.replaceChildren();
  }

  /** Empties the overview (the cluster went back to 50 nodes or fewer). */
  clear() {
    this.touched.clear();
    this.redraw.clear();
    this.unlabelled.clear();
    for (const section of this.sections) this.resizes.unobserve(section.head);
    this.cells = new Map();
    this.sections = [];
    this.order = [];
    this.built = 0;
    this.tabStop = null;
    this.zonesBox.replaceChildren();
    this.focusBox.replaceChildren();
  }

  #legend() {
    const legend = el("div", "ov-legend");
    this.swatches = [];
    const key = (look, text, translated) => {
      const item = el("span", "ov-key");
      const swatch = el("canvas", "ov-swatch");
      swatch.setAttribute("aria-hidden", "true");
      this.swatches.push({ canvas: swatch, look });
      const words = el("span", "", text);
      words.translate = translated;
      item.append(swatch, words);
      legend.append(item);
    };
    for (const { text, ...look } of LEGEND) key(look, text, false);
    key({ status: "Ready", age: AGE_STEPS - 1 }, this.t("overview.legend-lease"), true);
    legend.append(this.pending);
    setHidden(this.pending, true);
    return legend;
  }

  /** Whether the nodes just touched (or the count) say that nodes came, went or changed zone. */
  #nodeSetChanged(touched) {
    if (this.store.count("nodes") !== this.cells.size) return true;
    for (const name of touched) {
      if (name === "") continue;
      const node = this.store.node(name);
      const cell = this.cells.get(name);
      if (!node && !cell) this.touched.delete(name); // a pod's node that is not (or no longer) there
      else if (!node || !cell || zoneOf(node) !== cell.section.zone) return true;
    }
    return false;
  }

  /** Works out the cells of up to UPDATE_STEP touched nodes; true when more are waiting. */
  #updateStep() {
    if (!this.touched.size) return false;
    const now = this.clock.now();
    const grace = this.controllers.gracePeriod;
    let budget = UPDATE_STEP;
    for (const name of this.touched) {
      if (budget-- <= 0) break;
      this.touched.delete(name);
      const cell = this.cells.get(name);
      if (cell) this.#update(cell, now, grace, this.store.node(name), this.store.lease(name));
    }
    this.#heads();
    return this.touched.size > 0;
  }

  /** Writes the attributes of up to DRAW_STEP changed cells; true when more are waiting. */
  #drawStep() {
    let budget = DRAW_STEP;
    for (const cell of this.redraw) {
      if (budget-- <= 0) return true;
      this.redraw.delete(cell);
      this.#draw(cell);
    }
    return false;
  }

  /**
   * Updates every cell, from the store's lists rather than a look-up per node: 10,000 look-ups
   * by name at 5,000 nodes each build a key string, a few milliseconds and as much garbage.
   */
  #updateAll(now, grace) {
    for (const cell of this.order) cell.nextNode = cell.nextLease = null;
    for (const node of this.store.list("nodes")) {
      const cell = this.cells.get(nameOf(node));
      if (cell) cell.nextNode = node;
    }
    for (const lease of this.store.list("leases")) {
      const cell = lease.metadata?.namespace === LEASE_NAMESPACE ? this.cells.get(nameOf(lease)) : null;
      if (cell) cell.nextLease = lease;
    }
    for (const cell of this.order) this.#update(cell, now, grace, cell.nextNode, cell.nextLease);
  }

  /** The store's nodes are exactly the cells, each in its zone (no new sort needed). */
  #sameNodes() {
    if (!this.order.length || this.store.count("nodes") !== this.cells.size) return false;
    const zones = new Set(this.sections.map((s) => s.zone));
    for (const zone of Object.keys(this.controllers.zones)) if (!zones.has(zone)) return false;
    for (const node of this.store.list("nodes")) {
      if (this.cells.get(nameOf(node))?.section.zone !== zoneOf(node)) return false;
    }
    return true;
  }

  /**
   * New zones and cells, in name order. What each cell shows is worked out with its element, in
   * mountRest: the cells' states too would make this pass a long one at 5,000 nodes.
   */
  #rebuild() {
    const byZone = new Map();
    for (const node of this.store.list("nodes")) {
      const zone = zoneOf(node);
      if (!byZone.has(zone)) byZone.set(zone, []);
      byZone.get(zone).push(nameOf(node));
    }
    for (const zone of Object.keys(this.controllers.zones)) if (!byZone.has(zone)) byZone.set(zone, []);
    for (const section of this.sections) this.resizes.unobserve(section.head);
    this.cells = new Map();
    this.order = [];
    this.redraw.clear();
    this.unlabelled.clear();
    this.sections = [...byZone.keys()].sort(naturalCompare).map((zone) => {
      const section = { zone, el: el("section", "ov-zone"), head: el("header", "zone-head"),
        grid: el("div", "ov-cells"), canvas: el("canvas", "ov-canvas"), ctx: null, cells: [], ready: 0 };
      section.el.dataset.zone = zone;
      section.canvas.setAttribute("aria-hidden", "true"); // the cells over it are what is read
      section.grid.append(section.canvas);
      section.grid.setAttribute("role", "group");
      section.grid.setAttribute("aria-label",
        this.t("overview.zone-cells", { zone: zone || this.t("cluster.no-zone") }));
      section.el.append(section.head, section.grid);
      this.resizes.observe(section.head);
      for (const name of naturalSort(byZone.get(zone))) {
        const cell = { name, section, index: this.order.length, pos: section.cells.length, ready: false,
          renewTime: undefined, nextNode: null, nextLease: null, el: null, shown: {} };
        section.cells.push(cell);
        this.order.push(cell);
        this.cells.set(name, cell);
      }
      return section;
    });
    this.built = 0;
    this.countsVersion++;
    this.headsAt = null;
    this.tabStop = this.cells.get(this.focus) ?? this.order[0] ?? null;
    this.zonesBox.replaceChildren(...this.sections.map((s) => s.el));
  }

  /** Takes the cell's node and Lease as they are now; what changed waits for #drawStep. */
  #update(cell, now, grace, node, lease) {
    if (node !== cell.node) {
      cell.node = node;
      const state = cellState(node);
      if (state.ready !== cell.ready) {
        cell.section.ready += state.ready ? 1 : -1;
        cell.ready = state.ready;
        this.countsVersion++;
      }
      cell.status = state.status;
      cell.taint = state.taint;
    }
    const renewTime = lease?.spec?.renewTime ?? null;
    if (renewTime !== cell.renewTime) {
      cell.renewTime = renewTime;
      cell.renew = renewTime ? this.clock.secondsOf(renewTime) : null;
    }
    cell.age = cell.renew === null ? "" : leaseStep(leaseAge(now, cell.renew), grace, AGE_STEPS);
    if (cell.el && !this.#drawn(cell)) this.redraw.add(cell);
  }

  #element(cell) {
    const e = this.template.cloneNode(false);
    e.setAttribute("data-node", cell.name);
    if (cell === this.tabStop) e.tabIndex = 0;
    if (cell.name === this.focus) e.classList.add("focused");
    cell.el = e;
    this.#draw(cell);
    return e;
  }

  /**
   * Paints the cell and writes its attributes that changed. Its label follows (#writeLabels) when
   * its STATUS or taints changed, or when it is new: the Lease age in a label is as of then, and
   * brought up to date when the cell is pointed at or focused (a zone outage moves 1,700 Lease
   * bars three times each, and a label written for each step cost more than all the rest).
   */
  #draw(cell) {
    if (!cell.el || this.#drawn(cell)) return;
    if (cell.shown.status !== cell.status || cell.shown.taint !== cell.taint) this.unlabelled.add(cell);
    for (const [key, attribute] of ATTRIBUTES) {
      if (cell.shown[key] === cell[key]) continue;
      cell.shown[key] = cell[key];
      cell.el.setAttribute(attribute, cell[key]);
    }
    this.#paint(cell);
  }

  /** The cell on its zone's canvas, where its element lies in the grid (column, row). */
  #paint(cell) {
    const { ctx } = cell.section;
    if (!ctx) return; // the canvas is not sized yet: #paintAll will paint it
    const pitch = this.size + gapOf(this.size);
    const x = (cell.pos % this.perRow) * pitch;
    const y = Math.floor(cell.pos / this.perRow) * pitch;
    ctx.clearRect(x, y, this.size, this.size);
    paintCell(ctx, x, y, this.size, cell, this.colours);
  }

  /** Every canvas sized for its zone's grid, and every cell in (and the legend) painted. */
  #paintAll() {
    this.colours ??= readColours(this.probes);
    for (const { canvas, look } of this.swatches) {
      paintCell(sizeCanvas(canvas, LEGEND_CELL, LEGEND_CELL), 0, 0, LEGEND_CELL, look, this.colours);
    }
    const gap = gapOf(this.size);
    for (const section of this.sections) {
      const n = section.cells.length;
      const columns = Math.min(n, this.perRow);
      const rows = Math.ceil(n / this.perRow);
      section.ctx = sizeCanvas(section.canvas, Math.max(0, columns * (this.size + gap) - gap),
        Math.max(0, rows * (this.size + gap) - gap));
      for (const cell of section.cells) if (cell.el) this.#paint(cell);
    }
  }

  /** Whether the cell's element shows what the cell knows. */
  #drawn(cell) {
    const shown = cell.shown;
    return shown.status === cell.status && shown.taint === cell.taint && shown.age === cell.age;
  }

  /**
   * Labels of redrawn cells, at most LABEL_STEP a pass: a zone outage redraws 1,700 cells within
   * a few passes, and their words can follow a few passes after their colours (a cell pointed at
   * or focused gets its label at once).
   */
  #writeLabels() {
    let budget = LABEL_STEP;
    for (const cell of this.unlabelled) {
      if (budget-- <= 0) break;
      this.#label(cell);
    }
  }

  #label(cell) {
    this.unlabelled.delete(cell);
    if (!cell.el || !cell.node) return;
    const now = this.clock.now();
    const grace = this.controllers.gracePeriod;
    const lease = cell.renew === null ? this.t("cluster.no-lease")
      : this.t("cluster.lease-age", { age: wholeLeaseAge(now, cell.renew), grace });
    const label = cellLabel(this.t, cell.name, cell.node, lease);
    if (cell.shown.label === label) return;
    cell.shown.label = label;
    cell.el.title = label;
  }

  /** Zone headers, when a zone's state, limiter or Ready count moved. */
  #heads() {
    const building = this.#building; // the counts once every cell is in
    const at = `${this.controllers.zonesVersion}:${building || this.countsVersion}`;
    if (at === this.headsAt) return;
    this.headsAt = at;
    for (const section of this.sections) {
      fillZoneHead(section.head, this.t, {
        zone: section.zone, z: this.controllers.zones[section.zone], ready: section.ready,
        total: building ? 0 : section.cells.length, layout: "overview",
      });
    }
  }

  /**
   * The largest cell size (CELL.min .. CELL.max) at which every zone fits the box's height, for
   * its width: one look at the whole cluster. Runs when the box or a header is resized (a theme,
   * a zone state's longer name) and after a rebuild (`repaint`: the canvases then too).
   */
  #fit(repaint = false) {
    const { width, height } = this.box;
    if (!width) return;
    const zones = this.sections.map((section) => ({
      n: section.cells.length, head: this.heads.get(section.head) ?? HEAD_GUESS,
    }));
    const perRow = (size) => Math.max(1, Math.floor((width + gapOf(size)) / (size + gapOf(size))));
    const needed = (size) => zones.reduce((h, { n, head }) => h + head + SPACE.below + SPACE.zoneGap
      + Math.max(0, Math.ceil(n / perRow(size)) * (size + gapOf(size)) - gapOf(size)), 0);
    let size = CELL.max;
    while (size > CELL.min && needed(size) > height) size--;
    if (size !== this.size || perRow(size) !== this.perRow) {
      this.size = size;
      this.perRow = perRow(size);
      this.el.style.setProperty("--cell", `${size}px`);
      this.el.style.setProperty("--cell-gap", `${gapOf(size)}px`);
      this.el.style.setProperty("--per-row", String(this.perRow));
    } else if (!repaint) {
      return;
    }
    this.#paintAll();
  }

  #cellOf(target) {
    const e = target.closest?.(".ov-cell[data-node]");
    return e ? this.cells.get(e.dataset.node) ?? null : null;
  }

  #setTabStop(cell) {
    if (this.tabStop?.el && this.tabStop !== cell) this.tabStop.el.tabIndex = -1;
    this.tabStop = cell;
    if (cell.el) cell.el.tabIndex = 0;
  }

  /** Arrow keys, Home and End move between cells (Enter or Space then focuses the node). */
  #arrow(e) {
    const cell = this.#cellOf(e.target);
    const next = cell && this.#neighbour(cell, e.key);
    if (next === undefined) return;
    e.preventDefault();
    if (!next?.el) return;
    this.#setTabStop(next);
    next.el.focus();
  }

  /** The cell an arrow key leads to from `cell` (null: none that way); undefined for other keys. */
  #neighbour(cell, key) {
    const { section, pos } = cell;
    const per = this.perRow;
    const zones = this.sections.filter((s) => s.cells.length);
    const z = zones.indexOf(section);
    const lastRow = (n) => Math.floor((n - 1) / per);
    switch (key) {
      case "ArrowRight": return this.order[cell.index + 1] ?? null;
      case "ArrowLeft": return this.order[cell.index - 1] ?? null;
      case "Home": return this.order[0] ?? null;
      case "End": return this.order.at(-1) ?? null;
      case "ArrowDown": {
        if (pos + per < section.cells.length) return section.cells[pos + per];
        if (Math.floor(pos / per) < lastRow(section.cells.length)) return section.cells.at(-1);
        const below = zones[z + 1];
        return below ? below.cells[Math.min(pos % per, below.cells.length - 1)] : null;
      }
      case "ArrowUp": {
        if (pos >= per) return section.cells[pos - per];
        const above = zones[z - 1];
        if (!above) return null;
        return above.cells[Math.min(lastRow(above.cells.length) * per + (pos % per), above.cells.length - 1)];
      }
      default: return undefined;
    }
  }
}

function setHidden(node, hidden) {
  if (node.hidden !== hidden) node.hidden = hidden;
}
