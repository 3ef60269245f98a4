// @ts-check
// What the controllers know that is not in the objects: the node lifecycle controller's zone
// states, token buckets and queues, the taint eviction controller's scheduled deletions and the
// kubelets' fault flags. Seeded from the snapshot, then kept current from decision, transition
// and fault events.
import { evictionDecision, nameOf, taintsOf } from "#js/k8s.js";

const podKey = (pod) => (pod && !pod.includes("/") ? `default/${pod}` : pod);

// Fault actions and the action that undoes each one: the cluster view shows what is broken.
export const FAULT_REVERSE = {
  "stop-kubelet": "start-kubelet",
  "stop-runtime": "start-runtime",
  partition: "heal",
  "start-pressure": "stop-pressure",
  "fail-lease-writes": "restore-lease-writes",
  "fail-status-writes": "restore-status-writes",
  "slow-apiserver": "restore-apiserver",
  "power-off": "power-on",
  shutdown: "power-on",
  cordon: "uncordon",
  "zone-outage": "zone-heal",
  "taint-out-of-service": "untaint-out-of-service",
};
// The attach/detach controller's decision rules (simulation/attachdetach.py): which wait for
// maxWaitForUnmountDuration, and which detach (and how the volume came free).
const ATTACH_DETACH = new Set(["attachdetach-controller"]);
const DETACH_RULES = {
  "attachdetach.detach": "safe",
  "attachdetach.force-detach-out-of-service": "out-of-service",
  "attachdetach.force-detach-timeout": "timeout",
};
const UNDOES = Object.fromEntries(Object.entries(FAULT_REVERSE).map(([a, b]) => [b, a]));

const pick = (inputs, ...names) => {
  for (const n of names) if (inputs?.[n] !== undefined && inputs[n] !== null) return inputs[n];
  return undefined;
};

export class ControllerState {
  constructor() {
    this.loadSnapshot({});
  }

  loadSnapshot(snapshot) {
    const nlc = snapshot?.nodeLifecycle ?? {};
    this.gracePeriod = nlc.gracePeriod ?? 50;
    this.nextPass = nlc.nextPass ?? null;
    this.nodes = structuredClone(nlc.nodes ?? {});
    this.zones = structuredClone(nlc.zones ?? {});
    this.evictions = new Map(Object.entries(snapshot?.taintEviction?.pods ?? {})
      .map(([k, v]) => [podKey(k), { ...v }]));
    this.kubelets = structuredClone(snapshot?.kubelets ?? {});
    this.activeFaults = new Map(); // node or zone or "" -> Set of actions in force
    this.lastPass = new Map(); // node -> {t, record, decisions} of the NLC's latest monitor pass
    this.passBuffer = new Map(); // node -> decisions of the pass in progress
    // The attach/detach controller: force-detach countdowns ("pv@node" -> {scheduledAt, fireAt}) and
    // how each volume last left a node (pv -> "safe" | "out-of-service" | "timeout").
    this.detaches = new Map();
    for (const a of snapshot?.storage?.attachDetach?.attached ?? []) {
      // a wait running when the snapshot was taken (simulation/attachdetach.py describe)
      if (a.mountedByNode && typeof a.forceDetachAt === "number") {
        this.detaches.set(`${a.persistentVolume}@${a.node}`, { scheduledAt: a.detachRequestedAt, fireAt: a.forceDetachAt });
      }
    }
    this.detached = new Map();
    this.version = (this.version ?? 0) + 1;
    this.zonesVersion = (this.zonesVersion ?? 0) + 1; // bumps when a zone's state or limiter may have changed
  }

  apply(event) {
    switch (event.type) {
      case "decision":
        this.#decision(event);
        break;
      case "transition":
        this.#transition(event);
        break;
      case "fault":
        this.#fault(event);
        break;
      case "write":
        this.#write(event);
        break;
      default:
        return;
    }
    this.version++;
  }

  #decision(event) {
    const inputs = event.inputs ?? {};
    if (event.component === "node-lifecycle-controller") {
      if (event.rule === "nlc.monitor-pass") this.#monitorPass(event);
      else if (event.node) {
        // Per-node decisions come during the pass; its summary (nlc.monitor-pass) closes it.
        if (!this.passBuffer.has(event.node)) this.passBuffer.set(event.node, []);
        this.passBuffer.get(event.node).push(event);
      }
      const zone = pick(inputs, "zone");
      if (zone !== undefined && this.zones[zone === "(unlabelled)" ? "" : zone]) {
        const z = this.zones[zone === "(unlabelled)" ? "" : zone];
        for (const k of ["tokens", "rate", "queue"]) if (inputs[k] !== undefined) z[k] = inputs[k];
        if (typeof inputs.zoneState === "string") z.state = inputs.zoneState;
        this.zonesVersion++;
      }
    }
    if (ATTACH_DETACH.has(event.component)) this.#attachDetach(event);
    if (event.component === "taint-eviction-controller" && event.pod) {
      const key = podKey(event.pod);
      const fireAt = pick(inputs, "fireAt", "fire_at");
      const outcome = String(event.outcome ?? "");
      if (/cancel|forever|never/i.test(outcome) || /cancel/.test(event.rule ?? "")) this.evictions.delete(key);
      else if (typeof fireAt === "number") {
        const scheduledAt = this.evictions.get(key)?.scheduledAt
          ?? pick(inputs, "scheduledAt", "observedAt") ?? event.t;
        this.evictions.set(key, { node: event.node, scheduledAt, fireAt });
      }
    }
  }

  /**
   * The attach/detach controller's decisions about a volume on a node: the wait for
   * maxWaitForUnmountDuration starts a countdown, a detach ends it and says which way it went.
   */
  #attachDetach(event) {
    const inputs = event.inputs ?? {};
    const pv = pick(inputs, "persistentVolume");
    const node = event.node;
    if (!pv || !node) return;
    const key = `${pv}@${node}`;
    const rule = String(event.rule ?? "");
    const how = DETACH_RULES[rule];
    if (how) {
      this.detaches.delete(key);
      this.detached.set(pv, how);
      return;
    }
    // The wait for the kubelet to unmount: a countdown where the timeout may force the detach
    // (--disable-force-detach-on-timeout not set; the pages show it while the node is not Ready).
    if (rule === "attachdetach.wait-unmount" && !inputs.disableForceDetachOnTimeout) {
      const since = pick(inputs, "detachRequestedAt") ?? event.t;
      const fireAt = pick(inputs, "forceDetachAt") ?? since + (pick(inputs, "maxWaitForUnmountDuration") ?? 360);
      this.detaches.set(key, { scheduledAt: since, fireAt });
    }
  }

  /** The force-detach countdown of a volume on a node, or null (volumes.js forceDetachOf reads it). */
  detachOf(pv, node) {
    return this.detaches.get(`${pv}@${node}`) ?? null;
  }

  /** How the volume last left a node, as the page saw it ("safe", "out-of-service", "timeout"), or null. */
  detachedHow(pv) {
    return this.detached.get(pv) ?? null;
  }

  /** The pass summary carries every node's health record and every zone's limiter state. */
  #monitorPass(event) {
    if (typeof event.inputs?.gracePeriod === "number") this.gracePeriod = event.inputs.gracePeriod;
    for (const [zone, z] of Object.entries(event.zones ?? {})) this.zones[zone] = { ...z };
    this.zonesVersion++;
    for (const [name, record] of Object.entries(event.nodes ?? {})) {
      this.nodes[name] = { ...(this.nodes[name] ?? {}), ...record };
      this.lastPass.set(name, { t: event.t, record, decisions: this.passBuffer.get(name) ?? [] });
    }
    this.passBuffer.clear();
  }

  #transition(event) {
    if (event.kind === "zone-state" && event.key !== undefined) {
      const z = (this.zones[event.key] ??= { queue: [] });
      z.state = event.to;
      this.zonesVersion++;
    }
    if ((event.kind === "pod-deleted" || event.kind === "pod-terminating") && event.pod) {
      this.evictions.delete(podKey(event.pod));
    }
  }

  #fault(event) {
    const action = event.action;
    const scope = event.node ?? event.zone ?? "";
    if (UNDOES[action]) {
      const set = this.activeFaults.get(scope);
      set?.delete(UNDOES[action]);
      if (action === "power-on") set?.delete("shutdown");
      if (action === "stop-pressure") set?.delete(`start-pressure:${event.resource}`);
    } else if (FAULT_REVERSE[action]) {
      if (!this.activeFaults.has(scope)) this.activeFaults.set(scope, new Set());
      this.activeFaults.get(scope).add(action === "start-pressure" ? `start-pressure:${event.resource}` : action);
    }
  }

  #write(event) {
    if (!event.node || event.code >= 400) return;
    const k = (this.kubelets[event.node] ??= {});
    if (event.component === "kubelet-lease" && event.resource === "leases") k.lastRenew = event.t;
    if (event.component === "kubelet-status" && event.resource === "nodes") k.lastStatusReport = event.t;
  }

  faultsOf(scope) {
    return [...(this.activeFaults.get(scope) ?? [])];
  }

  /**
   * The eviction countdown of a pod: the TEC's own schedule when a decision told us, else what
   * its algorithm would choose from the node's current NoExecute taints (marked estimated).
   */
  evictionOf(pod, node, secondsOf) {
    const key = `${pod.metadata?.namespace ?? "default"}/${nameOf(pod)}`;
    const known = this.evictions.get(key);
    // Taints gone means the controller cancelled every deletion on the node (it logs no decision).
    const stillTainted = taintsOf(node).some((t) => t.effect === "NoExecute");
    if (known && stillTainted) return { fireAt: known.fireAt, scheduledAt: known.scheduledAt, estimated: false };
    if (!node || !stillTainted || pod.metadata?.deletionTimestamp) return null;
    const decision = evictionDecision(pod, taintsOf(node));
    if (decision.kind !== "after") return decision.kind === "never" ? { never: true } : null;
    const added = decision.picks.map((p) => secondsOf(p.taint.timeAdded)).filter((s) => s !== null);
    if (!added.length) return null;
    const from = Math.min(...added);
    return { fireAt: from + decision.seconds, scheduledAt: from, estimated: true };
  }
}
