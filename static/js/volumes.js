// @ts-check
// Volumes as the pages read them: which PersistentVolumes each node has attached and in use, why
// a pod of a StatefulSet is stuck, and which branch of the attach/detach controller's reconciler
// its volume is on. Pure functions over the page's ObjectStore (store.js) and the controllers'
// state (controllers.js): the cluster view, the volume flow and the tests ask the same questions.
//
// What they read, as Kubernetes has it:
// - Node `status.volumesAttached` (written by the attach/detach controller's node status updater,
//   pkg/controller/volume/attachdetach/statusupdater/node_status_updater.go) and
//   `status.volumesInUse` (the kubelet's volume manager, pkg/kubelet/volumemanager/volume_manager.go
//   GetVolumesInUse), both as unique volume names: `kubernetes.io/csi/<driver>^<volumeHandle>`
//   (pkg/volume/util/volumehelper GetUniqueVolumeName, the CSI plugin's GetVolumeName);
// - VolumeAttachments (storage.k8s.io/v1): `spec.nodeName`, `spec.source.persistentVolumeName`,
//   `status.attached`;
// - a pod's `spec.volumes[].persistentVolumeClaim.claimName`, the claim's `spec.volumeName`;
// - core/v1 Events `FailedAttachVolume` "Multi-Attach error ..." on the waiting pod
//   (pkg/controller/volume/attachdetach/reconciler/reconciler.go reportMultiAttachError).
import { isTerminating, nameOf, readyOf, taintsOf } from "#js/k8s.js";

export const OUT_OF_SERVICE = "node.kubernetes.io/out-of-service";
// The attach/detach controller's default maxWaitForUnmountDuration
// (pkg/controller/volume/attachdetach/attach_detach_controller.go: reconcilerMaxWaitForUnmountDuration).
export const MAX_WAIT_FOR_UNMOUNT = 360;

// Resources a run has only when it models volumes (docs/websocket-protocol.md).
export const VOLUME_RESOURCES = ["statefulsets", "persistentvolumeclaims", "persistentvolumes", "volumeattachments"];
const VOLUME_RESOURCE_SET = new Set(VOLUME_RESOURCES);

/** True when a snapshot's objects or an event show that the run has StatefulSets or volumes. */
export function hasVolumes(store) {
  return VOLUME_RESOURCES.some((r) => store.count(r) > 0);
}

export function isVolumeEvent(event) {
  return VOLUME_RESOURCE_SET.has(event.resource);
}

/** The claims a pod mounts, as "namespace/name" keys. */
export function claimsOf(pod) {
  const ns = pod?.metadata?.namespace ?? "default";
  return (pod?.spec?.volumes ?? [])
    .map((v) => v.persistentVolumeClaim?.claimName)
    .filter(Boolean)
    .map((claim) => `${ns}/${claim}`);
}

/** The PersistentVolume a claim is bound to (its `spec.volumeName`), or null. */
function pvOfClaim(store, key) {
  const [ns, name] = key.split("/");
  const claim = store.get("persistentvolumeclaims", ns, name);
  const pvName = claim?.spec?.volumeName;
  return pvName ? { claim, pv: store.get("persistentvolumes", "", pvName), pvName } : { claim, pv: null, pvName: null };
}

/** The unique volume name a kubelet and the controller use for a CSI PersistentVolume. */
export function uniqueName(pv) {
  const csi = pv?.spec?.csi;
  return csi ? `kubernetes.io/csi/${csi.driver}^${csi.volumeHandle}` : null;
}

/** The PersistentVolume a unique volume name stands for, by its CSI handle or its own name in it. */
function pvOfUnique(store, unique, pvs) {
  for (const pv of pvs) {
    const own = uniqueName(pv);
    if (own === unique || (own === null && unique.endsWith(nameOf(pv)))) return pv;
  }
  for (const pv of pvs) if (unique.includes(nameOf(pv))) return pv;
  return null;
}

const claimLabel = (pv) => pv?.spec?.claimRef?.name ?? null;

/**
 * The volumes of one node, one entry per PersistentVolume (sorted by claim):
 * {pv, claim, attached, inUse, attaching, detaching, reported}. `attached`: the node status lists
 * it in volumesAttached or its VolumeAttachment says attached; `inUse`: the kubelet lists it in
 * volumesInUse; `attaching`: a VolumeAttachment not attached yet; `detaching`: its VolumeAttachment
 * is being deleted; `reported`: volumesAttached lists it (what a kubelet waits for before it mounts).
 */
export function nodeVolumes(store, nodeName) {
  const node = store.node(nodeName);
  const attachments = store.list("volumeattachments").filter((va) => va.spec?.nodeName === nodeName);
  const reportedAttached = (node?.status?.volumesAttached ?? []).map((v) => v.name);
  const inUse = node?.status?.volumesInUse ?? [];
  if (!attachments.length && !reportedAttached.length && !inUse.length) return [];
  const pvs = store.list("persistentvolumes");
  const byPv = new Map();
  const entry = (pvName, pv) => {
    if (!byPv.has(pvName)) {
      byPv.set(pvName, {
        pv: pvName, claim: claimLabel(pv) ?? pvName, attached: false, inUse: false, attaching: false,
        detaching: false, reported: false,
      });
    }
    return byPv.get(pvName);
  };
  for (const va of attachments) {
    const pvName = va.spec?.source?.persistentVolumeName;
    if (!pvName) continue;
    const e = entry(pvName, store.get("persistentvolumes", "", pvName));
    if (va.status?.attached) e.attached = true;
    else e.attaching = true;
    if (va.metadata?.deletionTimestamp) e.detaching = true;
  }
  for (const unique of reportedAttached) {
    const pv = pvOfUnique(store, unique, pvs);
    const e = entry(pv ? nameOf(pv) : unique, pv);
    e.attached = true;
    e.reported = true;
    e.attaching = false;
  }
  for (const unique of inUse) {
    const pv = pvOfUnique(store, unique, pvs);
    entry(pv ? nameOf(pv) : unique, pv).inUse = true;
  }
  return [...byPv.values()].sort((a, b) => (a.claim < b.claim ? -1 : a.claim > b.claim ? 1 : 0));
}

/** Nodes (other than `except`) that have the PersistentVolume attached or attaching, from the VolumeAttachments
 *  and the nodes' volumesAttached. */
export function attachedElsewhere(store, pvName, except) {
  const nodes = new Set();
  for (const va of store.list("volumeattachments")) {
    if (va.spec?.source?.persistentVolumeName === pvName && va.spec?.nodeName !== except) nodes.add(va.spec.nodeName);
  }
  const pv = store.get("persistentvolumes", "", pvName);
  const unique = uniqueName(pv);
  if (unique) {
    for (const node of store.list("nodes")) {
      if (nameOf(node) === except) continue;
      if ((node.status?.volumesAttached ?? []).some((v) => v.name === unique)) nodes.add(nameOf(node));
    }
  }
  return [...nodes].sort();
}

/** The kubectl STATUS a waiting pod shows: its first waiting container's reason (ContainerCreating). */
export function waitingReason(pod) {
  for (const status of pod?.status?.containerStatuses ?? []) {
    const reason = status.state?.waiting?.reason;
    if (reason) return reason;
  }
  return null;
}

const ownedByStatefulSet = (pod) => (pod?.metadata?.ownerReferences ?? []).some((o) => o.kind === "StatefulSet");

/** The pod's latest Multi-Attach error (a core/v1 Event `FailedAttachVolume`), or null. */
export function multiAttachError(store, pod) {
  let found = null;
  for (const e of store.eventsFor("Pod", nameOf(pod))) {
    if (e.involvedObject?.uid && pod.metadata?.uid && e.involvedObject.uid !== pod.metadata.uid) continue;
    if (e.reason === "FailedAttachVolume" && /Multi-Attach/i.test(e.message ?? "")) found = e;
  }
  return found;
}

/**
 * Why a pod is stuck, or null when it is not (or nothing here explains it):
 * - {kind: "unconfirmed", node, statefulSet}: Terminating on a node whose kubelet does not report
 *   (Ready Unknown, or the Node gone): only the kubelet removes the object after a graceful
 *   deletion (pkg/kubelet/status/status_manager.go), so it stays until someone force-deletes it;
 * - {kind: "volume-elsewhere", claim, nodes, multiAttach}: scheduled, waiting for a ReadWriteOnce
 *   volume still attached to other nodes;
 * - {kind: "attaching" | "mounting", claim}: its volume is being attached to its node, or attached
 *   and not yet mounted by the kubelet;
 * - {kind: "claim-pending", claim}: its claim is not bound yet.
 */
export function podWait(store, pod) {
  if (!pod) return null;
  const nodeName = pod.spec?.nodeName;
  if (isTerminating(pod)) {
    if (!nodeName) return null;
    // Ready True or False is a kubelet that posts its status: it stops the pod and confirms. Unknown (the node
    // lifecycle controller's verdict on a kubelet that stopped posting) or no Node at all: nobody will.
    const ready = readyOf(store.node(nodeName));
    if (ready === "True" || ready === "False") return null;
    return { kind: "unconfirmed", node: nodeName, statefulSet: ownedByStatefulSet(pod) };
  }
  if (!nodeName || pod.status?.phase !== "Pending") return null;
  for (const key of claimsOf(pod)) {
    const claim = key.split("/")[1];
    const { pvName } = pvOfClaim(store, key);
    if (!pvName) return { kind: "claim-pending", claim };
    const others = attachedElsewhere(store, pvName, nodeName);
    if (others.length) {
      return { kind: "volume-elsewhere", claim, nodes: others, multiAttach: Boolean(multiAttachError(store, pod)) };
    }
    const mine = nodeVolumes(store, nodeName).find((v) => v.pv === pvName);
    if (!mine || !mine.attached) return { kind: "attaching", claim };
    if (!mine.inUse) return { kind: "mounting", claim };
  }
  return null;
}

/**
 * The force-detach countdown of a volume on a node ({scheduledAt, fireAt}), while it can fire: the
 * controller forces the detach only from a node that is not Ready (reconciler.go: the timeout
 * counts when !isHealthy).
 */
export function forceDetachOf(store, controllers, pv, nodeName) {
  const detach = controllers?.detachOf?.(pv, nodeName) ?? null;
  return detach && readyOf(store.node(nodeName)) !== "True" ? detach : null;
}

/** The PersistentVolume names of a pod's bound claims. */
export function pvsOf(store, pod) {
  return claimsOf(pod).map((key) => pvOfClaim(store, key).pvName).filter(Boolean);
}

/**
 * The volume flow's state for one pod's volume (flows/volume.js lights its path from it):
 * {pv, claim, pod, podNode, oldNode, stuck, inUse, outOfService, detach, attachedTo, multiAttach}
 * where `oldNode` is a node other than the pod's that still has the volume, `stuck` says a pod
 * object bound there still uses it (a Terminating pod counts: the controller's desired state
 * keeps it), `detach` is the force-detach countdown ({scheduledAt, fireAt}) when the controllers
 * know one, and `done` the way the volume last left a node ("safe", "out-of-service", "timeout").
 */
export function volumeState(store, controllers, pod) {
  const pv = pvsOf(store, pod)[0];
  if (!pv) return null;
  const claim = claimsOf(pod)[0].split("/")[1];
  const podNode = pod.spec?.nodeName ?? null;
  const elsewhere = attachedElsewhere(store, pv, podNode);
  const oldNode = elsewhere[0] ?? null;
  const state = {
    pv, claim, pod: nameOf(pod), podNode, oldNode, stuck: false, inUse: false, outOfService: false, detach: null,
    attachedTo: null, multiAttach: false, terminating: isTerminating(pod), done: controllers?.detachedHow?.(pv) ?? null,
  };
  const users = (node) => store.podsOn(node).filter((p) => pvsOf(store, p).includes(pv));
  if (state.terminating && podNode) {
    // The selected pod is itself the one holding the volume on its node.
    state.oldNode = podNode;
    state.stuck = true;
  } else if (oldNode) {
    state.stuck = users(oldNode).length > 0;
  }
  const old = state.oldNode;
  if (old) {
    const v = nodeVolumes(store, old).find((x) => x.pv === pv);
    state.inUse = Boolean(v?.inUse);
    state.outOfService = taintsOf(store.node(old)).some((t) => t.key === OUT_OF_SERVICE);
    state.detach = forceDetachOf(store, controllers, pv, old);
  }
  if (podNode && !state.terminating) {
    const mine = nodeVolumes(store, podNode).find((x) => x.pv === pv);
    if (mine?.attached) state.attachedTo = podNode;
    state.multiAttach = Boolean(multiAttachError(store, pod));
  }
  return state;
}

/**
 * The flow's elements lit for a volume state (ids of flows/volume.js): the questions asked and
 * the branch each answer took, from the old node's side (detach) to the new pod's (attach).
 */
export function volumePath(state) {
  const lit = new Set();
  if (!state) return lit;
  const add = (...ids) => ids.forEach((x) => lit.add(x));
  add("loop");
  if (state.oldNode) {
    add("loop-needed", "q-needed");
    if (state.stuck) {
      add("needed-yes", "stuck");
    } else {
      add("needed-no", "q-inuse");
      if (!state.inUse) add("inuse-no", "detach");
      else {
        add("inuse-yes", "q-oos");
        if (state.outOfService) add("oos-yes", "detach-now");
        else add("oos-no", "q-timeout", "timeout-no", "wait");
      }
    }
    if (state.podNode && !state.terminating) add("multi-attach");
  } else if (state.attachedTo) {
    // Attached where the pod runs: light the way the volume came free, when the page saw it.
    add("loop-needed", "q-needed", "needed-no");
    if (state.done === "safe") add("q-inuse", "inuse-no", "detach", "detach-attach");
    else if (state.done === "out-of-service") add("q-inuse", "inuse-yes", "q-oos", "oos-yes", "detach-now", "now-attach");
    else if (state.done === "timeout") {
      add("q-inuse", "inuse-yes", "q-oos", "oos-no", "q-timeout", "timeout-yes", "force", "force-attach");
    }
    add("attach");
  } else if (state.podNode && !state.terminating) {
    add("loop-attach", "attach");
  }
  return lit;
}
