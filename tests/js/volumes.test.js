// Volumes as the pages read them (static/js/volumes.js): a StatefulSet pod's volume attached to a
// node that powered off, the pod stuck Terminating there, its replacement waiting with a
// Multi-Attach error, the force-detach countdown, and the volume flow's lit path through it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ObjectStore } from "../../static/js/store.js";
import { ControllerState } from "../../static/js/controllers.js";
import { buildCommand } from "../../static/js/faults.js";
import { lanesFor, laneOf, LANES, rowFor } from "../../static/js/sequence/model.js";
import {
  forceDetachOf, hasVolumes, nodeVolumes, podWait, volumePath, volumeState, waitingReason,
} from "../../static/js/volumes.js";

const DRIVER = "disk.csi.example.com";
const unique = (pv) => `kubernetes.io/csi/${DRIVER}^${pv}`;
const OOS = { key: "node.kubernetes.io/out-of-service", value: "nodeshutdown", effect: "NoExecute" };

const node = (name, { ready = "True", inUse = [], attached = [], taints = [] } = {}) => ({
  metadata: { name },
  spec: { taints },
  status: {
    conditions: [{ type: "Ready", status: ready }],
    ...(inUse.length ? { volumesInUse: inUse.map(unique) } : {}),
    ...(attached.length ? { volumesAttached: attached.map((pv) => ({ name: unique(pv), devicePath: "" })) } : {}),
  },
});
const pv = (name, claim) => ({
  metadata: { name }, spec: { csi: { driver: DRIVER, volumeHandle: name }, claimRef: { namespace: "default", name: claim } },
});
const pvc = (name, volume) => ({ metadata: { name, namespace: "default" }, spec: { volumeName: volume } });
const va = (pvName, nodeName, attached = true) => ({
  metadata: { name: `csi-${pvName}-${nodeName}` }, spec: { nodeName, source: { persistentVolumeName: pvName } },
  status: { attached },
});
const dbPod = (name, nodeName, { terminating = false, phase = "Running", uid = `uid-${name}-${nodeName}` } = {}) => ({
  metadata: {
    name, namespace: "default", uid, ...(terminating ? { deletionTimestamp: "2026-01-01T00:08:00Z" } : {}),
    ownerReferences: [{ kind: "StatefulSet", name: "db" }],
  },
  spec: { nodeName, volumes: [{ name: "data", persistentVolumeClaim: { claimName: `data-${name}` } }] },
  status: {
    phase,
    ...(phase === "Pending" ? { containerStatuses: [{ state: { waiting: { reason: "ContainerCreating" } } }] } : {}),
  },
});
const multiAttach = (pod) => ({
  metadata: { name: `${pod.metadata.name}.1`, namespace: "default" }, reason: "FailedAttachVolume", type: "Warning",
  involvedObject: { kind: "Pod", name: pod.metadata.name, namespace: "default", uid: pod.metadata.uid },
  message: 'Multi-Attach error for volume "pvc-1" Volume is already exclusively attached to one node and can\'t be '
    + "attached to another",
});

/** node-2 powered off with db-1's volume; `extra` objects on top (a replacement pod, taints). */
function cluster({ pods, nodes = {}, attachments = [va("pvc-1", "node-2")], events = [] }) {
  const store = new ObjectStore();
  store.loadSnapshot({
    last_seq: 1,
    objects: {
      nodes: [node("node-1"), node("node-2", { ready: "Unknown", inUse: ["pvc-1"], attached: ["pvc-1"], ...nodes["node-2"] }),
        node("node-3", nodes["node-3"])],
      pods, events,
      persistentvolumeclaims: [pvc("data-db-1", "pvc-1")],
      persistentvolumes: [pv("pvc-1", "data-db-1")],
      volumeattachments: attachments,
    },
  });
  return store;
}

test("a node's volumes: attached and in use as its status and VolumeAttachments say, named by claim", () => {
  const store = cluster({ pods: [dbPod("db-1", "node-2", { terminating: true })] });
  assert.ok(hasVolumes(store));
  assert.deepEqual(nodeVolumes(store, "node-2"), [{
    pv: "pvc-1", claim: "data-db-1", attached: true, inUse: true, attaching: false, detaching: false, reported: true,
  }]);
  assert.deepEqual(nodeVolumes(store, "node-1"), []);
  const empty = new ObjectStore();
  empty.loadSnapshot({ objects: { nodes: [node("node-1")] } });
  assert.ok(!hasVolumes(empty));
});

test("a pod Terminating on a dead node: its kubelet cannot confirm, and the StatefulSet waits for its name", () => {
  const store = cluster({ pods: [dbPod("db-1", "node-2", { terminating: true })] });
  const pod = store.get("pods", "default", "db-1");
  assert.deepEqual(podWait(store, pod), { kind: "unconfirmed", node: "node-2", statefulSet: true });
  // the same pod on a Ready node is being stopped by its kubelet: nothing to explain; nor on a node whose
  // kubelet posts Ready=False itself (a graceful shutdown): it is alive and confirms
  const live = cluster({ pods: [dbPod("db-1", "node-1", { terminating: true })] });
  assert.equal(podWait(live, live.get("pods", "default", "db-1")), null);
  const shuttingDown = cluster({ pods: [dbPod("db-1", "node-2", { terminating: true })],
    nodes: { "node-2": { ready: "False", inUse: ["pvc-1"], attached: ["pvc-1"] } } });
  assert.equal(podWait(shuttingDown, shuttingDown.get("pods", "default", "db-1")), null);
});

test("the replacement waits for a volume attached elsewhere, with the Multi-Attach error when the event came", () => {
  const replacement = dbPod("db-1", "node-3", { phase: "Pending" });
  const before = cluster({ pods: [replacement] });
  assert.equal(waitingReason(replacement), "ContainerCreating");
  assert.deepEqual(podWait(before, replacement),
    { kind: "volume-elsewhere", claim: "data-db-1", nodes: ["node-2"], multiAttach: false });
  const after = cluster({ pods: [replacement], events: [multiAttach(replacement)] });
  assert.equal(podWait(after, replacement).multiAttach, true);
  // once detached from node-2 and attaching to node-3
  const moving = cluster({ pods: [replacement], nodes: { "node-2": { inUse: [], attached: [] } },
    attachments: [va("pvc-1", "node-3", false)] });
  assert.deepEqual(podWait(moving, replacement), { kind: "attaching", claim: "data-db-1" });
});

test("the force-detach countdown comes from the controller's wait, shown while the node is not Ready", () => {
  const controllers = new ControllerState();
  const wait = (nodeReady) => ({
    type: "decision", component: "attachdetach-controller", rule: "attachdetach.wait-unmount", node: "node-2", t: 480.1,
    inputs: { persistentVolume: "pvc-1", nodeReady, detachRequestedAt: 480.1, maxWaitForUnmountDuration: 360,
      forceDetachAt: 840.1, disableForceDetachOnTimeout: false },
  });
  controllers.apply(wait(false));
  assert.deepEqual(controllers.detachOf("pvc-1", "node-2"), { scheduledAt: 480.1, fireAt: 840.1 });
  const store = cluster({ pods: [] });
  assert.deepEqual(forceDetachOf(store, controllers, "pvc-1", "node-2"), { scheduledAt: 480.1, fireAt: 840.1 });
  // a Ready node's kubelet is expected to unmount: no forced detach, no countdown
  const ready = cluster({ pods: [], nodes: { "node-2": { ready: "True", inUse: ["pvc-1"], attached: ["pvc-1"] } } });
  assert.equal(forceDetachOf(ready, controllers, "pvc-1", "node-2"), null);
  controllers.apply({ type: "decision", component: "attachdetach-controller", rule: "attachdetach.force-detach-timeout",
    node: "node-2", t: 840.2, inputs: { persistentVolume: "pvc-1" } });
  assert.equal(controllers.detachOf("pvc-1", "node-2"), null);
  assert.equal(controllers.detachedHow("pvc-1"), "timeout");
});

test("the volume flow lights the branch the volume is on, from stuck to force detach to attach", () => {
  const controllers = new ControllerState();
  const stuck = cluster({ pods: [dbPod("db-1", "node-2", { terminating: true })] });
  const lit = volumePath(volumeState(stuck, controllers, stuck.get("pods", "default", "db-1")));
  for (const id of ["loop", "q-needed", "needed-yes", "stuck"]) assert.ok(lit.has(id), id);
  assert.ok(!lit.has("q-inuse"));

  const replacement = dbPod("db-1", "node-3", { phase: "Pending" });
  const waiting = cluster({ pods: [replacement] });
  const waitLit = volumePath(volumeState(waiting, controllers, replacement));
  for (const id of ["needed-no", "q-inuse", "inuse-yes", "q-oos", "oos-no", "q-timeout", "timeout-no", "wait",
    "multi-attach"]) assert.ok(waitLit.has(id), id);

  const tainted = cluster({ pods: [replacement], nodes: { "node-2": { taints: [OOS] } } });
  const taintLit = volumePath(volumeState(tainted, controllers, replacement));
  assert.ok(taintLit.has("oos-yes") && taintLit.has("detach-now") && !taintLit.has("wait"));

  controllers.apply({ type: "decision", component: "attachdetach-controller", rule: "attachdetach.force-detach-timeout",
    node: "node-2", t: 840.2, inputs: { persistentVolume: "pvc-1" } });
  const running = dbPod("db-1", "node-3");
  const moved = cluster({ pods: [running], nodes: { "node-2": { inUse: [], attached: [] },
    "node-3": { inUse: ["pvc-1"], attached: ["pvc-1"] } }, attachments: [va("pvc-1", "node-3")] });
  const movedLit = volumePath(volumeState(moved, controllers, running));
  for (const id of ["timeout-yes", "force", "force-attach", "attach"]) assert.ok(movedLit.has(id), id);
  assert.ok(!movedLit.has("wait") && !movedLit.has("stuck"));
});

test("runs with volumes get lanes for the StatefulSet controller, the attach/detach controller and Pod GC", () => {
  assert.equal(lanesFor({ volumes: false }), LANES);
  const wide = lanesFor({ volumes: true });
  const ids = wide.map((l) => l.id);
  for (const id of ["statefulset-controller", "volume-controllers", "pod-garbage-collector"]) assert.ok(ids.includes(id));
  assert.equal(laneOf("pod-garbage-collector", null, "node-2"), "workload-controllers"); // a run without volumes
  assert.equal(laneOf("pod-garbage-collector", null, "node-2", wide), "pod-garbage-collector");
  assert.equal(laneOf("csi-attacher", null, "node-2", wide), "volume-controllers");
  const narrow = lanesFor({ volumes: true, compact: true });
  assert.equal(laneOf("statefulset-controller", null, "node-2", narrow), "stateful-controllers");
  assert.equal(narrow.length, LANES.length + 1);
  // the controller's decisions about another node's volume are drawn too (they are few)
  const multi = { seq: 5, t: 500, type: "decision", component: "attachdetach-controller",
    rule: "attachdetach.multi-attach", node: "node-3" };
  assert.equal(rowFor(multi, "node-2", false, wide).lane, "volume-controllers");
  // the trainer's force delete comes from outside the cluster (kubectl), not from a controller's lane
  const force = { seq: 7, t: 480, type: "write", component: "trainer", verb: "delete", resource: "pods", name: "db-1",
    code: 200, node: "node-2" };
  const forceRow = rowFor(force, "node-2", false, wide);
  assert.equal(forceRow.from, "trainer");
  assert.equal(forceRow.label, "kubectl: DELETE pods/db-1");
  // a VolumeAttachment's generated name is cut short on its arrow
  const attach = { seq: 8, t: 481, type: "write", component: "attachdetach-controller", verb: "create",
    resource: "volumeattachments", name: `csi-${"4068fa98f0".repeat(6)}abcd`, code: 201 };
  assert.equal(rowFor(attach, "node-2", false, wide).label, "POST volumeattachments/csi-4068fa98…");
  const pass = { seq: 6, t: 500, type: "decision", component: "node-lifecycle-controller", rule: "nlc.mark-unknown",
    node: "node-3" };
  assert.equal(rowFor(pass, "node-2", false, wide), null);
});

test("the trainer's new buttons send the commands the simulation takes", () => {
  assert.deepEqual(buildCommand("taint-out-of-service", { node: "node-2" }), { action: "taint-out-of-service", node: "node-2" });
  assert.deepEqual(buildCommand("force-delete-pod", { node: "node-2", pod: "default/db-1" }),
    { action: "force-delete-pod", pod: "db-1" });
});

test("a page joining during the wait gets the countdown from the snapshot", () => {
  const controllers = new ControllerState();
  controllers.loadSnapshot({ storage: { attachDetach: { attached: [
    { volume: unique("pvc-1"), node: "node-2", persistentVolume: "pvc-1", mountedByNode: true,
      detachRequestedAt: 480.1, forceDetachAt: 840.1 },
    { volume: unique("pvc-2"), node: "node-1", persistentVolume: "pvc-2", mountedByNode: true,
      detachRequestedAt: null, forceDetachAt: null },
  ] } } });
  assert.deepEqual(controllers.detachOf("pvc-1", "node-2"), { scheduledAt: 480.1, fireAt: 840.1 });
  assert.equal(controllers.detachOf("pvc-2", "node-1"), null);
});
