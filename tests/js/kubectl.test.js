import { readFileSync } from "node:fs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { TabWriter } from "../../static/js/kubectl/tabwriter.js";
import { humanDuration, rfc1123z } from "../../static/js/kubectl/duration.js";
import {
  describeNode, getEndpointSlices, getNodes, getPersistentVolumeClaims, getPersistentVolumes, getPodsWide,
  getStatefulSets, getVolumeAttachments, leaseYaml,
} from "../../static/js/kubectl/printers.js";
import { COMMANDS, kubectlOutput } from "../../static/js/kubectl-panel.js";
import { ObjectStore } from "../../static/js/store.js";
import { toYaml } from "../../static/js/kubectl/yaml.js";
import { lease, node, pod, startMs } from "./fixtures.js";

// The vectors the API's printer answers too (heartbeat_site/k8sapi/tables.py, tests/web/test_human_duration.py).
const DURATIONS = JSON.parse(readFileSync(new URL("../vectors/human-duration.json", import.meta.url), "utf8"));

test("HumanDuration answers the shared vectors at each of apimachinery's boundaries", () => {
  assert.ok(DURATIONS.cases.length > 40);
  for (const [seconds, printed] of DURATIONS.cases) assert.equal(humanDuration(seconds), printed, `${seconds} s`);
});

test("RFC1123Z is what kubectl describe prints", () => {
  assert.equal(rfc1123z("2026-01-01T00:01:05Z"), "Thu, 01 Jan 2026 00:01:05 +0000");
});

test("tabwriter aligns only the lines of one column block, like Go's", () => {
  const w = new TabWriter({ padding: 2 });
  w.write("Name:\tx\nCreationTimestamp:\ty\nLease:\n  HolderIdentity:\tz\n  RenewTime:\tq\n");
  assert.equal(w.flush(),
    "Name:               x\nCreationTimestamp:  y\nLease:\n  HolderIdentity:  z\n  RenewTime:       q\n");
});

test("get nodes prints NotReady for Unknown and appends SchedulingDisabled", () => {
  const now = startMs + 12 * 60 * 1000;
  const out = getNodes([node("node-2", { ready: "Unknown" }), node("node-1", { unschedulable: true })], now);
  assert.equal(out,
    "NAME     STATUS                     ROLES    AGE   VERSION\n" +
    "node-1   Ready,SchedulingDisabled   <none>   12m   v1.33.0\n" +
    "node-2   NotReady                   <none>   12m   v1.33.0\n");
});

test("get nodes prints Unknown only without a Ready condition", () => {
  const bare = node("node-9");
  bare.status.conditions = [];
  assert.match(getNodes([bare], startMs), /node-9\s+Unknown\s/);
});

test("get pods -o wide keeps READY 1/1 after MarkPodsNotReady and shows Terminating", () => {
  const now = startMs + 8 * 60 * 1000;
  const out = getPodsWide([pod("web-b", "node-2", { ready: "False", deleting: true }), pod("web-a", "node-1")], now);
  const lines = out.trimEnd().split("\n");
  assert.equal(lines[0],
    "NAME    READY   STATUS        RESTARTS   AGE     IP           NODE     NOMINATED NODE   READINESS GATES");
  assert.equal(lines[1],
    "web-a   1/1     Running       0          7m50s   10.244.1.5   node-1   <none>           <none>");
  assert.equal(lines[2],
    "web-b   1/1     Terminating   0          7m50s   10.244.1.5   node-2   <none>           <none>");
});

test("get endpointslices lists at most three addresses", () => {
  const slice = {
    metadata: { name: "web-abcde", namespace: "default", creationTimestamp: "2026-01-01T00:00:00Z" },
    addressType: "IPv4", ports: [{ name: "", port: 80, protocol: "TCP" }],
    endpoints: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]
      .map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
  assert.equal(getEndpointSlices([slice], startMs + 60000),
    "NAME        ADDRESSTYPE   PORTS   ENDPOINTS                                AGE\n" +
    "web-abcde   IPv4          80      10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...   60s\n");
});

test("lease -o yaml sorts keys and quotes timestamps and numeric strings", () => {
  assert.equal(leaseYaml(lease("node-2"), "node-2"),
    "apiVersion: coordination.k8s.io/v1\n" +
    "kind: Lease\n" +
    "metadata:\n" +
    "  creationTimestamp: \"2026-01-01T00:00:03Z\"\n" +
    "  name: node-2\n" +
    "  namespace: kube-node-lease\n" +
    "  ownerReferences:\n" +
    "  - apiVersion: v1\n" +
    "    kind: Node\n" +
    "    name: node-2\n" +
    "    uid: uid-node-2\n" +
    "  resourceVersion: \"1234\"\n" +
    "  uid: 0d1f6c1e-aaaa\n" +
    "spec:\n" +
    "  holderIdentity: node-2\n" +
    "  leaseDurationSeconds: 40\n" +
    "  renewTime: \"2026-01-01T00:05:12.481230Z\"\n");
  assert.match(leaseYaml(null, "node-7"), /NotFound/);
});

test("yaml nests lists of lists and empty values", () => {
  assert.equal(toYaml({ a: [], b: {}, c: [[1, 2]], d: "yes", e: "" }),
    "a: []\nb: {}\nc:\n- - 1\n  - 2\nd: \"yes\"\ne: \"\"\n");
});

test("describe node: header block, lease block, sorted taints, conditions table", () => {
  const n = node("node-2", {
    ready: "Unknown",
    taints: [
      { key: "node.kubernetes.io/unreachable", effect: "NoSchedule", timeAdded: "2026-01-01T00:01:52Z" },
      { key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: "2026-01-01T00:01:57Z" },
    ],
  });
  const out = describeNode(n, lease("node-2"), [pod("web-a", "node-2")], [], startMs + 120000);
  const lines = out.split("\n");
  assert.equal(lines[0], "Name:               node-2");
  assert.equal(lines[2], "Labels:             kubernetes.io/hostname=node-2");
  assert.equal(lines[3], "                    topology.kubernetes.io/zone=zone-a");
  assert.ok(out.includes("Taints:             node.kubernetes.io/unreachable:NoExecute\n" +
    "                    node.kubernetes.io/unreachable:NoSchedule\n"));
  assert.ok(out.includes("Lease:\n  HolderIdentity:  node-2\n  AcquireTime:     <unset>\n" +
    "  RenewTime:       Thu, 01 Jan 2026 00:05:12 +0000\n"));
  assert.match(out, /\n {2}Ready {12}Unknown {3}Thu, 01 Jan 2026 00:00:03 \+0000 {3}Thu, 01 Jan 2026 00:00:04 \+0000 {3}NodeStatusUnknown/);
  assert.match(out, /Non-terminated Pods: {10}\(1 in total\)/);
  assert.match(out, /Events: {14}<none>\n$/);
});

// --- StatefulSets and storage: the objects a run with a StatefulSet has (docs/websocket-protocol.md) ---------

const created = "2026-01-01T00:00:20Z";
const statefulSet = {
  apiVersion: "apps/v1", kind: "StatefulSet",
  metadata: { name: "db", namespace: "default", creationTimestamp: created },
  spec: { replicas: 3, template: { spec: { containers: [{ name: "db", image: "registry.example/db:1.0" }] } } },
  status: { replicas: 3, readyReplicas: 2 },
};
const claim = (name, volume, { deleting = false } = {}) => ({
  apiVersion: "v1", kind: "PersistentVolumeClaim",
  metadata: { name, namespace: "default", creationTimestamp: created,
    ...(deleting ? { deletionTimestamp: "2026-01-01T00:05:00Z" } : {}) },
  spec: { accessModes: ["ReadWriteOnce"], storageClassName: "standard", ...(volume ? { volumeName: volume } : {}) },
  status: volume ? { phase: "Bound", accessModes: ["ReadWriteOnce"], capacity: { storage: "1Gi" } }
    : { phase: "Pending" },
});
const volume = (name, claimName, { deleting = false } = {}) => ({
  apiVersion: "v1", kind: "PersistentVolume",
  metadata: { name, creationTimestamp: created, ...(deleting ? { deletionTimestamp: "2026-01-01T00:05:00Z" } : {}) },
  spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOncePod", "ReadWriteOnce"],
    persistentVolumeReclaimPolicy: "Delete", storageClassName: "standard",
    claimRef: { kind: "PersistentVolumeClaim", namespace: "default", name: claimName } },
  status: { phase: "Bound" },
});
const attachment = (name, pv, nodeName, attached) => ({
  apiVersion: "storage.k8s.io/v1", kind: "VolumeAttachment",
  metadata: { name, creationTimestamp: created },
  spec: { attacher: "pd.csi.storage.gke.io", nodeName, source: { persistentVolumeName: pv } },
  status: { attached },
});

test("get statefulsets prints ready of desired replicas, and -o wide the template's containers", () => {
  const now = startMs + 10 * 60 * 1000;
  assert.equal(getStatefulSets([statefulSet], now),
    "NAME   READY   AGE\n" +
    "db     2/3     9m40s\n");
  assert.equal(getStatefulSets([statefulSet], now, { wide: true }),
    "NAME   READY   AGE     CONTAINERS   IMAGES\n" +
    "db     2/3     9m40s   db           registry.example/db:1.0\n");
  assert.equal(getStatefulSets([{ ...statefulSet, status: {} }], now).split("\n")[1].split(/\s+/)[1], "0/3");
});

test("get pvc leaves CAPACITY and ACCESS MODES empty until bound and prints Terminating once deleted", () => {
  const now = startMs + 10 * 60 * 1000;
  const out = getPersistentVolumeClaims([claim("data-db-1", "pvc-b", { deleting: true }), claim("data-db-0", "pvc-a"),
    claim("data-db-2", null), { ...claim("other", "pvc-z"), metadata: { ...claim("other").metadata, namespace: "x" } }],
  now);
  assert.equal(out,
    "NAME        STATUS        VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE\n" +
    "data-db-0   Bound         pvc-a    1Gi        RWO            standard       <unset>                 9m40s\n" +
    "data-db-1   Terminating   pvc-b    1Gi        RWO            standard       <unset>                 9m40s\n" +
    "data-db-2   Pending                                          standard       <unset>                 9m40s\n");
});

test("get pv is cluster-scoped, orders access modes as kubectl does and names the claim namespace/name", () => {
  const now = startMs + 10 * 60 * 1000;
  assert.equal(getPersistentVolumes([volume("pvc-b", "data-db-1", { deleting: true }), volume("pvc-a", "data-db-0")],
    now),
  "NAME    CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS        CLAIM               STORAGECLASS   " +
    "VOLUMEATTRIBUTESCLASS   REASON   AGE\n" +
  "pvc-a   1Gi        RWO,RWOP       Delete           Bound         default/data-db-0   standard       " +
    "<unset>                          9m40s\n" +
  "pvc-b   1Gi        RWO,RWOP       Delete           Terminating   default/data-db-1   standard       " +
    "<unset>                          9m40s\n");
});

test("get volumeattachments prints ATTACHED true or false", () => {
  const now = startMs + 10 * 60 * 1000;
  assert.equal(getVolumeAttachments([attachment("csi-b", "pvc-b", "node-2", false),
    attachment("csi-a", "pvc-a", "node-1", true)], now),
  "NAME    ATTACHER                PV      NODE     ATTACHED   AGE\n" +
  "csi-a   pd.csi.storage.gke.io   pvc-a   node-1   true       9m40s\n" +
  "csi-b   pd.csi.storage.gke.io   pvc-b   node-2   false      9m40s\n");
});

test("the panel on a run without a StatefulSet answers as kubectl does against a server with none", () => {
  const store = new ObjectStore();
  store.loadSnapshot({ objects: { nodes: [node("node-1")] }, last_seq: 1 });
  assert.equal(kubectlOutput("get-statefulsets", store, "node-1", startMs), "No resources found in default namespace.\n");
  assert.equal(kubectlOutput("get-pvc", store, "node-1", startMs), "No resources found in default namespace.\n");
  assert.equal(kubectlOutput("get-pv", store, "node-1", startMs), "No resources found\n");
  assert.equal(kubectlOutput("get-volumeattachments", store, "node-1", startMs), "No resources found\n");
});

test("the panel prints a StatefulSet run's storage from its snapshot and follows the frames' writes", () => {
  const store = new ObjectStore();
  store.loadSnapshot({
    objects: { statefulsets: [statefulSet], persistentvolumeclaims: [claim("data-db-0", "pvc-a")],
      persistentvolumes: [volume("pvc-a", "data-db-0")], volumeattachments: [attachment("csi-a", "pvc-a", "node-1", true)] },
    last_seq: 5,
  });
  const now = startMs + 60 * 1000;
  assert.match(kubectlOutput("get-statefulsets", store, null, now), /^db\s+2\/3\s+40s\s+db\s+registry\.example\/db:1\.0$/m);
  assert.match(kubectlOutput("get-pvc", store, null, now), /^data-db-0\s+Bound\s+pvc-a\s+1Gi\s+RWO\s/m);
  assert.match(kubectlOutput("get-pv", store, null, now), /^pvc-a\s+1Gi\s+RWO,RWOP\s+Delete\s+Bound\s+default\/data-db-0\s/m);
  store.apply({ seq: 6, type: "write", resource: "volumeattachments", name: "csi-a",
    object: attachment("csi-a", "pvc-a", "node-1", false) });
  assert.match(kubectlOutput("get-volumeattachments", store, null, now), /^csi-a\s+\S+\s+pvc-a\s+node-1\s+false\s+40s$/m);
  store.apply({ seq: 7, type: "write", resource: "volumeattachments", name: "csi-a", removed: true,
    object: attachment("csi-a", "pvc-a", "node-1", false) });
  assert.equal(kubectlOutput("get-volumeattachments", store, null, now), "No resources found\n");
});

test("the run page's kubectl menu offers every command the panel prints, with its kubectl words", () => {
  const page = readFileSync(new URL("../../templates/pages/run.html", import.meta.url), "utf8");
  const menu = page.slice(page.indexOf('<select name="kubectl"'), page.indexOf("</select>", page.indexOf('<select name="kubectl"')));
  const options = [...menu.matchAll(/<option value="([^"]+)">([^<]+)<\/option>/g)].map((m) => [m[1], m[2]]);
  assert.deepEqual(options.map(([value]) => value), Object.keys(COMMANDS));
  for (const [value, words] of options) {
    if (!["describe-node", "get-lease"].includes(value)) assert.equal(words, COMMANDS[value]("node-1"));
  }
});

test("get <storage> -o yaml prints a List whose items carry apiVersion and kind, without managedFields", () => {
  const store = new ObjectStore();
  store.loadSnapshot({ objects: { volumeattachments: [{ ...attachment("csi-a", "pvc-a", "node-2", true),
    apiVersion: undefined, kind: undefined, metadata: { name: "csi-a", managedFields: [{ manager: "x" }] } }] },
  last_seq: 1 });
  assert.equal(kubectlOutput("get-volumeattachments-yaml", store, null, startMs),
    "apiVersion: v1\nitems:\n- apiVersion: storage.k8s.io/v1\n  kind: VolumeAttachment\n  metadata:\n" +
    "    name: csi-a\n  spec:\n    attacher: pd.csi.storage.gke.io\n    nodeName: node-2\n    source:\n" +
    "      persistentVolumeName: pvc-a\n  status:\n    attached: true\nkind: List\nmetadata:\n" +
    "  resourceVersion: \"\"\n");
  assert.equal(kubectlOutput("get-pvc-yaml", store, null, startMs),
    "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n");
});
