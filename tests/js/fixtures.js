// Objects shaped like docs/kubernetes-node-health.md §9 and docs/simulation-api.md, for the printer and store tests.
export const START = "2026-01-01T00:00:00Z";
export const startMs = Date.parse(START);

export function node(name, { zone = "zone-a", ready = "True", taints = [], unschedulable = false } = {}) {
  const reason = { True: "KubeletReady", False: "KubeletNotReady", Unknown: "NodeStatusUnknown" }[ready];
  return {
    apiVersion: "v1", kind: "Node",
    metadata: {
      name, uid: `uid-${name}`, resourceVersion: "10", creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone },
    },
    spec: { taints, ...(unschedulable ? { unschedulable: true } : {}) },
    status: {
      conditions: [
        { type: "MemoryPressure", status: ready === "Unknown" ? "Unknown" : "False",
          reason: "KubeletHasSufficientMemory", message: "kubelet has sufficient memory available",
          lastHeartbeatTime: "2026-01-01T00:00:03Z", lastTransitionTime: "2026-01-01T00:00:03Z" },
        { type: "Ready", status: ready, reason, message: "kubelet is posting ready status",
          lastHeartbeatTime: "2026-01-01T00:00:03Z", lastTransitionTime: "2026-01-01T00:00:04Z" },
      ],
      addresses: [{ type: "InternalIP", address: "10.0.0.2" }, { type: "Hostname", address: name }],
      capacity: { cpu: "4", memory: "16Gi", pods: "110" },
      allocatable: { cpu: "4", memory: "16Gi", pods: "110" },
      nodeInfo: { kubeletVersion: "v1.33.0", operatingSystem: "linux", architecture: "amd64" },
    },
  };
}

export function lease(name, renewTime = "2026-01-01T00:05:12.481230Z") {
  return {
    apiVersion: "coordination.k8s.io/v1", kind: "Lease",
    metadata: {
      name, namespace: "kube-node-lease", uid: "0d1f6c1e-aaaa", resourceVersion: "1234",
      creationTimestamp: "2026-01-01T00:00:03Z",
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: `uid-${name}` }],
    },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
  };
}

export function pod(name, nodeName, { ready = "True", deleting = false, ip = "10.244.1.5" } = {}) {
  return {
    apiVersion: "v1", kind: "Pod",
    metadata: {
      name, namespace: "default", uid: `uid-${name}`, creationTimestamp: "2026-01-01T00:00:10Z",
      labels: { app: name.split("-")[0] },
      ...(deleting ? { deletionTimestamp: "2026-01-01T00:07:00Z", deletionGracePeriodSeconds: 30 } : {}),
    },
    spec: {
      nodeName,
      containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }],
      tolerations: [
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      ],
    },
    status: {
      phase: "Running", podIP: ip, podIPs: [{ ip }],
      conditions: [{ type: "Ready", status: ready, lastProbeTime: null, lastTransitionTime: "2026-01-01T00:00:12Z" }],
      containerStatuses: [
        { name: "app", ready: true, restartCount: 0, state: { running: { startedAt: "2026-01-01T00:00:11Z" } } },
      ],
    },
  };
}
