// @ts-check
// The dual-heartbeat architecture as a live diagram: the focused kubelet's two write paths into
// kube-apiserver, the watches that feed the controllers and the controllers' writes back. An
// edge pulses when an event travels along it, so the Lease path visibly goes quiet on a crash.
import { setText } from "#js/dom.js";
import { APISERVER } from "#js/sequence/model.js";
import { arrowMarker, multilineText, svgEl, wrapText } from "#js/flows/svg.js";

// Drawn at about the width of the side panel on a 1920-pixel screen, so its text keeps its size
// there; long names wrap inside their boxes (in both languages) instead of running out.
const W = 520;
const H = 300;

// [id, x, y, w, h, label key, css class]
/** @type {[id: string, x: number, y: number, w: number, h: number, label: string, cls: string][]} */
const BOXES = [
  ["kubelet", 4, 34, 134, 206, "arch.kubelet", "group"],
  ["lease-ctl", 12, 78, 118, 40, "arch.lease-ctl", "comp"],
  ["status-ctl", 12, 160, 118, 40, "arch.status-ctl", "comp"],
  ["apiserver", 188, 4, 152, 292, "arch.apiserver", "group api"],
  ["obj-lease", 196, 30, 136, 64, "arch.obj-lease", "obj"],
  ["obj-node", 196, 124, 136, 50, "arch.obj-node", "obj"],
  ["obj-pods", 196, 204, 136, 64, "arch.obj-pods", "obj"],
  ["nlc", 392, 4, 124, 62, "arch.nlc", "comp"],
  ["tec", 392, 78, 124, 44, "arch.tec", "comp"],
  ["sched", 392, 134, 124, 32, "arch.sched", "comp"],
  ["eps", 392, 178, 124, 44, "arch.eps", "comp"],
  ["rs", 392, 234, 124, 44, "arch.rs", "comp"],
];

// [id, path, label key, label x, label y]: the kubelet's two paths are captioned under their
// boxes (the gap to the API server is too narrow for a label), the others beside their edge.
/** @type {[id: string, d: string, label: string | null, lx?: number, ly?: number][]} */
const EDGES = [
  ["lease", "M130,98 C164,98 164,62 196,62", "arch.e-lease", 71, 134],
  ["status", "M130,180 C164,180 164,149 196,149", "arch.e-status", 71, 216],
  ["watch-nlc", "M332,54 C362,54 362,30 392,30", "arch.e-watch", 362, 30],
  ["nlc-write", "M392,52 C356,62 368,142 332,142", "arch.e-nlc-write", 362, 104],
  ["watch-tec", "M332,156 C362,156 362,100 392,100", "", 0, 0],
  ["tec-write", "M392,112 C356,122 368,222 332,222", "arch.e-tec-write", 362, 196],
  ["watch-sched", "M332,236 C364,236 362,150 392,150", "", 0, 0],
  ["sched-write", "M392,158 C364,170 362,242 332,242", "", 0, 0],
  ["watch-eps", "M332,248 C364,248 362,200 392,200", "", 0, 0],
  ["eps-write", "M392,210 C364,220 362,254 332,254", "", 0, 0],
  ["rs-write", "M392,256 C364,256 362,262 332,262", "arch.e-rs", 362, 284],
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
    const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, class: "flow arch" });
    svg.append(arrowMarker("arch-head"));
    this.values = new Map();
    for (const [id, x, y, w, h, label, cls] of BOXES) {
      const g = svgEl("g", { class: `box ${cls} b-${id}` });
      g.append(svgEl("rect", { x, y, width: w, height: h, rx: 6 }));
      const group = cls.includes("group");
      const lines = wrapText(t(label), Math.floor((w - 8) / 6.9));
      const hasValue = group || ["obj-lease", "obj-node", "obj-pods", "nlc"].includes(id);
      // Title lines then the live value, centred in the box (a group's title sits at its top).
      const block = lines.length * 13 + (hasValue ? 12 : 0);
      const top = group ? y + 6 : y + (h - block) / 2;
      g.append(multilineText(lines, { x: x + w / 2, y: top + (lines.length * 13) / 2, cls: "box-title" }));
      if (hasValue) {
        const value = svgEl("text", {
          x: x + w / 2, y: top + lines.length * 13 + 6, "text-anchor": "middle", "dominant-baseline": "central",
          class: "box-value",
        });
        g.append(value);
        this.values.set(id, value);
      }
      svg.append(g);
    }
    // Edges over the boxes (they end on the boxes' borders), labels over both, with a halo.
    this.edges = new Map();
    this.pulses = new Map(); // edge id -> when its pulse started (null: at the next pass)
    const labels = [];
    for (const [id, d, label, lx, ly] of EDGES) {
      const path = svgEl("path", { d, class: `edge e-${id}`, "marker-end": "url(#arch-head)" });
      path.dataset.edge = id;
      svg.append(path);
      this.edges.set(id, path);
      if (label) {
        labels.push(multilineText(wrapText(t(label), id === "lease" || id === "status" ? 24 : 10),
          { x: lx, y: ly, lineHeight: 11, cls: "edge-label" }));
      }
    }
    svg.append(...labels);
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
      const age = start === null ? 0 : now - start;
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
