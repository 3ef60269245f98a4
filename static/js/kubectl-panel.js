// A terminal-looking panel that prints what kubectl would print now, from the live store.
import { describeNode, getEndpointSlices, getNodes, getPodsWide, leaseYaml } from "./kubectl/printers.js";

export const COMMANDS = {
  "get-nodes": () => "kubectl get nodes",
  "describe-node": (node) => `kubectl describe node ${node}`,
  "get-lease": (node) => `kubectl get lease -n kube-node-lease ${node} -o yaml`,
  "get-pods": () => "kubectl get pods -o wide",
  "get-endpointslices": () => "kubectl get endpointslices",
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
    default:
      return "";
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
