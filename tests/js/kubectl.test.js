import { test } from "node:test";
import assert from "node:assert/strict";
import { TabWriter } from "../../static/js/kubectl/tabwriter.js";
import { humanDuration, rfc1123z } from "../../static/js/kubectl/duration.js";
import { describeNode, getEndpointSlices, getNodes, getPodsWide, leaseYaml } from "../../static/js/kubectl/printers.js";
import { toYaml } from "../../static/js/kubectl/yaml.js";
import { lease, node, pod, startMs } from "./fixtures.js";

test("HumanDuration matches apimachinery's thresholds", () => {
  assert.equal(humanDuration(45), "45s");
  assert.equal(humanDuration(119), "119s");
  assert.equal(humanDuration(120), "2m");
  assert.equal(humanDuration(125), "2m5s");
  assert.equal(humanDuration(12 * 60 + 30), "12m");
  assert.equal(humanDuration(3 * 3600 + 5 * 60), "3h5m");
  assert.equal(humanDuration(9 * 3600), "9h");
  assert.equal(humanDuration(-0.5), "0s");
  assert.equal(humanDuration(-3), "<invalid>");
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
