// @ts-check
// What the live sequence diagram draws, decided without touching the DOM: the lanes, and for
// each event the row it becomes (a request arrow, a watch delivery, a lost request, a
// controller decision or a trainer's fault note). The view only positions these rows.

export const APISERVER = "kube-apiserver";

/** Lanes, left to right: the focused node's two heartbeat paths next to the API server. */
export const LANES = [
  { id: "other-kubelets", components: [] },
  { id: "kubelet-lease", components: ["kubelet-lease"] },
  { id: "kubelet-status", components: ["kubelet-status", "kubelet", "kubelet-volume-manager"] },
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

// A run with StatefulSets and volumes draws three more lanes: the StatefulSet controller, the
// attach/detach controller (with the PersistentVolume binder), and Pod GC taken out of the
// workload lane (its force deletes are half of the story there). A narrow panel groups the three
// into one lane. A run without volumes never draws them (volumes.js hasVolumes).
const VOLUME_COMPONENTS = {
  "statefulset-controller": ["statefulset-controller"],
  "volume-controllers": ["attachdetach-controller", "csi-attacher", "persistentvolume-controller", "csi-provisioner"],
  "pod-garbage-collector": ["pod-garbage-collector"],
};
const WORKLOADS_WITHOUT_PODGC = ["replicaset-controller", "daemonset-controller", "garbage-collector"];

const WITH_VOLUMES_BASE = LANES.map((lane) => (lane.id === "workload-controllers"
  ? { ...lane, components: WORKLOADS_WITHOUT_PODGC, label: "workload-controllers-without-podgc" } : lane));
const WITH_VOLUMES = [...WITH_VOLUMES_BASE, ...Object.entries(VOLUME_COMPONENTS).map(([id, components]) => ({ id, components }))];
const WITH_VOLUMES_GROUPED = [...WITH_VOLUMES_BASE,
  { id: "stateful-controllers", components: Object.values(VOLUME_COMPONENTS).flat() }];

/** The lanes to draw (the same array for the same question): `volumes` adds the StatefulSet and
 *  volume lanes, one grouped lane when `compact`. */
export function lanesFor({ volumes = false, compact = false } = {}) {
  if (!volumes) return LANES;
  return compact ? WITH_VOLUMES_GROUPED : WITH_VOLUMES;
}

// The trainer's own requests (kubectl delete --force, kubectl taint, cordon) come from outside the
// cluster: drawn from the diagram's left edge, not from a controller's lane.
export const TRAINER = "trainer";

/** Every lane any run can draw (the Mermaid export names its participants from these). */
export const ALL_LANES = [{ id: TRAINER, components: [TRAINER] }, ...WITH_VOLUMES, WITH_VOLUMES_GROUPED.at(-1)];

const KUBELET_COMPONENTS = new Set(["kubelet-lease", "kubelet-status", "kubelet", "kubelet-volume-manager"]);
const laneMap = (lanes) => new Map(lanes.flatMap((lane) => lane.components.map((c) => [c, lane.id])));
const LANE_OF_COMPONENT = laneMap(LANES);
const LANE_MAPS = new WeakMap([[LANES, LANE_OF_COMPONENT]]);

/** Lane of an event's component; another node's kubelet folds into "other kubelets". */
export function laneOf(component, node, focus, lanes = LANES) {
  if (KUBELET_COMPONENTS.has(component) && node !== focus) return "other-kubelets";
  if (component === TRAINER) return TRAINER;
  let map = LANE_MAPS.get(lanes);
  if (!map) LANE_MAPS.set(lanes, (map = laneMap(lanes)));
  return map.get(component) ?? "workload-controllers";
}

// Decisions of these controllers are drawn whatever node they are about: a pod's volume is
// attached on one node and waited for on another, and they are few.
export const VOLUME_DECIDERS = new Set(Object.values(VOLUME_COMPONENTS).flat());

const HTTP_VERB = {
  create: "POST", update: "PUT", patch: "PATCH", delete: "DELETE", get: "GET", list: "LIST", watch: "WATCH",
};

// Generated names too long for an arrow: a VolumeAttachment's csi-<sha256> (csi_attacher.go
// getAttachmentName) and a provisioned volume's pvc-<claim uid>; the arrow shows their start.
const LONG_NAME = /^((?:csi-[0-9a-f]{8})|(?:pvc-[0-9a-f]{8}))[0-9a-f-]{20,}$/;

/** A generated name cut to its start ("csi-4068fa98…"), other names as they are. */
export function shortName(name) {
  const m = LONG_NAME.exec(name ?? "");
  return m ? `${m[1]}…` : name;
}

/** "PUT leases/node-2", "PATCH nodes/node-2/status": what the request line of the arrow says. */
export function requestLabel(event, { short = false } = {}) {
  const verb = HTTP_VERB[event.verb] ?? String(event.verb ?? "").toUpperCase();
  const path = [event.resource, short ? shortName(event.name) : event.name, event.subresource].filter(Boolean).join("/");
  return `${verb} ${path}`;
}

/**
 * The row an event becomes, or null when the sequence diagram does not draw it (transitions go
 * to the timeline; decisions about other nodes would drown the focused one).
 */
export function rowFor(event, focus, aggregate = false, lanes = LANES) {
  const base = { seq: event.seq, t: event.t, event };
  // A large cluster counts other kubelets' requests per zone (zone-traffic.js) instead.
  if (aggregate && (event.type === "write" || event.type === "read" || event.type === "request-failed")
      && laneOf(event.component, event.node, focus, lanes) === "other-kubelets") return null;
  switch (event.type) {
    case "write":
    case "read": {
      const from = laneOf(event.component, event.node, focus, lanes);
      const failed = event.code >= 400;
      const label = requestLabel(event, { short: true });
      return { ...base, kind: "request", from, to: APISERVER, label: from === TRAINER ? `kubectl: ${label}` : label,
        code: event.code, failed, node: event.node, other: from === "other-kubelets", read: event.type === "read" };
    }
    case "request-failed":
      return { ...base, kind: "lost", from: laneOf(event.component, event.node, focus, lanes), to: APISERVER,
        label: requestLabel(event), node: event.node, other: event.node !== focus };
    case "watch": {
      // Deliveries to other kubelets are theirs to count too, when they are counted per zone.
      const targets = [...new Set((event.to ?? []).map((c) => laneOf(c, event.node, focus, lanes)))]
        .filter((l) => l !== APISERVER && !(aggregate && l === "other-kubelets"));
      if (!targets.length) return null;
      return {
        ...base, kind: "watch", from: APISERVER, targets, label: `${event.resource}/${event.name}`, node: event.node,
      };
    }
    case "decision": {
      const lane = laneOf(event.component, event.node, focus, lanes);
      if (event.node && event.node !== focus && !VOLUME_DECIDERS.has(event.component)) return null;
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
  /** @param {import("#js/history.js").EventHistory} history  the events the rows are read from */
  constructor(history) {
    this.history = history;
    this.focus = null;
    this.aggregate = false; // other kubelets' requests counted per zone, not drawn (large clusters)
    this.lanes = LANES; // lanesFor(...): a run with volumes has more (set by the view, then rebuilt)
    this.seqs = new Float64Array(history.capacity);
    this.length = 0;
    this.dropped = 0; // rows discarded since the start: the view keeps its scroll position with it
    this.generation = 0; // counts the changes to the rows (a comparison's time axis places them again then)
  }

  /** Adds the row of an event just added to the history; returns the row, or null if it has none. */
  push(event, focus = this.focus) {
    const row = rowFor(event, focus, this.aggregate, this.lanes);
    if (!row) return null;
    this.#forget();
    this.seqs[this.length++] = event.seq;
    this.generation++;
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
    this.generation++;
    for (let i = 0; i < this.history.length; i++) {
      if (rowFor(this.history.at(i), focus, this.aggregate, this.lanes)) this.seqs[this.length++] = this.history.seq[i];
    }
  }

  seqAt(i) {
    return this.seqs[i];
  }

  /** The virtual time of row `i` (undefined when the history let its event go). */
  tAt(i) {
    if (i < 0 || i >= this.length) return undefined;
    const seq = this.seqs[i];
    const j = this.history.before(seq) + 1; // read from the history's time column: no event object made
    return j < this.history.length && this.history.seq[j] === seq ? this.history.t[j] : undefined;
  }

  /** The row at index `i`, made from its event in the history. */
  row(i) {
    const event = i >= 0 && i < this.length ? this.history.get(this.seqs[i]) : null;
    return event && rowFor(event, this.focus, this.aggregate, this.lanes);
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
