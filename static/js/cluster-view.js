// The cluster view: zones, their nodes as cards (kubectl STATUS, Lease age against the grace
// period, last status post, conditions, taint chips) and each node's pods (Ready, Terminating,
// eviction countdowns). Cards are rebuilt only when their objects changed; the bars move on a
// cheap per-tick update so the view stays smooth at 100 nodes.
import { condition, isTerminating, nameOf, naturalCompare, nodeStatus, podReady, readyOf, taintString, taintsOf, zoneOf } from "./k8s.js";
import { formatCountdown } from "./time.js";

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const PRESSURE = ["MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"];

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
    this.cards = new Map(); // node name -> {el, signature, bars}
    this.zones = new Map(); // zone -> {el, head, list, signature}
    this.pending = null;
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
  }

  setFocus(node) {
    this.focus = node;
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
    const nodeCount = this.store.byResource.get("nodes")?.size ?? 0;
    if (!this.full && nodeCount === this.cards.size && !this.dirty.has("")) {
      const compact = this.root.classList.contains("compact");
      for (const name of this.dirty) {
        const node = this.store.node(name);
        if (!node || !this.cards.has(name)) {
          this.full = true;
          break;
        }
        this.#card(node, this.store.podsOn(name), compact);
      }
      if (!this.full) {
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
    const compact = nodes.length > 24;
    this.root.classList.toggle("compact", compact);
    const pods = this.store.list("pods");
    const podsByNode = new Map();
    for (const p of pods) {
      const key = p.spec?.nodeName || "";
      if (!podsByNode.has(key)) podsByNode.set(key, []);
      podsByNode.get(key).push(p);
    }
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
      this.#zoneHead(section, zone);
      const children = [];
      for (const node of byZone.get(zone)) {
        const name = nameOf(node);
        seenNodes.add(name);
        const card = this.#card(node, podsByNode.get(name) ?? [], compact);
        children.push(card.el);
      }
      syncChildren(section.list, children);
    }
    for (const [name, card] of this.cards) if (!seenNodes.has(name)) { card.el.remove(); this.cards.delete(name); }
    for (const [zone, section] of this.zones) if (!byZone.has(zone)) { section.el.remove(); this.zones.delete(zone); }
    order.push(this.#pendingSection(podsByNode.get("") ?? []));
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
      this.zones.set(zone, { el: sectionEl, head, list, signature: "" });
    }
    return this.zones.get(zone);
  }

  #zoneHead(section, zone) {
    const z = this.controllers.zones[zone] ?? {};
    const signature = JSON.stringify([zone, z.state, z.rate, z.tokens, z.queue]);
    if (signature === section.signature) return;
    section.signature = signature;
    const name = el("span", "zone-name", zone || this.t("cluster.no-zone"));
    name.translate = false;
    const state = el("span", `zone-state state-${z.state ?? "Initial"}`, this.t(`zone-state.${z.state ?? "Initial"}`));
    state.dataset.state = z.state ?? "Initial";
    const parts = [name, state];
    if (z.rate !== undefined) parts.push(el("span", "zone-rate", this.t("cluster.rate", { rate: z.rate })));
    if (z.tokens !== undefined) parts.push(el("span", "zone-tokens", this.t("cluster.tokens", { tokens: Number(z.tokens).toFixed(2) })));
    if (z.queue?.length) parts.push(el("span", "zone-queue", this.t("cluster.queue", { nodes: z.queue.join(", ") })));
    section.head.replaceChildren(...parts);
  }

  #pendingSection(pending) {
    if (!this.pending) {
      this.pending = el("section", "zone pending-pods");
      this.pending.append(el("header", "zone-head", this.t("cluster.pending")), el("ul", "pods"));
    }
    const list = this.pending.querySelector("ul");
    list.replaceChildren(...pending.sort((a, b) => naturalCompare(nameOf(a), nameOf(b))).map((p) => this.#podItem(p, null)));
    this.pending.hidden = pending.length === 0;
    return this.pending;
  }

  #card(node, pods, compact) {
    const name = nameOf(node);
    const lease = this.store.lease(name);
    const faults = this.controllers.faultsOf(name);
    const evictions = pods.map((p) => this.controllers.evictions.get(`${p.metadata?.namespace ?? "default"}/${nameOf(p)}`)?.fireAt ?? "");
    // A Lease renewal moves only the bar (tick reads the Lease from the store): no rebuild.
    const signature = JSON.stringify([node.metadata?.resourceVersion, node.spec, node.status?.conditions, Boolean(lease),
      pods.map((p) => [nameOf(p), p.metadata?.resourceVersion, podReady(p), isTerminating(p), p.status?.phase]), faults, compact, evictions]);
    let card = this.cards.get(name);
    if (card && card.signature === signature) return card;
    if (!card) {
      const article = el("article", "node");
      article.dataset.node = name;
      article.tabIndex = 0;
      card = { el: article };
      this.cards.set(name, card);
    }
    card.signature = signature;
    card.node = node;
    card.pods = pods;
    this.#fillCard(card, node, lease, pods, faults, compact);
    return card;
  }

  #fillCard(card, node, lease, pods, faults, compact) {
    const name = nameOf(node);
    const status = nodeStatus(node);
    const article = card.el;
    article.dataset.status = status;
    article.dataset.ready = readyOf(node) ?? "None";
    article.classList.toggle("focused", name === this.focus);
    const head = el("header", "node-head");
    const title = el("span", "node-name", name);
    title.translate = false;
    const badge = el("span", `node-status status-${status.split(",")[0]}`, status);
    badge.translate = false;
    badge.dataset.role = "kubectl-status";
    head.append(title, badge);
    for (const f of faults) head.append(el("span", "fault-flag", this.t(`fault-flag.${f.split(":")[0]}`, { resource: f.split(":")[1] ?? "" })));

    const leaseBar = el("div", "bar lease-bar");
    leaseBar.dataset.role = "lease-bar";
    const leaseFill = el("div", "fill");
    const leaseText = el("span", "bar-text");
    leaseBar.append(leaseFill, leaseText);

    const meta = el("div", "node-meta");
    const statusPost = el("span", "status-post");
    meta.append(statusPost);

    const chips = el("div", "chips");
    for (const type of PRESSURE) {
      const c = condition(node, type);
      if (c && c.status !== "False") {
        const chip = el("span", `chip cond cond-${c.status}`, `${type}=${c.status}`);
        chip.translate = false;
        chips.append(chip);
      }
    }
    const ready = condition(node, "Ready");
    if (ready && ready.status !== "True") {
      const chip = el("span", `chip cond cond-${ready.status}`, `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ""}`);
      chip.translate = false;
      chip.title = ready.message ?? "";
      chips.append(chip);
    }
    for (const taint of taintsOf(node)) {
      const chip = el("span", `chip taint effect-${taint.effect}`, `${taint.key.replace("node.kubernetes.io/", "")}:${taint.effect}`);
      chip.translate = false;
      chip.title = taintString(taint);
      chip.dataset.taint = `${taint.key}:${taint.effect}`;
      chips.append(chip);
    }

    const list = el("ul", "pods");
    const sorted = [...pods].sort((a, b) => naturalCompare(nameOf(a), nameOf(b)));
    for (const p of sorted) list.append(this.#podItem(p, node, compact));
    article.replaceChildren(head, leaseBar, meta, chips, list);
    card.bars = { leaseFill, leaseText, statusPost, lease, node, leaseBar };
    // Only pods on a NoExecute-tainted node (or with a known schedule) can show a countdown.
    card.podItems = [...list.children];
    card.mayEvict = taintsOf(node).some((t) => t.effect === "NoExecute");
  }

  #podItem(pod, node, compact = false) {
    const key = `${pod.metadata?.namespace ?? "default"}/${nameOf(pod)}`;
    const li = el("li", "pod");
    li.dataset.pod = key;
    const ready = podReady(pod);
    const terminating = isTerminating(pod);
    li.dataset.ready = ready ?? "None";
    li.dataset.terminating = String(terminating);
    li.dataset.phase = pod.status?.phase ?? "";
    li.classList.toggle("selected", key === this.selectedPod);
    const state = terminating ? "Terminating" : pod.status?.phase !== "Running" ? pod.status?.phase ?? "Pending" : ready === "True" ? "Ready" : "NotReady";
    li.classList.add(`pod-${state}`);
    li.title = `${nameOf(pod)} · ${state}`;
    if (!compact) {
      const name = el("span", "pod-name", nameOf(pod));
      name.translate = false;
      const stateEl = el("span", "pod-state", this.t(`pod-state.${state}`));
      li.append(name, stateEl);
    }
    const countdown = el("span", "countdown");
    countdown.dataset.role = "eviction";
    const fill = el("span", "fill");
    const text = el("span", "countdown-text");
    countdown.append(fill, text);
    countdown.hidden = true;
    li.append(countdown);
    li._pod = pod;
    li._node = node;
    return li;
  }

  /** Moves the bars: Lease age, status post age and eviction countdowns (every ~100 ms). */
  tick() {
    const now = this.clock.now();
    const grace = this.controllers.gracePeriod;
    for (const card of this.cards.values()) {
      const { leaseFill, leaseText, statusPost, node, leaseBar } = card.bars;
      const lease = this.store.lease(node.metadata?.name);
      const renew = lease ? this.clock.secondsOf(lease.spec?.renewTime) : null;
      if (renew === null) {
        setText(leaseText, this.t("cluster.no-lease"));
      } else {
        const ageS = Math.max(0, now - renew);
        const fraction = Math.min(1, ageS / grace);
        // scaleX moves the bar without a layout pass; the text changes once a second.
        setStyle(leaseFill, "transform", `scaleX(${fraction.toFixed(3)})`);
        const level = fraction >= 1 ? "over" : fraction > 0.5 ? "warn" : "ok";
        if (leaseFill.dataset.level !== level) {
          leaseFill.dataset.level = level;
          leaseFill.className = `fill ${level}`;
        }
        const expired = String(ageS > grace);
        if (leaseBar.dataset.expired !== expired) leaseBar.dataset.expired = expired;
        setText(leaseText, this.t("cluster.lease-age", { age: Math.floor(ageS), grace }));
      }
      const beat = this.clock.secondsOf(condition(node, "Ready")?.lastHeartbeatTime);
      setText(statusPost, beat === null ? this.t("cluster.no-status") : this.t("cluster.status-post", { age: formatCountdown(Math.floor(Math.max(0, now - beat))) }));
      if (card.mayEvict) for (const li of card.podItems) this.#countdown(li, now);
      else if (card.hadCountdown) for (const li of card.podItems) li.querySelector(".countdown").hidden = true;
      card.hadCountdown = card.mayEvict;
    }
  }

  #countdown(li, now) {
    const countdown = li.querySelector(".countdown");
    const eviction = this.controllers.evictionOf(li._pod, li._node, (ts) => this.clock.secondsOf(ts));
    if (!eviction || eviction.never || isTerminating(li._pod)) {
      countdown.hidden = true;
      return;
    }
    countdown.hidden = false;
    const left = eviction.fireAt - now;
    const total = Math.max(1, eviction.fireAt - eviction.scheduledAt);
    setStyle(countdown.querySelector(".fill"), "transform", `scaleX(${Math.max(0, Math.min(1, left / total)).toFixed(3)})`);
    countdown.dataset.left = left.toFixed(0);
    setText(countdown.querySelector(".countdown-text"), this.t("cluster.evicts-in", { left: formatCountdown(Math.ceil(left)) }));
  }
}

function setStyle(node, prop, value) {
  if (node.style[prop] !== value) node.style[prop] = value;
}

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Puts `children` into `parent` in order, moving only what is out of place. */
function syncChildren(parent, children) {
  children.forEach((child, i) => {
    if (parent.children[i] !== child) parent.insertBefore(child, parent.children[i] ?? null);
  });
  while (parent.children.length > children.length) parent.lastElementChild.remove();
}
