// @ts-check
// The cluster view: zones, their nodes (kubectl STATUS, Lease age against the grace period, last
// status post, conditions, taint chips) and each node's pods (Ready, Terminating, eviction
// countdowns).
//
// Up to COMPACT_FROM nodes every node is a full card, in the page's flow. From there on the view
// is a virtual list: each node is a one-line row (name, STATUS, Lease bar, one square per pod; a
// second line for chips when it has any), only the focused node keeps a full card, and only the
// rows in (or near) the panel's viewport exist in the DOM. Row heights are known from the data,
// so positions are computed, never measured. Above OVERVIEW_ABOVE nodes (a large cluster, up to
// 5,000) it is the overview (cluster-overview.js): one small cell per node, and under it the
// focused node's full card, the only node whose pods it reads.
//
// Cost per frame: a card is rebuilt only when its objects changed (a signature per card); the
// bars and texts that move with time are written only when what they show changes, and only for
// cards on screen: a card scrolled away costs nothing until it comes back.
import { ClusterOverview } from "#js/cluster-overview.js";
import { barSize, el, setText as writeText } from "#js/dom.js";
import {
  condition, isTerminating, nameOf, naturalCompare, nodeStatus, podReady, readyOf, taintString, taintsOf, zoneOf,
} from "#js/k8s.js";
import { leaseAge, leaseLevel, wholeLeaseAge } from "#js/lease-age.js";
import { countdownAt, formatCountdown } from "#js/time.js";
import { fillZoneHead } from "#js/zone-head.js";
import { forceDetachOf, nodeVolumes, podWait, waitingReason } from "#js/volumes.js";

const PRESSURE = ["MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"];
export const COMPACT_FROM = 25;
export const OVERVIEW_ABOVE = 50;
// A full card's bars move by about a pixel at a time; a row's Lease bar moves once a second,
// with the age printed in it (a step of 2 % of the grace period, 2-3 px at its width).
const CARD_STEPS = 300;
// Heights (px) of the virtual list's items, per theme: zone header, row, row with chips.
const SIZES = {
  default: { zone: 44, row: 24, rowExtra: 46, gap: 2, zoneGap: 10, card: 220 },
  projector: { zone: 50, row: 28, rowExtra: 54, gap: 2, zoneGap: 10, card: 260 },
};
const OVERSCAN = 120; // px of rows kept mounted above and below the viewport
// Rows put into the list by a rebuild of the whole view (a snapshot: ~35 rows, ~500 elements on a
// 1080-px page), and by each mountRest after it, one per frame pass, until all are in: so no
// pass, with its style, layout and paint, makes a long task (> 50 ms).
const MOUNT_STEP = 12;
const FIGURE_SPACE = "\u2007"; // as wide as a digit

const podKey = (pod) => `${pod.metadata?.namespace ?? "default"}/${nameOf(pod)}`;

function podState(pod) {
  if (isTerminating(pod)) return "Terminating";
  if (pod.status?.phase !== "Running") return pod.status?.phase ?? "Pending";
  return podReady(pod) === "True" ? "Ready" : "NotReady";
}

/** What a pod's state line says: kubectl's waiting reason (ContainerCreating) for a pending pod on a node. */
function podStateText(pod, state, t) {
  const waiting = state === "Pending" && pod.spec?.nodeName ? waitingReason(pod) : null;
  return waiting ? t(`pod-state.${waiting}`, {}, waiting) : t(`pod-state.${state}`);
}

/** The sentence of volumes.js podWait: why the pod is stuck. */
function waitText(wait, t) {
  switch (wait.kind) {
    case "unconfirmed":
      return t(wait.statefulSet ? "pod-why.unconfirmed-sts" : "pod-why.unconfirmed", { node: wait.node });
    case "volume-elsewhere":
      return t("pod-why.volume-elsewhere", { claim: wait.claim, node: wait.nodes.join(", ") });
    default:
      return t(`pod-why.${wait.kind}`, { claim: wait.claim ?? "" });
  }
}

export class ClusterView {
  /** `request`: asks the page for a frame pass (the view draws only in those). */
  constructor(root, { t, store, controllers, clock, onFocus, onSelectPod, request }) {
    this.root = root;
    this.request = request;
    this.t = t;
    this.store = store;
    this.controllers = controllers;
    this.clock = clock;
    this.onFocus = onFocus;
    this.onSelectPod = onSelectPod;
    this.focus = null;
    this.selectedPod = null;
    this.compact = false;
    this.overview = null; // the ClusterOverview, made when a run first has more than OVERVIEW_ABOVE nodes
    this.overviewOn = false; // the view is the overview now
    this.cards = new Map(); // node name -> card: {name, node, pods, signature, kind, el?, ...}
    this.zones = new Map(); // zone -> {el, head, list, nodes}
    this.pending = null;
    this.pendingSignature = null;
    this.dirty = new Set(); // nodes whose card may need rebuilding
    this.full = true; // the next render rebuilds the structure (snapshot, node set, focus)
    // Virtual list (compact mode).
    this.vlist = el("div", "vlist");
    this.items = []; // {kind: "zone"|"node", key, zone?, name?, y, h}
    this.mounted = new Map(); // item key -> element in the list
    this.scrollTop = 0;
    this.viewHeight = 0;
    this.layoutDirty = false;
    this.mountPending = false; // rows near the viewport not in the list yet (see MOUNT_STEP)
    // A click on a node's card focuses the node; on one of its pods, the pod too (the pod's flows
    // are about that node, so its lanes and kubectl commands should be the node's).
    root.addEventListener("click", (e) => {
      const card = e.target.closest("[data-node]");
      if (card) this.onFocus?.(card.dataset.node);
      const podEl = e.target.closest("[data-pod]");
      if (podEl) this.onSelectPod?.(podEl.dataset.pod);
    });
    root.addEventListener("keydown", (e) => {
      const card = e.target.closest("[data-node]");
      if (card && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        this.onFocus?.(card.dataset.node);
      }
    });
    // Full cards scrolled out of the panel are not updated; one coming back (or about to: the
    // margin) gets its bars and texts written at once. (Rows of the virtual list exist only
    // while on screen.)
    this.observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const card = this.cards.get(/** @type {HTMLElement} */ (entry.target).dataset.node);
        if (!card || card.el !== entry.target) continue;
        card.visible = entry.isIntersecting;
        if (card.visible) this.#tickCard(card, this.clock.now(), this.controllers.gracePeriod);
      }
    }, { root, rootMargin: "40px 0px" });
    root.addEventListener("scroll", () => {
      this.scrollTop = root.scrollTop;
      if (!this.compact || this.scrollPending) return;
      this.scrollPending = true;
      requestAnimationFrame(() => {
        this.scrollPending = false;
        this.#mount();
      });
    }, { passive: true });
    new ResizeObserver(() => {
      this.viewHeight = root.clientHeight;
      if (this.compact) this.#mount();
    }).observe(root);
    // The focused card's height is the only one the list cannot know in advance.
    this.cardObserver = new ResizeObserver((entries) => {
      for (const entry of entries) {
        const card = /** @type {HTMLElement} */ (entry.target);
        const h = Math.ceil(entry.borderBoxSize?.[0]?.blockSize ?? card.offsetHeight);
        if (h && h !== this.cardHeight) {
          this.cardHeight = h;
          this.#layoutItems();
        }
      }
    });
    // The projector theme has taller rows: rebuilt in the next frame pass, its rows mounted a
    // step per pass as after a snapshot (the page asks for those passes even while paused).
    new MutationObserver(() => {
      this.full = true;
      this.request();
    }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  }

  get sizes() {
    return SIZES[document.documentElement.dataset.theme === "projector" ? "projector" : "default"];
  }

  setFocus(node) {
    const before = this.focus;
    this.focus = node;
    this.overview?.setFocus(node);
    if (this.compact) {
      // The old focus becomes a row again, the new one a full card.
      for (const name of [before, node]) if (name) this.dirty.add(name);
    }
    for (const [name, card] of this.cards) card.el?.classList.toggle("focused", name === node);
  }

  setSelectedPod(key) {
    this.selectedPod = key;
    for (const li of this.root.querySelectorAll("[data-pod]")) li.classList.toggle("selected", li.dataset.pod === key);
  }

  /** Marks a node's card as possibly changed ("" for pods waiting for a node). */
  touch(nodeName) {
    this.dirty.add(nodeName ?? "");
  }

  invalidate() {
    this.full = true;
  }

  /** Marks every node's card as possibly changed (a volume moved: a pod elsewhere may wait on it). */
  touchAll() {
    for (const name of this.cards.keys()) this.dirty.add(name);
  }

  /** True when the next render rebuilds the whole view (the page calls render then). */
  get needsRebuild() {
    return this.full;
  }

  /**
   * Rebuilds what changed. Per frame only the touched cards are looked at; the whole structure
   * is rebuilt only when the node set or the layout changed. Returns true when it was.
   */
  render() {
    const nodeCount = this.store.count("nodes");
    const overview = nodeCount > OVERVIEW_ABOVE;
    if (overview !== this.overviewOn) this.#switchToOverview(overview);
    if (overview) return this.#renderOverview();
    if (!this.full && nodeCount === this.cards.size && this.compact === nodeCount >= COMPACT_FROM) {
      for (const name of this.dirty) {
        if (name === "") continue;
        const node = this.store.node(name);
        if (!node || !this.cards.has(name)) {
          this.full = true;
          break;
        }
        this.#card(node, this.store.podsOn(name));
      }
      if (!this.full) {
        if (this.dirty.has("")) this.#pendingSection();
        // Zone headers count Ready nodes and show the controller's zone state: looked at again
        // only when a node or a zone changed (Lease renewals, most of the writes, change neither).
        const zonesAt = `${this.store.nodesVersion}:${this.controllers.zonesVersion}`;
        if (zonesAt !== this.zonesAt) {
          this.zonesAt = zonesAt;
          for (const [zone, section] of this.zones) this.#zoneHead(section, zone);
        }
        const touched = this.dirty;
        this.dirty = new Set();
        if (this.layoutDirty) this.#layoutItems();
        this.tick(touched);
        return false;
      }
    }
    this.full = false;
    this.dirty.clear();
    this.#renderAll();
    return true;
  }

  /** Switching modes: the view starts empty. */
  #clear() {
    for (const card of this.cards.values()) this.#unmount(card);
    this.cards.clear();
    for (const section of this.zones.values()) section.el.remove();
    this.zones.clear();
    this.mounted.clear();
    this.vlist.replaceChildren();
  }

  /** Into the overview (a large cluster) or out of it, back to cards or rows. */
  #switchToOverview(on) {
    this.#clear();
    this.overviewOn = on;
    this.full = true;
    this.compact = false;
    this.root.classList.remove("compact");
    this.root.classList.toggle("overview-mode", on);
    if (on) {
      this.overview ??= new ClusterOverview({
        t: this.t, store: this.store, controllers: this.controllers, clock: this.clock,
      });
      this.overview.setFocus(this.focus);
      this.root.replaceChildren(this.overview.el);
    } else {
      this.overview.clear();
      this.overview.el.remove();
    }
  }

  /** The overview's pass: its cells, then the focused node's card under them. */
  #renderOverview() {
    const full = this.full;
    this.full = false;
    const touched = this.dirty;
    this.dirty = new Set();
    const rebuilt = this.overview.render({ full, touched });
    // The focused card's signature tells whether it changed (its Node may also be replaced by the
    // node's details, which arrive without an event).
    const node = this.focus ? this.store.node(this.focus) : null;
    for (const [name, card] of this.cards) {
      if (name === this.focus && node) continue;
      this.#unmount(card);
      this.cards.delete(name);
    }
    this.overview.showCard(node ? this.#card(node, this.store.podsOn(this.focus)).el : null);
    this.tick(touched);
    return rebuilt;
  }

  #renderAll() {
    const nodes = this.store.list("nodes").sort((a, b) => naturalCompare(nameOf(a), nameOf(b)));
    const compact = nodes.length >= COMPACT_FROM;
    if (compact !== this.compact) this.#clear();
    this.compact = compact;
    this.root.classList.toggle("compact", compact);
    const byZone = new Map();
    for (const n of nodes) {
      const z = zoneOf(n);
      if (!byZone.has(z)) byZone.set(z, []);
      byZone.get(z).push(n);
    }
    for (const zone of Object.keys(this.controllers.zones)) if (!byZone.has(zone)) byZone.set(zone, []);
    const zoneNames = [...byZone.keys()].sort(naturalCompare);
    const seenNodes = new Set();
    const order = [];
    const items = [];
    for (const zone of zoneNames) {
      const section = this.#zoneSection(zone);
      section.nodes = byZone.get(zone).map(nameOf);
      this.#zoneHead(section, zone);
      const children = [];
      items.push({ kind: "zone", key: `zone:${zone}`, zone });
      for (const node of byZone.get(zone)) {
        const name = nameOf(node);
        seenNodes.add(name);
        const card = this.#card(node, this.store.podsOn(name));
        if (compact) items.push({ kind: "node", key: `node:${name}`, name });
        else children.push(card.el);
      }
      if (compact) section.el.remove();
      else {
        order.push(section.el);
        syncChildren(section.list, children);
      }
    }
    for (const [name, card] of this.cards) {
      if (seenNodes.has(name)) continue;
      this.#unmount(card);
      this.cards.delete(name);
    }
    for (const [zone, section] of this.zones) if (!byZone.has(zone)) { section.el.remove(); this.zones.delete(zone); }
    if (compact) {
      this.items = items;
      order.push(this.vlist);
      this.#layoutItems(MOUNT_STEP);
    }
    order.push(this.#pendingSection());
    syncChildren(this.root, order);
    this.tick();
  }

  /**
   * Positions of the virtual list's items (from the data: rows have one of two heights).
   * `budget`: how many items may be put into the list now (see #mount).
   */
  #layoutItems(budget) {
    this.layoutDirty = false;
    if (!this.compact) return;
    const s = this.sizes;
    let y = 0;
    let first = true;
    for (const item of this.items) {
      if (item.kind === "zone") {
        if (!first) y += s.zoneGap;
        first = false;
        item.y = y;
        item.h = s.zone;
      } else {
        const card = this.cards.get(item.name);
        item.y = y;
        item.h = card.kind === "card" ? (this.cardHeight ?? s.card) : card.extra ? s.rowExtra : s.row;
        item.h += s.gap;
      }
      y += item.h;
    }
    this.vlist.style.height = `${y}px`;
    for (const item of this.items) {
      const node = this.mounted.get(item.key);
      if (node) this.#place(node, item);
    }
    this.#mount(budget);
  }

  /** Puts more of the rows a rebuild left out (MOUNT_STEP) into the list; true if there were any. */
  mountRest() {
    if (this.overviewOn) return this.overview.mountRest();
    if (!this.mountPending) return false;
    this.#mount(MOUNT_STEP);
    return true;
  }

  /**
   * Puts the items near the viewport into the list (at most `budget` new ones, top first: the
   * rest wait for mountRest), and takes the others out. While rows wait for mountRest, none are
   * added by the observers' calls either (the focused card's first size comes in the rebuild's
   * task and would add them all there).
   */
  #mount(budget = this.mountPending ? 0 : Infinity) {
    this.mountPending = false;
    if (!this.compact) return;
    const top = this.scrollTop - OVERSCAN;
    const bottom = this.scrollTop + (this.viewHeight || this.root.clientHeight) + OVERSCAN;
    const wanted = new Set();
    for (const item of this.items) {
      if (item.y + item.h < top || item.y > bottom) continue;
      if (!this.mounted.has(item.key) && budget-- <= 0) {
        this.mountPending = true;
        continue;
      }
      wanted.add(item.key);
      if (this.mounted.has(item.key)) continue;
      let node;
      if (item.kind === "zone") {
        node = this.zones.get(item.zone).head;
      } else {
        const card = this.cards.get(item.name);
        this.#ensureElement(card);
        card.visible = true;
        node = card.el;
        this.#tickCard(card, this.clock.now(), this.controllers.gracePeriod);
      }
      this.#place(node, item);
      this.mounted.set(item.key, node);
      this.vlist.append(node);
    }
    for (const [key, node] of this.mounted) {
      if (wanted.has(key)) continue;
      this.mounted.delete(key);
      node.remove();
      if (key.startsWith("node:")) {
        const card = this.cards.get(key.slice(5));
        if (card) {
          card.visible = false;
          if (card.kind !== "card") release(card); // rebuilt when it comes back
        }
      }
    }
  }

  /** Puts a list item where the layout says (a full card keeps its own height). */
  #place(node, item) {
    if (node.__y !== item.y) {
      node.__y = item.y;
      node.style.top = `${item.y}px`;
    }
    const card = item.kind === "node" ? this.cards.get(item.name) : null;
    const h = card?.kind === "card" ? "" : `${item.h - (item.kind === "zone" ? 6 : this.sizes.gap)}px`;
    if (node.style.height !== h) node.style.height = h;
  }

  #zoneSection(zone) {
    if (!this.zones.has(zone)) {
      const sectionEl = el("section", "zone");
      sectionEl.dataset.zone = zone;
      const head = el("header", "zone-head");
      head.dataset.zone = zone;
      const list = el("div", "zone-nodes");
      sectionEl.append(head, list);
      this.zones.set(zone, { el: sectionEl, head, list, nodes: [] });
    }
    const section = this.zones.get(zone);
    // In the virtual list the header is an item of its own; in the flow it heads its section.
    if (!this.compact && section.head.parentNode !== section.el) {
      section.head.style.top = "";
      section.head.style.height = "";
      section.head.__y = undefined;
      section.el.prepend(section.head);
    }
    return section;
  }

  #zoneHead(section, zone) {
    let ready = 0;
    for (const name of section.nodes) if (readyOf(this.store.node(name)) === "True") ready++;
    // In the virtual list: two fixed lines (its height is known); the queue may be cut short.
    fillZoneHead(section.head, this.t, {
      zone, z: this.controllers.zones[zone], ready, total: section.nodes.length,
      layout: this.compact ? "lines" : "flow",
    });
  }

  #pendingSection() {
    if (!this.pending) {
      this.pending = el("section", "zone pending-pods");
      this.pending.append(el("header", "zone-head", this.t("cluster.pending")), el("ul", "pods"));
    }
    const pending = this.store.podsOn("").sort((a, b) => naturalCompare(nameOf(a), nameOf(b)));
    const signature = JSON.stringify(pending.map((p) => [nameOf(p), p.metadata?.resourceVersion]));
    if (signature !== this.pendingSignature) {
      this.pendingSignature = signature;
      this.pending.querySelector("ul").replaceChildren(...pending.map((p) => this.#podItem(p, null, false).li));
      this.pending.hidden = pending.length === 0;
    }
    return this.pending;
  }

  /**
   * The node's card: its signature says whether what it shows (apart from the moving bars)
   * changed; its element is (re)built only then, and in the virtual list only while mounted. A
   * row out of view has no element and no signature: only what sets its height is kept current
   * (on a 100-node page, most rows; their signatures would be the bulk of the first render).
   */
  #card(node, pods) {
    const name = nameOf(node);
    const kind = !this.compact || name === this.focus ? "card" : "row";
    const faults = this.controllers.faultsOf(name);
    let card = this.cards.get(name);
    const drawn = !this.compact || kind === "card" || Boolean(card?.el);
    const signature = drawn ? this.#signature(kind, node, pods, faults) : null;
    if (card && signature !== null && card.signature === signature) return card;
    if (!card) {
      card = { name, visible: !this.compact, el: null, signature: null };
      this.cards.set(name, card);
    }
    const before = [card.kind, card.extra];
    card.signature = signature;
    card.kind = kind;
    card.node = node;
    card.pods = pods;
    card.faults = faults;
    card.extra = kind === "row" && (faults.length > 0 || chipsOf(node).length > 0);
    card.stale = true;
    if (this.compact && (before[0] !== card.kind || before[1] !== card.extra)) {
      // Its height changes: remount it as what it is now.
      const key = `node:${name}`;
      const mounted = this.mounted.get(key);
      if (mounted) {
        mounted.remove();
        this.mounted.delete(key);
      }
      if (card.el) this.cardObserver.unobserve(card.el);
      release(card);
      card.visible = false;
      this.layoutDirty = true;
    }
    if (!this.compact || card.el) this.#ensureElement(card);
    return card;
  }

  /** What a card shows apart from the moving bars (a Lease renewal moves only the bar). */
  #signature(kind, node, pods, faults) {
    const evictions = pods.map((p) => this.controllers.evictions.get(podKey(p))?.fireAt ?? "");
    const volumes = kind === "card" ? this.#volumes(node) : null;
    return JSON.stringify([kind, node.metadata?.resourceVersion, node.spec, node.status?.conditions,
      pods.map((p) => [nameOf(p), p.metadata?.resourceVersion, podReady(p), isTerminating(p), p.status?.phase]),
      faults, evictions, volumes, volumes && pods.map((p) => podWait(this.store, p))]);
  }

  /** A full card's volumes (none on a run without them: nothing is looked up there). */
  #volumes(node) {
    if (!this.volumesOn) return null;
    const name = nameOf(node);
    return nodeVolumes(this.store, name)
      .map((v) => ({ ...v, detach: forceDetachOf(this.store, this.controllers, v.pv, name) }));
  }

  /** A run with StatefulSets and volumes: cards show each node's volumes and why a pod waits. */
  setVolumes(on) {
    if (this.volumesOn === on) return;
    this.volumesOn = on;
    this.full = true;
  }

  /** Builds (or rebuilds, when stale) the card's element. */
  #ensureElement(card) {
    if (card.el && !card.stale) return;
    if (!card.el) {
      const article = el("article", "node");
      article.dataset.node = card.name;
      article.tabIndex = 0;
      card.el = article;
      if (!this.compact) this.observer.observe(article);
      else if (card.kind === "card") this.cardObserver.observe(article);
    }
    card.stale = false;
    card.signature ??= this.#signature(card.kind, card.node, card.pods, card.faults);
    card.pods.sort((x, y) => naturalCompare(nameOf(x), nameOf(y)));
    this.#fillCard(card);
    if (card.visible) this.#tickCard(card, this.clock.now(), this.controllers.gracePeriod);
  }

  #unmount(card) {
    if (!card.el) return;
    this.observer.unobserve(card.el);
    this.cardObserver.unobserve(card.el);
    card.el.remove();
    release(card);
  }

  /** Condition and taint chips of a node (what a row shows on its second line). */
  #chips(node) {
    return chipsOf(node).map(({ cls, text, title, taint }) => {
      const chip = el("span", `chip ${cls}`, text);
      chip.translate = false;
      if (title !== undefined) chip.title = title;
      if (taint) chip.dataset.taint = taint;
      return chip;
    });
  }

  #fillCard(card) {
    const { name, node, pods, faults, kind } = card;
    card.volumeItems = [];
    const status = nodeStatus(node);
    const article = card.el;
    const full = kind === "card";
    article.className = `node ${full ? "card" : "row"}${card.extra ? " has-extra" : ""}` +
      `${name === this.focus ? " focused" : ""}`;
    article.dataset.status = status;
    article.dataset.ready = readyOf(node) ?? "None";
    const title = el("span", "node-name", name);
    title.translate = false;
    const badge = el("span", `node-status status-${status.split(",")[0]}`, status);
    badge.translate = false;
    badge.dataset.role = "kubectl-status";
    const flags = faults.map((f) => el("span", "fault-flag",
      this.t(`fault-flag.${f.split(":")[0]}`, { resource: f.split(":")[1] ?? "" })));

    const bar = el("div", "bar lease-bar");
    bar.dataset.role = "lease-bar";
    // The fill holds the text, in a span of the text's colour (see .fill in site.css).
    const fill = el("div", "fill live-text bar-text");
    const text = el("span", "label");
    fill.append(text);
    bar.append(fill);
    const chips = this.#chips(node);

    const list = el("ul", "pods");
    const items = pods.map((p) => this.#podItem(p, node, !full));
    list.append(...items.map((item) => item.li));
    if (full) {
      const head = el("header", "node-head");
      head.append(title, badge, ...flags);
      const meta = el("div", "node-meta");
      card.statusPost = el("span", "status-post live-text");
      meta.append(card.statusPost);
      const chipBox = el("div", "chips");
      chipBox.append(...chips);
      const parts = [head, bar, meta, chipBox];
      const volumes = this.#volumes(node);
      if (volumes?.length) parts.push(this.#volumeBox(card, volumes));
      article.replaceChildren(...parts, list);
    } else {
      card.statusPost = null;
      const parts = [title, badge, bar, list];
      if (flags.length || chips.length) {
        const extra = el("div", "row-extra chips");
        extra.append(...flags, ...chips);
        parts.push(extra);
      }
      article.replaceChildren(...parts);
    }
    card.bar = bar;
    card.fill = fill;
    card.text = text;
    card.items = items;
    // Only pods on a NoExecute-tainted node (or with a known schedule) can show a countdown.
    card.mayEvict = taintsOf(node).some((t) => t.effect === "NoExecute");
    // What the bars and texts show, so the tick writes only what changed.
    card.shown = {};
  }

  /**
   * The node's volumes, one chip each: its claim, attached and in use as the Node status and the
   * VolumeAttachments say, and the force-detach countdown while the controller waits.
   */
  #volumeBox(card, volumes) {
    const box = el("div", "volumes");
    box.dataset.role = "volumes";
    const stale = !["True", "False"].includes(readyOf(card.node)); // Unknown: its kubelet stopped posting
    const title = el("span", "vol-title", this.t("cluster.volumes"));
    title.title = this.t("volume.chip-title");
    box.append(title);
    for (const v of volumes) {
      const chip = el("span", "volume");
      chip.dataset.pv = v.pv;
      chip.dataset.claim = v.claim;
      chip.dataset.attached = String(v.attached);
      chip.dataset.inUse = String(v.inUse);
      const name = el("span", "vol-name", v.claim);
      name.translate = false;
      name.title = v.pv;
      const states = [];
      if (v.attached) states.push(this.t("volume-state.attached"));
      else if (v.attaching) states.push(this.t("volume-state.attaching"));
      // a node not Ready: volumesInUse is what its kubelet last posted, not news
      if (v.inUse) states.push(this.t(stale ? "volume-state.in-use-stale" : "volume-state.in-use"));
      if (v.detaching) states.push(this.t("volume-state.detaching"));
      chip.append(name, el("span", "vol-state", states.join(" · ")));
      const item = { chip, detach: v.detach, countdown: null, shown: {} };
      if (v.detach) {
        Object.assign(item, countdownBar("force-detach", "vol-countdown"));
        chip.append(item.countdown);
      }
      card.volumeItems.push(item);
      box.append(chip);
    }
    return box;
  }

  #podItem(pod, node, small) {
    const key = podKey(pod);
    const li = el("li", "pod");
    li.dataset.pod = key;
    const ready = podReady(pod);
    li.dataset.ready = ready ?? "None";
    li.dataset.terminating = String(isTerminating(pod));
    li.dataset.phase = pod.status?.phase ?? "";
    const state = podState(pod);
    li.classList.add(`pod-${state}`);
    if (key === this.selectedPod) li.classList.add("selected");
    li.title = `${nameOf(pod)} · ${this.t(`pod-state.${state}`)}`;
    const item = { li, pod, node, key, countdown: null };
    if (!small) {
      const name = el("span", "pod-name", nameOf(pod));
      name.translate = false;
      const { countdown, fill, text } = countdownBar("eviction");
      countdown.hidden = true;
      li.append(name, el("span", "pod-state", podStateText(pod, state, this.t)), countdown);
      const wait = this.volumesOn ? podWait(this.store, pod) : null;
      if (wait) {
        const why = el("span", `pod-why why-${wait.kind}`, waitText(wait, this.t));
        why.dataset.role = "pod-why";
        why.dataset.kind = wait.kind;
        li.append(why);
        if (wait.multiAttach) {
          const chip = el("span", "chip multi-attach", "Multi-Attach error");
          chip.translate = false;
          chip.dataset.role = "multi-attach";
          li.append(chip);
        }
        li.title += ` · ${why.textContent}`;
      }
      Object.assign(item, { countdown, fill, text, shown: {} });
    }
    return item;
  }

  /**
   * Moves the bars (Lease age, status post age, eviction countdowns) of the cards on screen,
   * every ~100 ms. A row shows whole seconds: it changes only when the clock's second turns or
   * its objects changed (`touched`, node names); in between only full cards and cards with
   * eviction countdowns are looked at.
   */
  tick(touched = null) {
    const now = this.clock.now();
    const grace = this.controllers.gracePeriod;
    const second = Math.floor(now);
    const all = !touched || second !== this.tickedSecond;
    this.tickedSecond = second;
    for (const card of this.cards.values()) {
      if (!card.visible || !card.el) continue;
      if (all || card.kind === "card" || card.mayEvict || card.shown.evicting || touched.has(card.name)) {
        this.#tickCard(card, now, grace);
      }
    }
    if (this.overviewOn) this.overview.tick();
  }

  #tickCard(card, now, grace) {
    if (!card.el || card.stale) return;
    const shown = card.shown;
    const lease = this.store.lease(card.name);
    if (lease !== card.lease) {
      card.lease = lease;
      card.renew = lease ? this.clock.secondsOf(lease.spec?.renewTime) : null;
    }
    const full = card.kind === "card";
    const second = Math.floor(now);
    if (card.renew === null) {
      shown.age = null;
      setText(card.text, this.t("cluster.no-lease"), shown, "text");
      setShare(card.fill, 0, shown);
    } else {
      const age = leaseAge(now, card.renew);
      const whole = wholeLeaseAge(now, card.renew);
      const shownAge = full ? Math.round((age / grace) * CARD_STEPS) * (grace / CARD_STEPS) : whole;
      setShare(card.fill, Math.min(1, shownAge / grace), shown);
      const level = leaseLevel(age, grace);
      if (shown.level !== level) {
        if (shown.level) card.fill.classList.remove(shown.level);
        card.fill.classList.add(level);
        shown.level = level;
      }
      const expired = String(age > grace);
      if (card.bar.dataset.expired !== expired) card.bar.dataset.expired = expired;
      if (shown.age !== whole) {
        shown.age = whole;
        // A row's age keeps its width (figure spaces): a text that changes width makes Chrome
        // redo the page's compositing layers (see .live-text in site.css). The card's changes
        // width only when its digits do, a few times a minute.
        setText(card.text, full ? this.t("cluster.lease-age", { age: whole, grace })
          : this.t("cluster.lease-age-short", { age: String(whole).padStart(3, FIGURE_SPACE) }), shown, "text");
      }
    }
    if (card.statusPost) {
      if (card.beatOf !== card.node) {
        card.beatOf = card.node;
        card.beat = this.clock.secondsOf(condition(card.node, "Ready")?.lastHeartbeatTime);
      }
      const beatAge = card.beat === null ? null : Math.max(0, second - Math.floor(card.beat));
      if (shown.beatAge !== beatAge) {
        shown.beatAge = beatAge;
        const text = beatAge === null ? this.t("cluster.no-status")
          : this.t("cluster.status-post", { age: formatCountdown(beatAge) });
        setText(card.statusPost, text, shown, "post");
      }
    }
    for (const v of card.volumeItems) if (v.countdown) this.#detachCountdown(v, now);
    if (card.mayEvict || shown.evicting) {
      let any = false;
      for (const item of card.items) any = this.#countdown(item, now, card.mayEvict) || any;
      shown.evicting = any;
    }
  }

  /** A volume's force-detach countdown (maxWaitForUnmountDuration), like an eviction's. */
  #detachCountdown(item, now) {
    const { left, share, shown } = countdownAt(item.detach, now, CARD_STEPS);
    setShare(item.fill, share, item.shown);
    if (item.shown.left !== shown) {
      item.shown.left = shown;
      item.countdown.dataset.left = left.toFixed(0);
      writeText(item.text, this.t("cluster.force-detach-in", { left: formatCountdown(shown) }));
    }
  }

  /** One pod's eviction countdown (a bar on a full card, a marked square on a row). */
  #countdown(item, now, mayEvict) {
    const eviction = mayEvict
      ? this.controllers.evictionOf(item.pod, item.node, (ts) => this.clock.secondsOf(ts)) : null;
    const active = Boolean(eviction && !eviction.never && !isTerminating(item.pod));
    if (!item.countdown) {
      if (item.li.classList.contains("evicting") !== active) item.li.classList.toggle("evicting", active);
      return active;
    }
    if (item.countdown.hidden === active) item.countdown.hidden = !active;
    if (!active) return false;
    const { left, share, shown: shownLeft } = countdownAt(eviction, now, CARD_STEPS);
    setShare(item.fill, share, item.shown);
    if (item.shown.left !== shownLeft) {
      item.shown.left = shownLeft;
      item.countdown.dataset.left = left.toFixed(0);
      writeText(item.text, this.t("cluster.evicts-in", { left: formatCountdown(shownLeft) }));
    }
    return true;
  }
}

/** A countdown bar (its fill holds the text, as the Lease bar's): {countdown, fill, text}. */
function countdownBar(role, cls = "") {
  const countdown = el("span", `countdown ${cls}`.trim());
  countdown.dataset.role = role;
  const fill = el("span", "fill live-text countdown-text");
  const text = el("span", "label");
  fill.append(text);
  countdown.append(fill);
  return { countdown, fill, text };
}

/** The chips of a node, as data: pressure and not-Ready conditions, then taints. */
function chipsOf(node) {
  const chips = [];
  for (const type of PRESSURE) {
    const c = condition(node, type);
    if (c && c.status !== "False") chips.push({ cls: `cond cond-${c.status}`, text: `${type}=${c.status}` });
  }
  const ready = condition(node, "Ready");
  if (ready && ready.status !== "True") {
    chips.push({ cls: `cond cond-${ready.status}`,
      text: `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ""}`, title: ready.message ?? "" });
  }
  for (const taint of taintsOf(node)) {
    chips.push({ cls: `taint effect-${taint.effect}`,
      text: `${taint.key.replace("node.kubernetes.io/", "")}:${taint.effect}`,
      title: taintString(taint), taint: `${taint.key}:${taint.effect}` });
  }
  return chips;
}

/**
 * Lets a card's element go: its parts too, which would otherwise keep the whole detached
 * subtree alive (a child holds its parent) until the card is built again.
 */
function release(card) {
  card.el = null;
  card.bar = card.fill = card.text = card.statusPost = null;
  card.items = [];
  card.volumeItems = [];
}

/** Sets a bar's fraction (the width of its fill's background) when it changed. */
function setShare(fill, value, shown) {
  if (shown.f === value) return;
  shown.f = value;
  fill.style.backgroundSize = barSize(value);
}

function setText(node, text, shown, key) {
  if (shown[key] === text) return;
  shown[key] = text;
  writeText(node, text);
}

/** Puts `children` into `parent` in order, moving only what is out of place. */
function syncChildren(parent, children) {
  children.forEach((child, i) => {
    if (parent.children[i] !== child) parent.insertBefore(child, parent.children[i] ?? null);
  });
  while (parent.children.length > children.length) parent.lastElementChild.remove();
}
