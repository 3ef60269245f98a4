// @ts-check
// The health-judgement flowchart of one monitorNodeHealth pass (docs/kubernetes-node-health.md
// §3.2-§3.6), drawn as the controller really decides — not the popular "Lease older than 40 s"
// shortcut (its §8) — with the branch taken in the focused node's latest pass highlighted from
// its decision records.
import { flowchart } from "#js/flows/svg.js";

// Drawn at about the side panel's width on a 1920-pixel screen (its text keeps its size there):
// the questions down the left, what a "yes" leads to on the right, the outcomes at the bottom.
const W = 520;
const H = 470;
const NODES = {
  pass: { x: 170, y: 20, w: 280, h: 28, key: "health.pass", shape: "step" },
  "q-signal": { x: 170, y: 76, w: 300, h: 46, key: "health.q-signal", shape: "question" },
  probe: { x: 433, y: 76, w: 170, h: 34, key: "health.probe", shape: "step" },
  "q-grace": { x: 170, y: 150, w: 300, h: 40, key: "health.q-grace", shape: "question" },
  unknown: { x: 433, y: 150, w: 170, h: 50, key: "health.unknown", shape: "step bad" },
  keep: { x: 170, y: 216, w: 240, h: 30, key: "health.keep", shape: "step" },
  "q-observed": { x: 170, y: 280, w: 280, h: 36, key: "health.q-observed", shape: "question" },
  untaint: { x: 82, y: 362, w: 150, h: 46, key: "health.untaint", shape: "step good" },
  "enq-nr": { x: 252, y: 362, w: 150, h: 46, key: "health.enq-nr", shape: "step bad" },
  "enq-ur": { x: 433, y: 362, w: 170, h: 46, key: "health.enq-ur", shape: "step bad" },
  "mark-pods": { x: 82, y: 442, w: 150, h: 44, key: "health.mark-pods", shape: "step bad" },
  zones: { x: 352, y: 442, w: 300, h: 40, key: "health.zones", shape: "step" },
};

// [id, from, to, label key, path, label x, label y]
const EDGES = [
  ["pass-signal", "pass", "q-signal", "", "M170,34 L170,52"],
  ["signal-yes", "q-signal", "probe", "health.yes", "M320,76 L347,76", 334, 66],
  ["signal-no", "q-signal", "q-grace", "health.no", "M170,99 L170,129", 182, 114],
  ["probe-grace", "probe", "q-grace", "", "M433,93 L433,112 L250,112 L250,129"],
  ["grace-yes", "q-grace", "unknown", "health.yes", "M320,150 L347,150", 334, 140],
  ["grace-no", "q-grace", "keep", "health.no", "M170,170 L170,200", 182, 185],
  ["keep-observed", "keep", "q-observed", "", "M170,231 L170,261"],
  ["unknown-observed", "unknown", "q-observed", "", "M433,175 L433,280 L311,280"],
  ["observed-true", "q-observed", "untaint", "health.true", "M112,298 L86,338", 84, 314],
  ["observed-false", "q-observed", "enq-nr", "health.false", "M210,298 L246,338", 246, 314],
  ["observed-unknown", "q-observed", "enq-ur", "health.unknown-branch", "M292,290 L420,338", 382, 304],
  ["untaint-mark", "untaint", "mark-pods", "health.now-not-true", "M82,385 L82,419", 132, 402],
  ["to-zones", "enq-nr", "zones", "", "M262,385 L300,421"],
  ["to-zones-ur", "enq-ur", "zones", "", "M420,385 L396,421"],
];

// Branches of tryUpdateNodeHealth that refresh probeTimestamp (simulation `last_pass` ids).
const PROBE_MOVED = new Set(["lease-renewed", "status-posted", "status-posted+lease", "first-seen", "ready-appeared",
  "ready-vanished"]);

/**
 * The flowchart elements one monitor pass lit up for a node. `pass`: {t, record, decisions}
 * where `record` is the node's entry of the pass summary (branch, deadline, observed, current)
 * and `decisions` are the NLC's decisions about that node during the pass.
 */
export function healthPath(pass) {
  const lit = new Set();
  if (!pass?.record) return lit;
  const { record, decisions = [], t } = pass;
  const rules = new Set(decisions.map((d) => d.rule));
  ["pass", "pass-signal", "q-signal", "q-grace", "q-observed"].forEach((x) => lit.add(x));
  if (PROBE_MOVED.has(record.branch)) ["signal-yes", "probe", "probe-grace"].forEach((x) => lit.add(x));
  else lit.add("signal-no");
  const expired = rules.has("nlc.mark-unknown") || (record.deadline !== undefined && t > record.deadline);
  if (expired) ["grace-yes", "unknown", "unknown-observed"].forEach((x) => lit.add(x));
  else ["grace-no", "keep", "keep-observed"].forEach((x) => lit.add(x));
  const observed = record.observed ?? null;
  if (observed === "True") ["observed-true", "untaint"].forEach((x) => lit.add(x));
  else if (observed === "False") ["observed-false", "enq-nr"].forEach((x) => lit.add(x));
  else ["observed-unknown", "enq-ur"].forEach((x) => lit.add(x));
  if (rules.has("nlc.mark-pods-not-ready")) ["untaint-mark", "mark-pods"].forEach((x) => lit.add(x));
  if (rules.has("nlc.enqueue-taint")) {
    ["zones", observed === "False" ? "to-zones" : "to-zones-ur"].forEach((x) => lit.add(x));
  }
  return lit;
}

export class HealthFlowchart {
  constructor(root, { t }) {
    const { svg, items } = flowchart({
      width: W, height: H, cls: "health", marker: "health-head", nodes: NODES, t,
      edges: EDGES.map(([id, , , label, d, lx, ly]) => ({ id, label, d, lx, ly })),
    });
    this.items = items;
    root.replaceChildren(svg);
    this.svg = svg;
    this.litKey = "";
  }

  highlight(pass) {
    const lit = healthPath(pass);
    const key = [...lit].sort().join(",");
    if (key === this.litKey) return;
    this.litKey = key;
    for (const [id, el] of this.items) el.classList.toggle("lit", lit.has(id));
  }
}
