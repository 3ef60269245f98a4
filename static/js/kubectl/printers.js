// @ts-check
// Client-side `kubectl` output from the live object store. Each function follows the printer
// kubectl uses (pkg/printers/internalversion/printers.go, kubectl describe.go) so a learner sees
// byte for byte what the real command would print for the same objects.
import { age, rfc1123z } from "#js/kubectl/duration.js";
import { TabWriter, table } from "#js/kubectl/tabwriter.js";
import { toYaml } from "#js/kubectl/yaml.js";
import {
  byNamespacedName, isTerminal, nameOf, nodeRoles, nodeStatus, podIP, taintString,
} from "#js/k8s.js";

/** kubectl get nodes */
export function getNodes(nodes, nowMs) {
  return resourceTable(nodes, ["NAME", "STATUS", "ROLES", "AGE", "VERSION"], (node) => [nameOf(node),
    nodeStatus(node), nodeRoles(node).join(",") || "<none>", age(node.metadata?.creationTimestamp, nowMs),
    node.status?.nodeInfo?.kubeletVersion ?? ""], null);
}

/** The objects a list of one namespace (all of a cluster-scoped resource: null) has, in the API's order. */
function listed(objects, namespace) {
  return (namespace === null ? [...objects]
    : objects.filter((o) => (o.metadata?.namespace ?? "default") === namespace)).sort(byNamespacedName);
}

/**
 * A `kubectl get` table of one resource: `namespace` null for a cluster-scoped one. Rows sorted by
 * namespace and name, as the API server lists them; no objects is kubectl's "No resources found".
 */
function resourceTable(objects, headers, cells, namespace) {
  const mine = listed(objects, namespace);
  if (!mine.length) {
    return namespace === null ? "No resources found\n" : `No resources found in ${namespace} namespace.\n`;
  }
  return table([headers, ...mine.map(cells)]);
}

/** STATUS column of printPod. */
export function podStatusReason(pod) {
  let reason = pod.status?.reason || pod.status?.phase || "";
  const statuses = pod.status?.containerStatuses ?? [];
  let hasRunning = false;
  for (let i = statuses.length - 1; i >= 0; i--) {
    const state = statuses[i].state ?? {};
    if (state.waiting?.reason) reason = state.waiting.reason;
    else if (state.terminated?.reason) reason = state.terminated.reason;
    else if (state.terminated) {
      reason = state.terminated.signal ? `Signal:${state.terminated.signal}`
        : `ExitCode:${state.terminated.exitCode ?? 0}`;
    } else if (statuses[i].ready && state.running) hasRunning = true;
  }
  if (reason === "Completed" && hasRunning) {
    reason = (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
      ? "Running" : "NotReady";
  }
  if (pod.metadata?.deletionTimestamp && pod.status?.reason === "NodeLost") return "Unknown";
  if (pod.metadata?.deletionTimestamp && !isTerminal(pod)) return "Terminating";
  return reason;
}

/** READY column: containers that are ready and running, over the spec's containers. */
export function podReadyColumn(pod) {
  const total = pod.spec?.containers?.length ?? 0;
  const ready = (pod.status?.containerStatuses ?? [])
    .filter((c) => c.ready && c.state?.running && !c.state?.terminated && !c.state?.waiting).length;
  return `${ready}/${total}`;
}

function restarts(pod, nowMs) {
  let count = 0;
  let last = null;
  for (const c of pod.status?.containerStatuses ?? []) {
    count += c.restartCount ?? 0;
    const finished = c.lastState?.terminated?.finishedAt;
    if (finished && (!last || finished > last)) last = finished;
  }
  return count && last ? `${count} (${age(last, nowMs)} ago)` : String(count);
}

/** kubectl get pods -o wide (namespace `default`, like a bare `kubectl get pods`). */
export function getPodsWide(pods, nowMs, namespace = "default") {
  const headers = ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"];
  return resourceTable(pods, headers, (pod) => {
    const gates = pod.spec?.readinessGates ?? [];
    let gatesText = "<none>";
    if (gates.length) {
      const ok = gates.filter((g) => (pod.status?.conditions ?? [])
        .some((c) => c.type === g.conditionType && c.status === "True")).length;
      gatesText = `${ok}/${gates.length}`;
    }
    return [nameOf(pod), podReadyColumn(pod), podStatusReason(pod), restarts(pod, nowMs),
      age(pod.metadata?.creationTimestamp, nowMs), podIP(pod) || "<none>", pod.spec?.nodeName || "<none>",
      pod.status?.nominatedNodeName || "<none>", gatesText];
  }, namespace);
}

function listWithMore(list, more, count, max) {
  const text = list.join(",");
  if (more) return `${text} + ${count - max} more...`;
  return text || "<unset>";
}

function slicePorts(ports) {
  const list = [];
  let more = false;
  for (const port of ports ?? []) {
    if (list.length < 3) list.push(port.port != null ? String(port.port) : port.name ?? "*");
    else more = true;
  }
  return listWithMore(list, more, (ports ?? []).length, 3);
}

function sliceEndpoints(endpoints) {
  const list = [];
  let more = false;
  let count = 0;
  for (const endpoint of endpoints ?? []) {
    for (const address of endpoint.addresses ?? []) {
      if (list.length < 3) list.push(address);
      else more = true;
      count++;
    }
  }
  return listWithMore(list, more, count, 3);
}

/** kubectl get endpointslices (namespace `default`). */
export function getEndpointSlices(slices, nowMs, namespace = "default") {
  return resourceTable(slices, ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"], (slice) => [nameOf(slice),
    slice.addressType ?? "", slicePorts(slice.ports), sliceEndpoints(slice.endpoints),
    age(slice.metadata?.creationTimestamp, nowMs)], namespace);
}

/** kubectl get lease -n kube-node-lease <node> -o yaml */
export function leaseYaml(lease, nodeName) {
  if (!lease) return `Error from server (NotFound): leases.coordination.k8s.io "${nodeName}" not found\n`;
  return toYaml(lease);
}

// --- StatefulSets and storage (printStatefulSet, printPersistentVolumeClaim, printPersistentVolume,
// printVolumeAttachment; the server's Tables print the same columns: heartbeat_site/k8sapi/tables.py) ---

// helper.GetAccessModesAsString: always RWO, ROX, RWX, RWOP in this order, each once.
const ACCESS_MODES = [["ReadWriteOnce", "RWO"], ["ReadOnlyMany", "ROX"], ["ReadWriteMany", "RWX"],
  ["ReadWriteOncePod", "RWOP"]];
function accessModes(modes) {
  const present = new Set(modes ?? []);
  return ACCESS_MODES.filter(([mode]) => present.has(mode)).map(([, short]) => short).join(",");
}

// helper.GetPersistentVolume(Claim)Class: the beta annotation wins over spec.storageClassName.
function storageClass(obj) {
  const annotations = obj.metadata?.annotations ?? {};
  const beta = "volume.beta.kubernetes.io/storage-class";
  return beta in annotations ? annotations[beta] : obj.spec?.storageClassName ?? "";
}

// A claim's or volume's STATUS: its phase, or Terminating once deleted.
const storagePhase = (obj) => (obj.metadata?.deletionTimestamp ? "Terminating" : obj.status?.phase ?? "");

/** kubectl get statefulsets [-o wide] (namespace `default`): READY is ready of desired replicas. */
export function getStatefulSets(statefulsets, nowMs, { wide = false, namespace = "default" } = {}) {
  const headers = ["NAME", "READY", "AGE", ...(wide ? ["CONTAINERS", "IMAGES"] : [])];
  return resourceTable(statefulsets, headers, (sts) => {
    const containers = sts.spec?.template?.spec?.containers ?? [];
    const row = [nameOf(sts), `${sts.status?.readyReplicas ?? 0}/${sts.spec?.replicas ?? 0}`,
      age(sts.metadata?.creationTimestamp, nowMs)];
    if (wide) row.push(containers.map((c) => c.name ?? "").join(","), containers.map((c) => c.image ?? "").join(","));
    return row;
  }, namespace);
}

/** kubectl get pvc (namespace `default`): CAPACITY and ACCESS MODES are the bound volume's, empty until bound. */
export function getPersistentVolumeClaims(claims, nowMs, namespace = "default") {
  const headers = ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS",
    "AGE"];
  return resourceTable(claims, headers, (claim) => {
    const bound = Boolean(claim.spec?.volumeName);
    return [nameOf(claim), storagePhase(claim), claim.spec?.volumeName ?? "",
      bound ? claim.status?.capacity?.storage ?? "0" : "", bound ? accessModes(claim.status?.accessModes) : "",
      storageClass(claim), claim.spec?.volumeAttributesClassName || "<unset>",
      age(claim.metadata?.creationTimestamp, nowMs)];
  }, namespace);
}

/** kubectl get pv (cluster-scoped): CLAIM is <namespace>/<name> of its claimRef. */
export function getPersistentVolumes(volumes, nowMs) {
  const headers = ["NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS",
    "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"];
  return resourceTable(volumes, headers, (pv) => {
    const claim = pv.spec?.claimRef;
    return [nameOf(pv), pv.spec?.capacity?.storage ?? "0", accessModes(pv.spec?.accessModes),
      pv.spec?.persistentVolumeReclaimPolicy ?? "", storagePhase(pv),
      claim ? `${claim.namespace ?? ""}/${claim.name ?? ""}` : "", storageClass(pv),
      pv.spec?.volumeAttributesClassName || "<unset>", pv.status?.reason ?? "",
      age(pv.metadata?.creationTimestamp, nowMs)];
  }, null);
}

/** kubectl get volumeattachments (cluster-scoped). */
export function getVolumeAttachments(attachments, nowMs) {
  return resourceTable(attachments, ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"], (va) => [
    nameOf(va), va.spec?.attacher ?? "", va.spec?.source?.persistentVolumeName ?? "", va.spec?.nodeName ?? "",
    String(Boolean(va.status?.attached)), age(va.metadata?.creationTimestamp, nowMs)], null);
}

/**
 * kubectl get <resource> -o yaml: the objects as a v1 List (what kubectl prints for a list, one object or
 * none), each item with its apiVersion and kind, sorted as the API server lists them. `namespace` null for
 * a cluster-scoped resource.
 */
export function listYaml(objects, { apiVersion, kind }, namespace = "default") {
  const items = listed(objects, namespace).map((/** @type {{metadata?: {managedFields?: unknown}}} */ {
    metadata: { managedFields, ...metadata } = {}, ...o }) => (
    { ...o, apiVersion, kind, metadata }));
  return toYaml({ apiVersion: "v1", items, kind: "List", metadata: { resourceVersion: "" } });
}

// --- kubectl describe node --------------------------------------------------------------

function multiline(w, title, entries) {
  if (!entries.length) {
    w.write(`${title}:\t<none>\n`);
    return;
  }
  entries.forEach((entry, i) => w.write(i === 0 ? `${title}:\t${entry}\n` : `\t${entry}\n`));
}

// Quantities arrive as strings ("4", "16Gi", "100m"); millicores are enough for percentages.
function milli(quantity) {
  if (quantity === undefined || quantity === null) return 0;
  const text = String(quantity);
  const units = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
  const match = text.match(/^([0-9.]+)([a-zA-Z]*)$/);
  if (!match) return 0;
  return Number(match[1]) * (units[match[2]] ?? 1) * 1000;
}

function sumQuantity(pods, kind, resource) {
  let total = 0;
  let sample = "0";
  for (const pod of pods) {
    for (const c of pod.spec?.containers ?? []) {
      const q = c.resources?.[kind]?.[resource];
      if (q !== undefined) {
        total += milli(q);
        sample = q;
      }
    }
  }
  return { milli: total, text: total ? formatLike(total, sample) : "0" };
}

function formatLike(totalMilli, sample) {
  const text = String(sample);
  if (text.endsWith("m")) return `${Math.round(totalMilli)}m`;
  /** @type {[string, number][]} */
  const units = [["Gi", 1024 ** 3], ["Mi", 1024 ** 2], ["Ki", 1024]];
  for (const [unit, factor] of units) {
    if (text.endsWith(unit)) return `${Math.round(totalMilli / 1000 / factor)}${unit}`;
  }
  return String(Math.round(totalMilli / 1000));
}

const pct = (part, whole) => (whole ? Math.trunc((part / whole) * 100) : 0);

function describeNodeResource(w, node, pods, nowMs) {
  const allocatable = Object.keys(node.status?.allocatable ?? {}).length ? node.status.allocatable
    : node.status?.capacity ?? {};
  const cpuAlloc = milli(allocatable.cpu);
  const memAlloc = milli(allocatable.memory);
  w.write(`Non-terminated Pods:\t(${pods.length} in total)\n`);
  w.write("  Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n");
  w.write("  ---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n");
  for (const pod of pods) {
    const cr = sumQuantity([pod], "requests", "cpu");
    const cl = sumQuantity([pod], "limits", "cpu");
    const mr = sumQuantity([pod], "requests", "memory");
    const ml = sumQuantity([pod], "limits", "memory");
    w.write(`  ${pod.metadata?.namespace ?? "default"}\t${nameOf(pod)}\t\t${cr.text} (${pct(cr.milli, cpuAlloc)}%)\t` +
      `${cl.text} (${pct(cl.milli, cpuAlloc)}%)\t${mr.text} (${pct(mr.milli, memAlloc)}%)\t` +
      `${ml.text} (${pct(ml.milli, memAlloc)}%)\t` +
      `${age(pod.metadata?.creationTimestamp, nowMs)}\n`);
  }
  const cr = sumQuantity(pods, "requests", "cpu");
  const cl = sumQuantity(pods, "limits", "cpu");
  const mr = sumQuantity(pods, "requests", "memory");
  const ml = sumQuantity(pods, "limits", "memory");
  w.write("Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n");
  w.write("  Resource\tRequests\tLimits\n");
  w.write("  --------\t--------\t------\n");
  w.write(`  cpu\t${cr.text} (${pct(cr.milli, cpuAlloc)}%)\t${cl.text} (${pct(cl.milli, cpuAlloc)}%)\n`);
  w.write(`  memory\t${mr.text} (${pct(mr.milli, memAlloc)}%)\t${ml.text} (${pct(ml.milli, memAlloc)}%)\n`);
  w.write("  ephemeral-storage\t0 (0%)\t0 (0%)\n");
}

function describeEvents(w, events, nowMs) {
  if (!events.length) {
    w.write("Events:\t<none>\n");
    return;
  }
  w.write("Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
  w.write("  ----\t------\t----\t----\t-------\n");
  for (const e of events) {
    const first = age(e.eventTime || e.firstTimestamp || e.metadata?.creationTimestamp, nowMs);
    const interval = (e.count ?? 1) > 1 ? `${age(e.lastTimestamp, nowMs)} (x${e.count} over ${first})` : first;
    const source = e.source?.component || e.reportingComponent || "";
    w.write(`  ${e.type}\t${e.reason}\t${interval}\t${source}\t${(e.message ?? "").trim()}\n`);
  }
}

// kubectl sorts the resource names of Capacity/Allocatable (SortableResourceNames: by name).
const sortedEntries = (list) => Object.entries(list ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * kubectl describe node <name>. `pods`: every pod in the store; `events`: core/v1 Events whose
 * involvedObject is this node, oldest first.
 */
export function describeNode(node, lease, pods, events, nowMs) {
  if (!node) return "";
  const w = new TabWriter({ minwidth: 0, padding: 2 });
  const labels = node.metadata?.labels ?? {};
  const annotations = node.metadata?.annotations ?? {};
  w.write(`Name:\t${nameOf(node)}\n`);
  w.write(`Roles:\t${nodeRoles(node).join(",") || "<none>"}\n`);
  multiline(w, "Labels", Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`));
  multiline(w, "Annotations", Object.keys(annotations).sort().map((k) => `${k}: ${annotations[k]}`));
  w.write(`CreationTimestamp:\t${rfc1123z(node.metadata?.creationTimestamp)}\n`);
  const taints = [...(node.spec?.taints ?? [])].sort((a, b) => {
    const ka = `${a.effect},${a.key}`;
    const kb = `${b.effect},${b.key}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  multiline(w, "Taints", taints.map(taintString));
  w.write(`Unschedulable:\t${Boolean(node.spec?.unschedulable)}\n`);
  if (lease) {
    w.write("Lease:\n");
    w.write(`  HolderIdentity:\t${lease.spec?.holderIdentity ?? "<unset>"}\n`);
    w.write(`  AcquireTime:\t${lease.spec?.acquireTime ? rfc1123z(lease.spec.acquireTime) : "<unset>"}\n`);
    w.write(`  RenewTime:\t${lease.spec?.renewTime ? rfc1123z(lease.spec.renewTime) : "<unset>"}\n`);
  }
  const conditions = node.status?.conditions ?? [];
  if (conditions.length) {
    w.write("Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n");
    w.write("  ----\t------\t-----------------\t------------------\t------\t-------\n");
    for (const c of conditions) {
      w.write(`  ${c.type} \t${c.status} \t${rfc1123z(c.lastHeartbeatTime)} \t${rfc1123z(c.lastTransitionTime)} \t` +
        `${c.reason ?? ""} \t${c.message ?? ""}\n`);
    }
  }
  w.write("Addresses:\n");
  for (const a of node.status?.addresses ?? []) w.write(`  ${a.type}:\t${a.address}\n`);
  if (Object.keys(node.status?.capacity ?? {}).length) {
    w.write("Capacity:\n");
    for (const [k, v] of sortedEntries(node.status.capacity)) w.write(`  ${k}:\t${v}\n`);
  }
  if (Object.keys(node.status?.allocatable ?? {}).length) {
    w.write("Allocatable:\n");
    for (const [k, v] of sortedEntries(node.status.allocatable)) w.write(`  ${k}:\t${v}\n`);
  }
  const info = node.status?.nodeInfo ?? {};
  w.write("System Info:\n");
  for (const [label, key] of [["Machine ID", "machineID"], ["System UUID", "systemUUID"], ["Boot ID", "bootID"],
    ["Kernel Version", "kernelVersion"], ["OS Image", "osImage"], ["Operating System", "operatingSystem"],
    ["Architecture", "architecture"], ["Container Runtime Version", "containerRuntimeVersion"],
    ["Kubelet Version", "kubeletVersion"], ["Kube-Proxy Version", "kubeProxyVersion"]]) {
    w.write(`  ${label}:\t${info[key] ?? ""}\n`);
  }
  if (node.spec?.podCIDR) w.write(`PodCIDR:\t${node.spec.podCIDR}\n`);
  if (node.spec?.podCIDRs?.length) w.write(`PodCIDRs:\t${node.spec.podCIDRs.join(",")}\n`);
  if (node.spec?.providerID) w.write(`ProviderID:\t${node.spec.providerID}\n`);
  const onNode = pods.filter((p) => p.spec?.nodeName === nameOf(node) && !isTerminal(p)).sort(byNamespacedName);
  describeNodeResource(w, node, onNode, nowMs);
  describeEvents(w, events, nowMs);
  return w.flush();
}
