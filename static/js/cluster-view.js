// The cluster view: zones, their nodes (kubectl STATUS, Lease age against the grace period, last
// status post, conditions, taint chips) and each node's pods (Ready, Terminating, eviction
// countdowns).
//
// Up to COMPACT_FROM nodes every node is a full card. From there on (a 100-node class) each node
// is a one-line row (name, STATUS, Lease bar, one square per pod, chips when it has any) and only
// the focused node keeps a full card, so the view stays a few thousand DOM nodes.
//
// Cost per frame: a card is rebuilt only when its objects changed (a signature per card); the
// bars and texts that move with time are written only when what they show changes (a pixel step
// of a bar, a whole second of an age), and only for cards on screen (an IntersectionObserver on
// the panel); cards far off screen are not even laid out or painted (`content-visibility: auto`).
import { condition, isTerminating, nameOf, naturalCompare, nodeStatus, podReady, readyOf, taintString, taintsOf, zoneOf } from "./k8s.js";
import { setText as writeText } from "./dom.js";
import { formatCountdown } from "./time.js";

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const PRESSURE = ["MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"];
export const COMPACT_FROM = 25;
// Bar steps: a bar is written when it moved by one step (about a pixel at its usual width).
const STEPS = { row: 100, card: 300 };

const podKey = (pod) => `${pod.metadata?.namespace ?? "default"}/${nameOf(pod)}`;

function podState(pod) {
  if (isTerminating(pod)) return "Terminating";
  if (pod.status?.phase !== "Running") return pod.status?.phase ?? "Pending";
  return podReady(pod) === "True" ? "Ready" : "NotReady";
}

export class ClusterView {
  constructor(root, { t, store, controllers, clock, onFocus, onSelectPod }) {
    this.root = root;
    this.t = t;
    this.store = store;
    this.controllers = controllers;
    this.clock = clock;
    this.onFocus = onFocus;
    this.onSelectPod = onSelectPod;
    this.focus = null;
    this.selectedPod = null;
    this.compact = false;
    this.cards = new Map(); // node name -> card (see #card)
    this.zones = new Map(); // zone -> {el, head, list, signature}
    this.pending = null;
    this.pendingSignature = null;
    this.dirty = new Set(); // nodes whose card may need rebuilding
    this.full = true; // the next render rebuilds the structure (snapshot, node set, focus)
    root.addEventListener("click", (e) => {
      const podEl = e.target.closest("[data-pod]");
      if (podEl) {
        this.onSelectPod?.(podEl.dataset.pod);
        return;
      }
      const card = e.target.closest("[data-node]");
      if (card) this.onFocus?.(card.dataset.node);
    });
    root.addEventListener("keydown", (e) => {
      const card = e.target.closest("[data-node]");
      if (card && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        this.onFocus?.(card.dataset.node);
      }
    });
    // Cards scrolled out of the panel are not updated; one coming back (or about to: the margin)
    // gets its bars and texts written at once.
    this.observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const card = this.cards.get(entry.target.dataset.node);
        if (!card || card.el !== entry.target) continue;
        card.visible = entry.isIntersecting;
        if (card.visible) this.#tickCard(card, this.clock.now(), this.controllers.gracePeriod);
      }
    }, { root, rootMargin: "200px 0px" });
  }

  setFocus(node) {
    const before = this.focus;
    this.focus = node;
    if (this.compact) {
      // The old focus becomes a row again, the new one a full card.
      for (const name of [before, node]) if (name) this.dirty.add(name);
    }
    for (const [name, card] of this.cards) card.el.classList.toggle("focused", name === node);
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

  /**
   * Rebuilds what changed. Per frame only the touched cards are looked at; the whole structure
   * is rebuilt only when the node set or the layout changed.
   */
  render() {
    const nodeCount = this.store.count("nodes");
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
        for (const [zone, section] of this.zones) this.#zoneHead(section, zone);
        this.dirty.clear();
        this.tick();
        return;
      }
    }
    this.full = false;
    this.dirty.clear();
    this.#renderAll();
  }

  #renderAll() {
    const nodes = this.store.list("nodes").sort((a, b) => naturalCompare(nameOf(a), nameOf(b)));
    this.compact = nodes.length >= COMPACT_FROM;
    this.root.classList.toggle("compact", this.compact);
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
    for (const zone of zoneNames) {
      const section = this.#zoneSection(zone);
      order.push(section.el);
      const children = [];
      for (const node of byZone.get(zone)) {
        const name = nameOf(node);
        seenNodes.add(name);
        children.push(this.#card(node, this.store.podsOn(name)).el);
      }
      section.nodes = byZone.get(zone).map(nameOf);
      this.#zoneHead(section, zone);
      syncChildren(section.list, children);
    }
    for (const [name, card] of this.cards) {
      if (seenNodes.has(name)) continue;
      this.observer.unobserve(card.el);
      card.el.remove();
      this.cards.delete(name);
    }
    for (const [zone, section] of this.zones) if (!byZone.has(zone)) { section.el.remove(); this.zones.delete(zone); }
    order.push(this.#pendingSection());
    syncChildren(this.root, order);
    this.tick();
  }

  #zoneSection(zone) {
    if (!this.zones.has(zone)) {
      const sectionEl = el("section", "zone");
      sectionEl.dataset.zone = zone;
      const head = el("header", "zone-head");
      const list = el("div", "zone-nodes");
      sectionEl.append(head, list);
      this.zones.set(zone, { el: sectionEl, head, list, signature: "", nodes: [] });
    }
    return this.zones.get(zone);
  }

  #zoneHead(section, zone) {
    const z = this.controllers.zones[zone] ?? {};
    let ready = 0;
    for (const name of section.nodes) if (readyOf(this.store.node(name)) === "True") ready++;
    const signature = JSON.stringify([zone, z.state, z.rate, z.tokens, z.queue, ready, section.nodes.length]);
    if (signature === section.signature) return;
    section.signature = signature;
    const name = el("span", "zone-name", zone || this.t("cluster.no-zone"));
    name.translate = false;
    const state = el("span", `zone-state state-${z.state ?? "Initial"}`, this.t(`zone-state.${z.state ?? "Initial"}`));
    state.dataset.state = z.state ?? "Initial";
    const parts = [name, state];
    if (section.nodes.length) {
      const count = el("span", `zone-count${ready < section.nodes.length ? " degraded" : ""}`,
        this.t("cluster.zone-ready", { ready, total: section.nodes.length }));
      parts.push(count);
    }
    if (z.rate !== undefined) parts.push(el("span", "zone-rate", this.t("cluster.rate", { rate: z.rate })));
    if (z.tokens !== undefined) parts.push(el("span", "zone-tokens", this.t("cluster.tokens", { tokens: Number(z.tokens).toFixed(2) })));
    if (z.queue?.length) parts.push(el("span", "zone-queue", this.t("cluster.queue", { nodes: z.queue.join(", ") })));
    section.head.replaceChildren(...parts);
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

  /** The node's card, rebuilt only when what it shows (apart from the moving bars) changed. */
  #card(node, pods) {
    const name = nameOf(node);
    const kind = !this.compact || name === this.focus ? "card" : "row";
    const faults = this.controllers.faultsOf(name);
    const evictions = pods.map((p) => this.controllers.evictions.get(podKey(p))?.fireAt ?? "");
    // A Lease renewal moves only the bar (tick reads the Lease from the store): no rebuild.
    const signature = JSON.stringify([kind, node.metadata?.resourceVersion, node.spec, node.status?.conditions,
      pods.map((p) => [nameOf(p), p.metadata?.resourceVersion, podReady(p), isTerminating(p), p.status?.phase]), faults, evictions]);
    let card = this.cards.get(name);
    if (card && card.signature === signature) return card;
    if (!card) {
      const article = el("article", "node");
      article.dataset.node = name;
      article.tabIndex = 0;
      card = { el: article, name, visible: true };
      this.cards.set(name, card);
      this.observer.observe(article);
    }
    card.signature = signature;
    this.#fillCard(card, node, pods.sort((a, b) => naturalCompare(nameOf(a), nameOf(b))), faults, kind);
    if (card.visible) this.#tickCard(card, this.clock.now(), this.controllers.gracePeriod);
    return card;
  }

  #fillCard(card, node, pods, faults, kind) {
    const name = nameOf(node);
    const status = nodeStatus(node);
    const article = card.el;
    const full = kind === "card";
    article.className = `node ${full ? "card" : "row"}${name === this.focus ? " focused" : ""}`;
    article.dataset.status = status;
    article.dataset.ready = readyOf(node) ?? "None";
    const title = el("span", "node-name", name);
    title.translate = false;
    const badge = el("span", `node-status status-${status.split(",")[0]}`, status);
    badge.translate = false;
    badge.dataset.role = "kubectl-status";
    const flags = faults.map((f) => el("span", "fault-flag", this.t(`fault-flag.${f.split(":")[0]}`, { resource: f.split(":")[1] ?? "" })));

    const bar = el("div", "bar lease-bar");
    bar.dataset.role = "lease-bar";
    const fill = el("div", "fill");
    const text = el("span", "bar-text");
    bar.append(fill, text);

    const chips = [];
    for (const type of PRESSURE) {
      const c = condition(node, type);
      if (c && c.status !== "False") {
        const chip = el("span", `chip cond cond-${c.status}`, `${type}=${c.status}`);
        chip.translate = false;
        chips.push(chip);
      }
    }
    const ready = condition(node, "Ready");
    if (ready && ready.status !== "True") {
      const chip = el("span", `chip cond cond-${ready.status}`, `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ""}`);
      chip.translate = false;
      chip.title = ready.message ?? "";
      chips.push(chip);
    }
    for (const taint of taintsOf(node)) {
      const chip = el("span", `chip taint effect-${taint.effect}`, `${taint.key.replace("node.kubernetes.io/", "")}:${taint.effect}`);
      chip.translate = false;
      chip.title = taintString(taint);
      chip.dataset.taint = `${taint.key}:${taint.effect}`;
      chips.push(chip);
    }

    const list = el("ul", "pods");
    const items = pods.map((p) => this.#podItem(p, node, !full));
    list.append(...items.map((item) => item.li));
    if (full) {
      const head = el("header", "node-head");
      head.append(title, badge, ...flags);
      const meta = el("div", "node-meta");
      card.statusPost = el("span", "status-post");
      meta.append(card.statusPost);
      const chipBox = el("div", "chips");
      chipBox.append(...chips);
      article.replaceChildren(head, bar, meta, chipBox, list);
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
    card.kind = kind;
    card.node = node;
    card.bar = bar;
    card.fill = fill;
    card.text = text;
    card.pods = items;
    // Only pods on a NoExecute-tainted node (or with a known schedule) can show a countdown.
    card.mayEvict = taintsOf(node).some((t) => t.effect === "NoExecute");
    // What the bars and texts show, so the tick writes only what changed.
    card.shown = {};
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
      const countdown = el("span", "countdown");
      countdown.dataset.role = "eviction";
      countdown.hidden = true;
      const fill = el("span", "fill");
      const text = el("span", "countdown-text");
      countdown.append(fill, text);
      li.append(name, el("span", "pod-state", this.t(`pod-state.${state}`)), countdown);
      Object.assign(item, { countdown, fill, text, shown: {} });
    }
    return item;
  }

  /** Moves the bars: Lease age, status post age and eviction countdowns (every ~100 ms). */
  tick() {
    const now = this.clock.now();
    const grace = this.controllers.gracePeriod;
    for (const card of this.cards.values()) if (card.visible) this.#tickCard(card, now, grace);
  }

  #tickCard(card, now, grace) {
    const shown = card.shown;
    const lease = this.store.lease(card.name);
    if (lease !== card.lease) {
      card.lease = lease;
      card.renew = lease ? this.clock.secondsOf(lease.spec?.renewTime) : null;
    }
    const full = card.kind === "card";
    if (card.renew === null) {
      setText(card.text, this.t("cluster.no-lease"), shown, "text");
      setVar(card.fill, 0, shown);
    } else {
      const age = Math.max(0, now - card.renew);
      const steps = STEPS[card.kind];
      setVar(card.fill, Math.round(Math.min(1, age / grace) * steps) / steps, shown);
      const level = age >= grace ? "over" : age > grace / 2 ? "warn" : "ok";
      if (shown.level !== level) {
        shown.level = level;
        card.fill.className = `fill ${level}`;
      }
      const expired = String(age > grace);
      if (card.bar.dataset.expired !== expired) card.bar.dataset.expired = expired;
      const whole = Math.floor(age);
      setText(card.text, full ? this.t("cluster.lease-age", { age: whole, grace }) : this.t("cluster.lease-age-short", { age: whole }), shown, "text");
    }
    if (card.statusPost) {
      if (card.beatOf !== card.node) {
        card.beatOf = card.node;
        card.beat = this.clock.secondsOf(condition(card.node, "Ready")?.lastHeartbeatTime);
      }
      const text = card.beat === null ? this.t("cluster.no-status")
        : this.t("cluster.status-post", { age: formatCountdown(Math.floor(Math.max(0, now - card.beat))) });
      setText(card.statusPost, text, shown, "post");
    }
    if (card.mayEvict || shown.evicting) {
      let any = false;
      for (const item of card.pods) any = this.#countdown(item, now, card.mayEvict) || any;
      shown.evicting = any;
    }
  }

  /** One pod's eviction countdown (a bar on a full card, a marked square on a row). */
  #countdown(item, now, mayEvict) {
    const eviction = mayEvict ? this.controllers.evictionOf(item.pod, item.node, (ts) => this.clock.secondsOf(ts)) : null;
    const active = Boolean(eviction && !eviction.never && !isTerminating(item.pod));
    if (!item.countdown) {
      if (item.li.classList.contains("evicting") !== active) item.li.classList.toggle("evicting", active);
      return active;
    }
    if (item.countdown.hidden === active) item.countdown.hidden = !active;
    if (!active) return false;
    const left = eviction.fireAt - now;
    const total = Math.max(1, eviction.fireAt - eviction.scheduledAt);
    setVar(item.fill, Math.round(Math.max(0, Math.min(1, left / total)) * STEPS.card) / STEPS.card, item.shown);
    // Whole seconds, tenths in the last ten.
    const shownLeft = left < 10 ? Math.max(0, Math.ceil(left * 10) / 10) : Math.ceil(left);
    if (item.shown.left !== shownLeft) {
      item.shown.left = shownLeft;
      item.countdown.dataset.left = left.toFixed(0);
      writeText(item.text, this.t("cluster.evicts-in", { left: formatCountdown(shownLeft) }));
    }
    return true;
  }
}

/** Sets a bar's fraction (the CSS variable its background is sized by) when it changed. */
function setVar(node, value, shown) {
  if (shown.f === value) return;
  shown.f = value;
  node.style.setProperty("--f", String(value));
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
