// @ts-check
// The page's copy of the cluster: the snapshot's objects, then every `write` event applied in
// seq order (replace by resource/namespace/name, remove when `removed`). Everything the panels
// draw is read from here, so a viewer that joins late sees exactly what the others see.

const RESOURCES = ["nodes", "leases", "pods", "services", "endpointslices", "events"];

const keyOf = (namespace, name) => `${namespace ?? ""}/${name}`;

export class ObjectStore {
  constructor() {
    this.reset();
  }

  reset() {
    this.byResource = new Map(RESOURCES.map((r) => [r, new Map()]));
    this.podIndex = new Map(); // spec.nodeName ("" when unscheduled) -> Map(key -> pod)
    this.lastSeq = 0;
    this.version = 0; // bumps on every change: panels redraw only when it moved
    this.nodesVersion = 0; // bumps when a Node object changes
  }

  /** Replaces everything with a snapshot's `objects` and remembers its `last_seq`. */
  loadSnapshot(snapshot) {
    this.reset();
    for (const [resource, list] of Object.entries(snapshot?.objects ?? {})) {
      for (const obj of list) this.#put(resource, keyOf(obj.metadata?.namespace, obj.metadata?.name), obj);
    }
    this.lastSeq = snapshot?.last_seq ?? 0;
    // Node level (docs/websocket-protocol.md): no pods, counts instead; a node's details on demand.
    this.nodeLevel = snapshot?.detail === "nodes";
    this.serverPodCounts = this.nodeLevel ? new Map(Object.entries(snapshot.podCounts ?? {})) : null;
    this.detailNode = null;
    this.detailSeq = 0;
    this.version++;
  }

  /**
   * What a frame carries besides its events: at node level, Lease renewTimes, the new pod counts
   * of nodes whose pods changed and the opened node's full events (`details`). A frame covers its
   * whole seq range even when it left routine events out, so `lastSeq` moves to its end.
   */
  applyFrameExtras(frame) {
    for (const [node, renewTime] of Object.entries(frame.renewals ?? {})) {
      const lease = this.lease(node);
      if (lease) this.#put("leases", keyOf("kube-node-lease", node), { ...lease, spec: { ...lease.spec, renewTime } });
    }
    for (const [node, counts] of Object.entries(frame.podCounts ?? {})) this.serverPodCounts?.set(node, counts);
    for (const event of frame.details?.[this.detailNode] ?? []) {
      if (event.seq > this.detailSeq) this.#write(event);
    }
    const last = frame.seq?.[1] ?? 0;
    if (last > this.lastSeq) this.lastSeq = last;
    if (frame.renewals || frame.podCounts || frame.details) this.version++;
  }

  /**
   * A node's full objects (the answer to a `detail` request) replace its trimmed Node and Lease;
   * the pods and EndpointSlices of the node opened before are dropped (only one is kept exact).
   */
  loadDetail(answer) {
    if (!this.nodeLevel) return;
    for (const resource of ["pods", "endpointslices"]) {
      for (const key of [...this.#map(resource).keys()]) this.#put(resource, key, null);
    }
    for (const [resource, list] of Object.entries(answer.objects ?? {})) {
      for (const obj of list) this.#put(resource, keyOf(obj.metadata?.namespace, obj.metadata?.name), obj);
    }
    this.detailNode = answer.node;
    this.detailSeq = answer.last_seq ?? 0;
    this.version++;
  }

  /**
   * Applies one event. Returns false for an event already applied (seq <= lastSeq), which is
   * how a resumed stream that overlaps the snapshot stays free of duplicates.
   */
  apply(event) {
    if (event.seq <= this.lastSeq) return false;
    this.lastSeq = event.seq;
    this.#write(event);
    return true;
  }

  /** A write event's object into the store (replaced, or removed when `removed`). */
  #write(event) {
    if (event.type !== "write" || !event.object || event.code >= 400) return;
    const meta = event.object.metadata ?? {};
    const key = keyOf(meta.namespace ?? event.namespace, meta.name ?? event.name);
    this.#put(event.resource, key, event.removed ? null : event.object);
    this.version++;
  }

  /** Stores (or with `obj` null removes) one object, keeping the pods-by-node index current. */
  #put(resource, key, obj) {
    const map = this.#map(resource);
    if (resource === "nodes") this.nodesVersion++;
    if (resource === "pods") {
      const before = map.get(key);
      if (before) this.podIndex.get(before.spec?.nodeName || "")?.delete(key);
      if (obj) {
        const node = obj.spec?.nodeName || "";
        if (!this.podIndex.has(node)) this.podIndex.set(node, new Map());
        this.podIndex.get(node).set(key, obj);
      }
    }
    if (obj) map.set(key, obj);
    else map.delete(key);
  }

  #map(resource) {
    if (!this.byResource.has(resource)) this.byResource.set(resource, new Map());
    return this.byResource.get(resource);
  }

  list(resource) {
    return [...(this.byResource.get(resource)?.values() ?? [])];
  }

  count(resource) {
    return this.byResource.get(resource)?.size ?? 0;
  }

  get(resource, namespace, name) {
    return this.byResource.get(resource)?.get(keyOf(namespace, name)) ?? null;
  }

  node(name) {
    return this.get("nodes", "", name);
  }

  lease(name) {
    return this.get("leases", "kube-node-lease", name);
  }

  /**
   * A node's pods counted by state: {total, ready, notReady, terminating}. On a node-level run
   * (a large cluster: the server sends no pods, docs/websocket-protocol.md) the counts come from
   * the server (`podCounts` of snapshots and frames); otherwise they are counted here.
   */
  podCounts(nodeName) {
    const given = this.serverPodCounts?.get(nodeName ?? "");
    if (given) return given;
    const counts = { total: 0, ready: 0, notReady: 0, terminating: 0 };
    for (const pod of this.podsOn(nodeName)) {
      counts.total++;
      if (pod.metadata?.deletionTimestamp) counts.terminating++;
      else if (pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) counts.ready++;
      else counts.notReady++;
    }
    return counts;
  }

  /** Pods bound to a node ("" for the ones no scheduler placed yet), from the index. */
  podsOn(nodeName) {
    if (nodeName === null || nodeName === undefined) return [];
    return [...(this.podIndex.get(nodeName)?.values() ?? [])];
  }

  /** core/v1 Events about one object, oldest first (for `kubectl describe`). */
  eventsFor(kind, name) {
    return this.list("events")
      .filter((e) => e.involvedObject?.kind === kind && e.involvedObject?.name === name)
      .sort((a, b) => String(a.lastTimestamp ?? a.eventTime ?? "")
        .localeCompare(String(b.lastTimestamp ?? b.eventTime ?? "")));
  }
}
