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
  { id: "workload-controllers", components: ["replicaset-controller", "daemonset-controller", "pod-garbage-collector", "garbage-collector"] },
];

const KUBELET_COMPONENTS = new Set(["kubelet-lease", "kubelet-status", "kubelet"]);
const LANE_OF_COMPONENT = new Map(LANES.flatMap((lane) => lane.components.map((c) => [c, lane.id])));

/** Lane of an event's component; another node's kubelet folds into "other kubelets". */
export function laneOf(component, node, focus) {
  if (KUBELET_COMPONENTS.has(component) && node !== focus) return "other-kubelets";
  return LANE_OF_COMPONENT.get(component) ?? "workload-controllers";
}

const HTTP_VERB = { create: "POST", update: "PUT", patch: "PATCH", delete: "DELETE", get: "GET", list: "LIST", watch: "WATCH" };

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
export function rowFor(event, focus) {
  const base = { seq: event.seq, t: event.t, event };
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
      const targets = [...new Set((event.to ?? []).map((c) => laneOf(c, event.node, focus)))].filter((l) => l !== APISERVER);
      if (!targets.length) return null;
      return { ...base, kind: "watch", from: APISERVER, targets, label: `${event.resource}/${event.name}`, node: event.node };
    }
    case "decision": {
      const lane = laneOf(event.component, event.node, focus);
      if (event.node && event.node !== focus) return null;
      // The pass summary says what the pass concluded about the focused node.
      const record = event.rule === "nlc.monitor-pass" ? event.nodes?.[focus] ?? null : null;
      return { ...base, kind: "decision", lane, label: event.rule ?? "", outcome: event.outcome, node: event.node, record };
    }
    case "fault":
      return { ...base, kind: "note", label: [event.action, event.node ?? event.zone ?? event.resource ?? ""].filter(Boolean).join(" ") };
    default:
      return null;
  }
}

/**
 * Rows kept for scroll-back. Indices only grow (a row keeps its y for ever) until the oldest
 * chunk is dropped, which shifts every index by the same amount (`dropped`), once per chunk.
 */
export class SequenceModel {
  constructor({ max = 6000, chunk = 1000 } = {}) {
    this.max = max;
    this.chunk = chunk;
    this.rows = [];
    this.dropped = 0; // rows discarded since the start: the view keeps its scroll position with it
  }

  push(event, focus) {
    const row = rowFor(event, focus);
    if (!row) return null;
    this.rows.push(row);
    if (this.rows.length > this.max) {
      this.rows.splice(0, this.chunk);
      this.dropped += this.chunk;
    }
    return row;
  }

  /** Rebuilds the rows for a new focus (a user action, not a per-event cost). */
  rebuild(events, focus) {
    this.rows = [];
    for (const e of events) this.push(e, focus);
    this.dropped = 0;
  }

  /** Rows with index in [from, to). */
  slice(from, to) {
    return this.rows.slice(Math.max(0, from), Math.max(0, to));
  }
}
