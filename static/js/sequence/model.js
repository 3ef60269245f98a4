// What the live sequence diagram draws, decided without touching the DOM: the lanes, and for
// each event the row it becomes (a request arrow, a watch delivery, a lost request, a
// controller decision or a trainer's fault note). The view only positions these rows.

export const APISERVER = "kube-apiserver";

/** Lanes, left to right: the focused node's two heartbeat paths next to the API server. */
export const LANES = [
  { id: "other-kubelets", components: [] },
  { id: "kubelet-lease", components: ["kubelet-lease"] },
  { id: "kubelet-status", components: ["kubelet-status", "kubelet"] },
  { id: APISERVER, components: [APISERVER] },
  { id: "node-lifecycle-controller", components: ["node-lifecycle-controller", "cloud-node-lifecycle-controller"] },
  { id: "taint-eviction-controller", components: ["taint-eviction-controller"] },
  { id: "kube-scheduler", components: ["kube-scheduler"] },
  { id: "endpointslice-controller", components: ["endpointslice-controller"] },
  {
    id: "workload-controllers",
    components: ["replicaset-controller", "daemonset-controller", "pod-garbage-collector", "garbage-collector"],
  },
];

const KUBELET_COMPONENTS = new Set(["kubelet-lease", "kubelet-status", "kubelet"]);
const LANE_OF_COMPONENT = new Map(LANES.flatMap((lane) => lane.components.map((c) => [c, lane.id])));

/** Lane of an event's component; another node's kubelet folds into "other kubelets". */
export function laneOf(component, node, focus) {
  if (KUBELET_COMPONENTS.has(component) && node !== focus) return "other-kubelets";
  return LANE_OF_COMPONENT.get(component) ?? "workload-controllers";
}

const HTTP_VERB = {
  create: "POST", update: "PUT", patch: "PATCH", delete: "DELETE", get: "GET", list: "LIST", watch: "WATCH",
};

/** "PUT leases/node-2", "PATCH nodes/node-2/status": what the request line of the arrow says. */
export function requestLabel(event) {
  const verb = HTTP_VERB[event.verb] ?? String(event.verb ?? "").toUpperCase();
  const path = [event.resource, event.name, event.subresource].filter(Boolean).join("/");
  return `${verb} ${path}`;
}

/**
 * The row an event becomes, or null when the sequence diagram does not draw it (transitions go
 * to the timeline; decisions about other nodes would drown the focused one).
 */
export function rowFor(event, focus, aggregate = false) {
  const base = { seq: event.seq, t: event.t, event };
  // A large cluster counts other kubelets' requests per zone (zone-traffic.js) instead.
  if (aggregate && (event.type === "write" || event.type === "read" || event.type === "request-failed")
      && laneOf(event.component, event.node, focus) === "other-kubelets") return null;
  switch (event.type) {
    case "write":
    case "read": {
      const from = laneOf(event.component, event.node, focus);
      const failed = event.code >= 400;
      return { ...base, kind: "request", from, to: APISERVER, label: requestLabel(event), code: event.code, failed,
        node: event.node, other: from === "other-kubelets", read: event.type === "read" };
    }
    case "request-failed":
      return { ...base, kind: "lost", from: laneOf(event.component, event.node, focus), to: APISERVER,
        label: requestLabel(event), node: event.node, other: event.node !== focus };
    case "watch": {
      // Deliveries to other kubelets are theirs to count too, when they are counted per zone.
      const targets = [...new Set((event.to ?? []).map((c) => laneOf(c, event.node, focus)))]
        .filter((l) => l !== APISERVER && !(aggregate && l === "other-kubelets"));
      if (!targets.length) return null;
      return {
        ...base, kind: "watch", from: APISERVER, targets, label: `${event.resource}/${event.name}`, node: event.node,
      };
    }
    case "decision": {
      const lane = laneOf(event.component, event.node, focus);
      if (event.node && event.node !== focus) return null;
      // The pass summary says what the pass concluded about the focused node.
      const record = event.rule === "nlc.monitor-pass" ? passRecord(event.nodes, focus) : null;
      return {
        ...base, kind: "decision", lane, label: event.rule ?? "", outcome: event.outcome, node: event.node, record,
      };
    }
    case "fault":
      return { ...base, kind: "note",
        label: [event.action, event.node ?? event.zone ?? event.resource ?? ""].filter(Boolean).join(" ") };
    default:
      return null;
  }
}

/** A node's record in a monitor pass: `nodes` as it came (an object) or as the history keeps it. */
function passRecord(nodes, node) {
  if (typeof nodes?.get === "function") return nodes.get(node);
  return nodes?.[node] ?? null;
}

/**
 * Rows kept for scroll-back: one per event of the page's history that the diagram draws, as
 * the event's seq only; a row object is made when the view draws it (`row(i)`). Indices only
 * grow (a row keeps its y for ever) until the history lets its oldest events go, which drops
 * their rows and shifts every index by the same amount (`dropped`), once per history trim.
 */
export class SequenceModel {
  /** @param {import("../history.js").EventHistory} history  the events the rows are read from */
  constructor(history) {
    this.history = history;
    this.focus = null;
    this.aggregate = false; // other kubelets' requests counted per zone, not drawn (large clusters)
    this.seqs = new Float64Array(history.capacity);
    this.length = 0;
    this.dropped = 0; // rows discarded since the start: the view keeps its scroll position with it
  }

  /** Adds the row of an event just added to the history; returns the row, or null if it has none. */
  push(event, focus = this.focus) {
    const row = rowFor(event, focus, this.aggregate);
    if (!row) return null;
    this.#forget();
    this.seqs[this.length++] = event.seq;
    return row;
  }

  /** Drops the rows whose events the history no longer keeps. */
  #forget() {
    const first = this.history.firstSeq();
    let n = 0;
    while (n < this.length && this.seqs[n] < first) n++;
    if (!n && this.length < this.seqs.length) return;
    n = Math.max(n, this.length - this.seqs.length + 1);
    this.seqs.copyWithin(0, n, this.length);
    this.length -= n;
    this.dropped += n;
  }

  /** Rebuilds the rows from the history for a new focus (a user action, not a per-event cost). */
  rebuild(focus) {
    this.focus = focus;
    this.length = 0;
    this.dropped = 0;
    for (let i = 0; i < this.history.length; i++) {
      if (rowFor(this.history.at(i), focus, this.aggregate)) this.seqs[this.length++] = this.history.seq[i];
    }
  }

  seqAt(i) {
    return this.seqs[i];
  }

  /** The row at index `i`, made from its event in the history. */
  row(i) {
    const event = i >= 0 && i < this.length ? this.history.get(this.seqs[i]) : null;
    return event && rowFor(event, this.focus, this.aggregate);
  }

  /** Rows with index in [from, to). */
  slice(from, to) {
    const rows = [];
    for (let i = Math.max(0, from); i < Math.min(this.length, to); i++) rows.push(this.row(i));
    return rows;
  }

  /** Every row kept, made at once (for tests and export, not for drawing). */
  get rows() {
    return this.slice(0, this.length);
  }
}
