// @ts-check
// A terminal-looking panel that prints what kubectl would print now, from the live store.
import {
  describeNode, getEndpointSlices, getNodes, getPersistentVolumeClaims, getPersistentVolumes, getPodsWide,
  getStatefulSets, getVolumeAttachments, leaseYaml, listYaml,
} from "#js/kubectl/printers.js";

export const COMMANDS = {
  "get-nodes": () => "kubectl get nodes",
  "describe-node": (node) => `kubectl describe node ${node}`,
  "get-lease": (node) => `kubectl get lease -n kube-node-lease ${node} -o yaml`,
  "get-pods": () => "kubectl get pods -o wide",
  "get-endpointslices": () => "kubectl get endpointslices",
  // A run with a StatefulSet has these objects (docs/websocket-protocol.md); any other prints "No resources found".
  "get-statefulsets": () => "kubectl get statefulsets -o wide",
  "get-pvc": () => "kubectl get pvc",
  "get-pv": () => "kubectl get pv",
  "get-volumeattachments": () => "kubectl get volumeattachments",
  "get-statefulsets-yaml": () => "kubectl get statefulsets -o yaml",
  "get-pvc-yaml": () => "kubectl get pvc -o yaml",
  "get-pv-yaml": () => "kubectl get pv -o yaml",
  "get-volumeattachments-yaml": () => "kubectl get volumeattachments -o yaml",
};

// -o yaml of the storage resources: the store's list, its objects' apiVersion and kind, the namespace kubectl reads
// (null: cluster-scoped).
const YAML_LISTS = {
  "get-statefulsets-yaml": ["statefulsets", { apiVersion: "apps/v1", kind: "StatefulSet" }, "default"],
  "get-pvc-yaml": ["persistentvolumeclaims", { apiVersion: "v1", kind: "PersistentVolumeClaim" }, "default"],
  "get-pv-yaml": ["persistentvolumes", { apiVersion: "v1", kind: "PersistentVolume" }, null],
  "get-volumeattachments-yaml": ["volumeattachments", { apiVersion: "storage.k8s.io/v1", kind: "VolumeAttachment" },
    null],
};

/** The text of one kubectl command against the store at virtual time `nowMs`. */
export function kubectlOutput(command, store, node, nowMs) {
  switch (command) {
    case "get-nodes":
      return getNodes(store.list("nodes"), nowMs);
    case "describe-node":
      return describeNode(store.node(node), store.lease(node), store.list("pods"),
        store.eventsFor("Node", node), nowMs);
    case "get-lease":
      return leaseYaml(store.lease(node), node);
    case "get-pods":
      return getPodsWide(store.list("pods"), nowMs);
    case "get-endpointslices":
      return getEndpointSlices(store.list("endpointslices"), nowMs);
    case "get-statefulsets":
      return getStatefulSets(store.list("statefulsets"), nowMs, { wide: true });
    case "get-pvc":
      return getPersistentVolumeClaims(store.list("persistentvolumeclaims"), nowMs);
    case "get-pv":
      return getPersistentVolumes(store.list("persistentvolumes"), nowMs);
    case "get-volumeattachments":
      return getVolumeAttachments(store.list("volumeattachments"), nowMs);
    default: {
      if (!(command in YAML_LISTS)) return "";
      const [resource, kind, namespace] = YAML_LISTS[command];
      return listYaml(store.list(resource), kind, namespace);
    }
  }
}

export class KubectlPanel {
  constructor(root, { store, clock }) {
    this.store = store;
    this.clock = clock;
    this.command = "get-nodes";
    this.node = null;
    this.select = root.querySelector("select[name=kubectl]");
    this.prompt = root.querySelector(".kubectl-prompt");
    this.output = root.querySelector(".kubectl-output");
    this.select.addEventListener("change", () => {
      this.command = this.select.value;
      this.render();
    });
  }

  setNode(node) {
    this.node = node;
  }

  render() {
    const prompt = `$ ${COMMANDS[this.command](this.node ?? "")}`;
    if (this.prompt.textContent !== prompt) this.prompt.textContent = prompt;
    const text = kubectlOutput(this.command, this.store, this.node, this.clock.nowMs());
    if (this.output.textContent !== text) this.output.textContent = text;
  }
}
