// The dual-heartbeat architecture as a live diagram: the focused kubelet's two write paths into
// kube-apiserver, the watches that feed the controllers and the controllers' writes back. An
// edge pulses when an event travels along it, so the Lease path visibly goes quiet on a crash.
import { setText } from "../dom.js";
import { APISERVER } from "../sequence/model.js";

const W = 720;
const H = 330;

// [id, x, y, w, h, label key, css class]
const BOXES = [
  ["kubelet", 8, 40, 170, 190, "arch.kubelet", "group"],
  ["lease-ctl", 18, 78, 150, 44, "arch.lease-ctl", "comp"],
  ["status-ctl", 18, 160, 150, 44, "arch.status-ctl", "comp"],
  ["apiserver", 300, 20, 180, 290, "arch.apiserver", "group api"],
  ["obj-lease", 310, 66, 160, 40, "arch.obj-lease", "obj"],
  ["obj-node", 310, 150, 160, 40, "arch.obj-node", "obj"],
  ["obj-pods", 310, 236, 160, 40, "arch.obj-pods", "obj"],
  ["nlc", 552, 20, 160, 56, "arch.nlc", "comp"],
  ["tec", 552, 96, 160, 44, "arch.tec", "comp"],
  ["sched", 552, 160, 160, 40, "arch.sched", "comp"],
  ["eps", 552, 216, 160, 40, "arch.eps", "comp"],
  ["rs", 552, 272, 160, 40, "arch.rs", "comp"],
];

// [id, path, label key, label x, label y]
const EDGES = [
  ["lease", "M168,100 L310,86", "arch.e-lease", 239, 84],
  ["status", "M168,182 L310,170", "arch.e-status", 239, 166],
  ["watch-nlc", "M470,86 C505,70 520,50 552,48", "arch.e-watch", 508, 58],
  ["nlc-write", "M552,62 C515,90 505,150 470,166", "arch.e-nlc-write", 512, 124],
  ["watch-tec", "M470,176 C505,150 520,120 552,118", "", 0, 0],
  ["tec-write", "M552,130 C515,170 505,240 470,250", "arch.e-tec-write", 518, 214],
  ["watch-sched", "M470,262 C505,220 520,186 552,180", "", 0, 0],
  ["sched-write", "M552,190 C520,220 505,250 470,258", "", 0, 0],
  ["watch-eps", "M470,266 C505,246 520,236 552,236", "", 0, 0],
  ["eps-write", "M552,246 C520,262 505,268 470,270", "", 0, 0],
  ["rs-write", "M552,292 C515,290 505,280 470,274", "arch.e-rs", 515, 306],
];

const WRITE_EDGE = {
  "node-lifecycle-controller": "nlc-write",
  "taint-eviction-controller": "tec-write",
  "kube-scheduler": "sched-write",
  "endpointslice-controller": "eps-write",
  "replicaset-controller": "rs-write",
  "daemonset-controller": "rs-write",
  "pod-garbage-collector": "rs-write",
};
const WATCH_EDGE = {
  "node-lifecycle-controller": "watch-nlc",
  "taint-eviction-controller": "watch-tec",
  "kube-scheduler": "watch-sched",
  "endpointslice-controller": "watch-eps",
};

/** Which edges an event travels along ({id, failed}); kubelet edges only for the focused node. */
export function edgesFor(event, focus) {
  if (event.type === "write" || event.type === "read" || event.type === "request-failed") {
    const failed = event.type === "request-failed" || event.code >= 400;
    if (event.component === "kubelet-lease") return event.node === focus ? [{ id: "lease", failed }] : [];
    if (event.component === "kubelet-status") return event.node === focus ? [{ id: "status", failed }] : [];
    if (event.type !== "write") return [];
    const id = WRITE_EDGE[event.component];
    return id ? [{ id, failed }] : [];
  }
  if (event.type === "watch") {
    return (event.to ?? []).map((c) => WATCH_EDGE[c]).filter(Boolean).map((id) => ({ id, failed: false }));
  }
  return [];
}

export class ArchitectureDiagram {
  constructor(root, { t }) {
    this.t = t;
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("class", "flow arch");
    svg.innerHTML = `<defs><marker id="arch-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="marker"/></marker></defs>`;
    this.edges = new Map();
    this.pulses = new Map(); // edge id -> when its pulse started (null: at the next pass)
    for (const [id, d, label, lx, ly] of EDGES) {
      const path = document.createElementNS(ns, "path");
      path.setAttribute("d", d);
      path.setAttribute("class", `edge e-${id}`);
      path.setAttribute("marker-end", "url(#arch-head)");
      path.dataset.edge = id;
      svg.append(path);
      this.edges.set(id, path);
      if (label) {
        const text = document.createElementNS(ns, "text");
        text.setAttribute("x", lx);
        text.setAttribute("y", ly);
        text.setAttribute("class", "edge-label");
        text.setAttribute("text-anchor", "middle");
        text.textContent = t(label);
        svg.append(text);
      }
    }
    this.values = new Map();
    for (const [id, x, y, w, h, label, cls] of BOXES) {
      const g = document.createElementNS(ns, "g");
      g.setAttribute("class", `box ${cls} b-${id}`);
      g.innerHTML = `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="6"/>`;
      const title = document.createElementNS(ns, "text");
      title.setAttribute("x", x + w / 2);
      title.setAttribute("y", y + (cls.includes("group") ? 16 : 17));
      title.setAttribute("text-anchor", "middle");
      title.setAttribute("class", "box-title");
      title.textContent = t(label);
      g.append(title);
      const value = document.createElementNS(ns, "text");
      value.setAttribute("x", x + w / 2);
      value.setAttribute("y", y + (cls.includes("group") ? 32 : 33));
      value.setAttribute("text-anchor", "middle");
      value.setAttribute("class", "box-value");
      g.append(value);
      this.values.set(id, value);
      svg.append(g);
    }
    root.replaceChildren(svg);
    this.svg = svg;
  }

  /**
   * An event travelled along its edges: they light up and fade over ~0.9 s, in steps drawn by
   * the page's frame pass (`flush`), so a pulse costs no frame of its own.
   */
  pulse(event, focus) {
    for (const { id, failed } of edgesFor(event, focus)) {
      const path = this.edges.get(id);
      if (!path) continue;
      if (path.classList.contains("failed") !== failed) path.classList.toggle("failed", failed);
      path.dataset.pulsedAt = String(event.seq);
      this.pulses.set(id, null); // starts at the next pass
    }
  }

  /** Draws the pulses' current step; returns whether one is still fading. */
  flush(now) {
    for (const [id, start] of this.pulses) {
      if (start === null) this.pulses.set(id, now);
      const age = now - (this.pulses.get(id) ?? now);
      const level = age < 250 ? "3" : age < 550 ? "2" : age < 900 ? "1" : "";
      const path = this.edges.get(id);
      if ((path.dataset.pulse ?? "") !== level) {
        if (level) path.dataset.pulse = level;
        else delete path.dataset.pulse;
      }
      if (!level) this.pulses.delete(id);
    }
    return this.pulses.size > 0;
  }

  /** Stops every pulse (the diagram is not on screen). */
  clear() {
    if (!this.pulses.size) return;
    for (const id of this.pulses.keys()) delete this.edges.get(id).dataset.pulse;
    this.pulses.clear();
  }

  /** Live values under the boxes: the focused node's name, Lease age, Ready and pod counts. */
  setValues(values) {
    for (const [id, text] of Object.entries(values)) {
      const el = this.values.get(id);
      setText(el, text);
    }
  }
}

export { APISERVER };
