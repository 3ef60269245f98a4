// @ts-check
// Node state changes told to screen readers through an aria-live region: "node-2 NotReady".
// Only a change of what `kubectl get nodes` prints as STATUS counts (Ready <-> NotReady; Lease
// renewals and status posts that change nothing are not news), and at most one announcement goes
// out every INTERVAL_MS, summing up what changed meanwhile ("node-2, node-5 and 3 more NotReady"),
// so a zone outage is one sentence, not a hundred.

export const INTERVAL_MS = 2000;
const BATCH_MS = 300; // the first change waits this long for the ones that come with it
const NAMES_SHOWN = 3; // names per state before "and N more"

/** kubectl's STATUS for a Ready condition status: Unknown prints as NotReady too. */
export function kubectlStatus(ready) {
  return ready === "True" ? "Ready" : "NotReady";
}

/**
 * The node STATUS changes among `events`: [node, before, after] for each Ready transition that
 * changes it. A node's creation (`from` null) is not a change of state.
 */
export function statusChanges(events) {
  const out = [];
  for (const e of events) {
    if (e.type !== "transition" || e.kind !== "node-ready" || !e.node
      || e.from === null || e.from === undefined) continue;
    const before = kubectlStatus(e.from);
    const after = kubectlStatus(e.to);
    if (before !== after) out.push([e.node, before, after]);
  }
  return out;
}

/**
 * One sentence for the changes (Map node -> status, in the order they came): per status, its
 * nodes (the first NAMES_SHOWN, then `more(n)`) and the status, the groups joined by "; ".
 */
export function summary(changes, more) {
  const byStatus = new Map();
  for (const [node, status] of changes) {
    if (!byStatus.has(status)) byStatus.set(status, []);
    byStatus.get(status).push(node);
  }
  return [...byStatus].map(([status, nodes]) => {
    const names = nodes.slice(0, NAMES_SHOWN).join(", ");
    const rest = nodes.length - NAMES_SHOWN;
    return `${names}${rest > 0 ? ` ${more(rest)}` : ""} ${status}`;
  }).join("; ");
}

export class NodeAnnouncer {
  /**
   * @param {HTMLElement} region  an aria-live region; its `data-more` is the translated
   *   "and {n} more"
   * @param {{now?: () => number, later?: (fn: Function, ms: number) => any}} clock  for tests
   */
  constructor(region, { now = () => performance.now(), later = (fn, ms) => setTimeout(fn, ms) } = {}) {
    this.region = region;
    this.now = now;
    this.later = later;
    this.more = (n) => (region.dataset.more ?? "and {n} more").replace("{n}", String(n));
    this.pending = new Map(); // node -> its latest status not announced yet
    this.told = new Map(); // node -> the status last announced (or the one before its first change)
    this.lastAt = -Infinity;
    this.timer = null;
  }

  /** A frame's new events: the STATUS changes among them are announced soon. */
  add(events) {
    for (const [node, before, after] of statusChanges(events)) {
      if (!this.told.has(node)) this.told.set(node, before);
      this.pending.delete(node); // its latest change goes last
      this.pending.set(node, after);
    }
    if (!this.pending.size || this.timer !== null) return;
    const wait = Math.max(BATCH_MS, this.lastAt + INTERVAL_MS - this.now());
    this.timer = this.later(() => this.#flush(), wait);
  }

  #flush() {
    this.timer = null;
    // A node that went and came back before the announcement has nothing new to say.
    const changes = [...this.pending].filter(([node, status]) => this.told.get(node) !== status);
    this.pending.clear();
    if (!changes.length) return;
    for (const [node, status] of changes) this.told.set(node, status);
    this.lastAt = this.now();
    this.region.textContent = summary(changes, this.more);
  }
}
