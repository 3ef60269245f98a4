// @ts-check
// The trainer's fault buttons (control mode only): every action of the simulation's fault
// vocabulary, grouped by what it targets — the node picked on the cluster view, the pod picked
// there, the node's zone, or the whole cluster — with the parameters each action needs.

// scope: what the action targets; params: extra fields the command carries.
export const FAULT_SPECS = {
  "stop-kubelet": { scope: "node" },
  "start-kubelet": { scope: "node" },
  "stop-runtime": { scope: "node" },
  "start-runtime": { scope: "node" },
  partition: { scope: "node" },
  heal: { scope: "node" },
  "start-pressure": { scope: "node", params: ["resource"] },
  "stop-pressure": { scope: "node", params: ["resource"] },
  "fail-lease-writes": { scope: "node" },
  "restore-lease-writes": { scope: "node" },
  "fail-status-writes": { scope: "node" },
  "restore-status-writes": { scope: "node" },
  shutdown: { scope: "node" },
  "power-off": { scope: "node" },
  "power-on": { scope: "node" },
  cordon: { scope: "node" },
  uncordon: { scope: "node" },
  "delete-node": { scope: "node" },
  // kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute
  "taint-out-of-service": { scope: "node" },
  "untaint-out-of-service": { scope: "node" },
  // kubectl delete pod <pod> --grace-period=0 --force
  "force-delete-pod": { scope: "pod" },
  "zone-outage": { scope: "zone" },
  "zone-heal": { scope: "zone" },
  "slow-apiserver": { scope: "cluster", params: ["latency", "node?"] },
  "restore-apiserver": { scope: "cluster", params: ["node?"] },
  "create-node": { scope: "cluster", params: ["name", "zone", "kubelet"] },
  "restart-controller-manager": { scope: "cluster" },
};

// Actions whose effect can be undone automatically after `for` (the simulation schedules it).
const REVERSIBLE = new Set(["stop-kubelet", "stop-runtime", "partition", "start-pressure", "fail-lease-writes",
  "fail-status-writes", "slow-apiserver", "power-off", "cordon", "zone-outage"]);

export function scopeOf(action) {
  return FAULT_SPECS[action]?.scope ?? "cluster";
}

/**
 * The command a button sends. `ctx`: {node, zone, resource, latency, forDuration, newNode,
 * newZone, kubelet, applyToNode}.
 */
export function buildCommand(action, ctx) {
  const spec = FAULT_SPECS[action] ?? { scope: "cluster" };
  const cmd = { action };
  if (spec.scope === "node") cmd.node = ctx.node;
  if (spec.scope === "zone") cmd.zone = ctx.zone;
  if (spec.scope === "pod") cmd.pod = String(ctx.pod ?? "").split("/").pop(); // a pod of the default namespace
  for (const p of spec.params ?? []) {
    if (p === "resource") cmd.resource = ctx.resource || "memory";
    if (p === "latency" && ctx.latency) cmd.latency = ctx.latency;
    if (p === "node?" && ctx.applyToNode && ctx.node) cmd.node = ctx.node;
    if (p === "name") cmd.name = ctx.newNode;
    if (p === "zone" && ctx.newZone) cmd.zone = ctx.newZone;
    if (p === "kubelet") cmd.kubelet = ctx.kubelet !== false;
  }
  if (ctx.forDuration && REVERSIBLE.has(action)) cmd.for = ctx.forDuration;
  return cmd;
}

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

export class FaultPanel {
  /** @param actions the simulation's FAULT_ACTIONS (the page passes them from the server) */
  constructor(root, { t, actions, getContext, send }) {
    this.root = root;
    this.t = t;
    this.getContext = getContext;
    this.send = send;
    const groups = { node: [], pod: [], zone: [], cluster: [] };
    for (const action of actions) groups[scopeOf(action)].push(action);
    root.replaceChildren();
    this.targets = {};
    this.podButtons = [];
    for (const scope of ["node", "pod", "zone", "cluster"]) {
      if (!groups[scope].length) continue;
      const section = el("section", `fault-group scope-${scope}`);
      const title = el("h3", "fault-title");
      const target = el("span", "fault-target");
      target.translate = false;
      this.targets[scope] = target;
      title.append(el("span", "", this.t(`faults.scope-${scope}`)), target);
      section.append(title);
      const buttons = el("div", "fault-buttons");
      for (const action of groups[scope]) {
        const b = el("button", `fault-button a-${action}`, this.t(`action.${action}`));
        b.type = "button";
        b.dataset.fault = action;
        b.dataset.scope = scope;
        b.addEventListener("click", () => this.send(buildCommand(action, this.getContext())));
        if (scope === "pod") {
          b.disabled = true; // until a pod is picked on the cluster view
          b.title = this.t("faults.pick-pod");
          this.podButtons.push(b);
        }
        buttons.append(b);
      }
      section.append(buttons);
      root.append(section);
    }
    if (this.targets.pod) this.targets.pod.textContent = "—";
    root.append(this.#options());
  }

  #options() {
    const box = el("div", "fault-options");
    const field = (label, input) => {
      const l = el("label", "fault-option");
      l.append(el("span", "", label), input);
      return l;
    };
    this.resource = el("select");
    this.resource.translate = false; // resource names are API values (memory, disk, pid)
    for (const r of ["memory", "disk", "pid"]) {
      const o = el("option", "", r);
      o.value = r;
      this.resource.append(o);
    }
    this.forDuration = el("input");
    this.forDuration.placeholder = "30s";
    this.forDuration.size = 5;
    this.latency = el("input");
    this.latency.value = "2s";
    this.latency.size = 5;
    box.append(field(this.t("faults.resource"), this.resource), field(this.t("faults.for"), this.forDuration),
      field(this.t("faults.latency"), this.latency));
    return box;
  }

  /** Shows which node, zone and pod the buttons act on (what was picked on the cluster view). */
  setTarget(target) {
    if ("node" in target && this.targets.node) this.targets.node.textContent = target.node ?? "—";
    if ("zone" in target && this.targets.zone) this.targets.zone.textContent = target.zone || "—";
    if ("pod" in target) {
      if (this.targets.pod) this.targets.pod.textContent = target.pod ? target.pod.split("/").pop() : "—";
      for (const b of this.podButtons) {
        b.disabled = !target.pod;
        b.title = target.pod ? "" : this.t("faults.pick-pod");
      }
    }
  }

  options() {
    return {
      resource: this.resource.value, forDuration: this.forDuration.value.trim(), latency: this.latency.value.trim(),
    };
  }
}
