// @ts-check
// On a large cluster the sequence diagram cannot draw an arrow for every other kubelet's request
// (5,000 nodes renew 500 Leases a second): it shows them as counts per zone over the last ten
// virtual seconds instead, "zone-b: 1,667 kubelets, 0 Lease PUTs". A zone whose Lease renewals
// stop is what a trainer points at during an outage. Controller decisions and the focused node's
// own requests stay individual rows.

export const WINDOW = 10; // virtual seconds the counts cover

const KUBELET_COMPONENTS = new Set(["kubelet-lease", "kubelet-status", "kubelet"]);

/** Counts of other kubelets' requests per zone, by virtual second, over the last WINDOW seconds. */
export class ZoneTraffic {
  constructor() {
    this.seconds = new Map(); // whole virtual second -> Map(zone -> counts)
  }

  #counts(t, zone) {
    const second = Math.floor(t);
    if (!this.seconds.has(second)) this.seconds.set(second, new Map());
    const zones = this.seconds.get(second);
    if (!zones.has(zone)) zones.set(zone, { leasePuts: 0, statusWrites: 0, failed: 0 });
    return zones.get(zone);
  }

  /**
   * Counts what a frame says other kubelets did: its `renewals` and `failed` (Lease renewals and
   * failed kubelet requests condensed at node level, at the frame's time) and its kubelet
   * requests. `zoneOf(node)` names a node's zone.
   */
  add(frame, { zoneOf, focus }) {
    const t = frame.clock?.t ?? 0;
    for (const node of Object.keys(frame.renewals ?? {})) {
      if (node !== focus) this.#counts(t, zoneOf(node)).leasePuts++;
    }
    for (const [node, n] of Object.entries(frame.failed ?? {})) {
      if (node !== focus) this.#counts(t, zoneOf(node)).failed += n;
    }
    for (const event of frame.events ?? []) {
      if (!KUBELET_COMPONENTS.has(event.component) || !event.node || event.node === focus) continue;
      const counts = this.#counts(event.t, zoneOf(event.node));
      if (event.type === "request-failed" || event.code >= 400) counts.failed++;
      else if (event.type === "write" && event.resource === "leases") counts.leasePuts++;
      else if (event.type === "write" && event.resource === "nodes") counts.statusWrites++;
    }
    this.#forget(t);
  }

  #forget(now) {
    for (const second of this.seconds.keys()) if (second <= now - WINDOW) this.seconds.delete(second);
  }

  /**
   * Per zone, in name order: its kubelets (other than the focused node's) and what they sent in
   * (now - WINDOW, now]. `kubelets`: Map(zone -> number of nodes not focused).
   */
  summary(now, kubelets) {
    const totals = new Map([...kubelets.keys()].sort()
      .map((zone) => [zone, { zone, kubelets: kubelets.get(zone), leasePuts: 0, statusWrites: 0, failed: 0 }]));
    for (const [second, zones] of this.seconds) {
      if (second <= now - WINDOW || second > now) continue;
      for (const [zone, counts] of zones) {
        const total = totals.get(zone);
        if (!total) continue;
        total.leasePuts += counts.leasePuts;
        total.statusWrites += counts.statusWrites;
        total.failed += counts.failed;
      }
    }
    return [...totals.values()];
  }

  reset() {
    this.seconds.clear();
  }
}
