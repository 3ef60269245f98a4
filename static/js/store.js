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
    this.lastSeq = 0;
    this.version = 0; // bumps on every change: panels redraw only when it moved
  }

  /** Replaces everything with a snapshot's `objects` and remembers its `last_seq`. */
  loadSnapshot(snapshot) {
    this.reset();
    for (const [resource, list] of Object.entries(snapshot?.objects ?? {})) {
      const map = this.#map(resource);
      for (const obj of list) map.set(keyOf(obj.metadata?.namespace, obj.metadata?.name), obj);
    }
    this.lastSeq = snapshot?.last_seq ?? 0;
    this.version++;
  }

  /**
   * Applies one event. Returns false for an event already applied (seq <= lastSeq), which is
   * how a resumed stream that overlaps the snapshot stays free of duplicates.
   */
  apply(event) {
    if (event.seq <= this.lastSeq) return false;
    this.lastSeq = event.seq;
    if (event.type !== "write" || !event.object || event.code >= 400) return true;
    const map = this.#map(event.resource);
    const meta = event.object.metadata ?? {};
    const key = keyOf(meta.namespace ?? event.namespace, meta.name ?? event.name);
    if (event.removed) map.delete(key);
    else map.set(key, event.object);
    this.version++;
    return true;
  }

  #map(resource) {
    if (!this.byResource.has(resource)) this.byResource.set(resource, new Map());
    return this.byResource.get(resource);
  }

  list(resource) {
    return [...(this.byResource.get(resource)?.values() ?? [])];
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

  podsOn(nodeName) {
    return this.list("pods").filter((p) => p.spec?.nodeName === nodeName);
  }

  /** core/v1 Events about one object, oldest first (for `kubectl describe`). */
  eventsFor(kind, name) {
    return this.list("events")
      .filter((e) => e.involvedObject?.kind === kind && e.involvedObject?.name === name)
      .sort((a, b) => String(a.lastTimestamp ?? a.eventTime ?? "").localeCompare(String(b.lastTimestamp ?? b.eventTime ?? "")));
  }
}
