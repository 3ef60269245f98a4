// The health-judgement flowchart of one monitorNodeHealth pass (reference §3.2–3.6), drawn as
// the controller really decides — not the seed's "Lease older than 40 s" shortcut — with the
// branch taken in the focused node's latest pass highlighted from its decision records.

const NODES = {
  pass: { x: 175, y: 24, w: 300, h: 30, key: "health.pass", shape: "step" },
  "q-signal": { x: 175, y: 82, w: 320, h: 40, key: "health.q-signal", shape: "question" },
  probe: { x: 430, y: 82, w: 150, h: 34, key: "health.probe", shape: "step" },
  "q-grace": { x: 175, y: 152, w: 320, h: 40, key: "health.q-grace", shape: "question" },
  unknown: { x: 430, y: 152, w: 150, h: 46, key: "health.unknown", shape: "step bad" },
  keep: { x: 175, y: 218, w: 260, h: 30, key: "health.keep", shape: "step" },
  "q-observed": { x: 250, y: 282, w: 300, h: 36, key: "health.q-observed", shape: "question" },
  untaint: { x: 85, y: 360, w: 160, h: 46, key: "health.untaint", shape: "step good" },
  "enq-nr": { x: 260, y: 360, w: 160, h: 46, key: "health.enq-nr", shape: "step bad" },
  "enq-ur": { x: 430, y: 360, w: 150, h: 46, key: "health.enq-ur", shape: "step bad" },
  "mark-pods": { x: 85, y: 440, w: 160, h: 46, key: "health.mark-pods", shape: "step bad" },
  zones: { x: 330, y: 440, w: 290, h: 34, key: "health.zones", shape: "step" },
};

// [id, from, to, label key, points]
const EDGES = [
  ["pass-signal", "pass", "q-signal", "", "M175,39 L175,62"],
  ["signal-yes", "q-signal", "probe", "health.yes", "M335,82 L355,82"],
  ["signal-no", "q-signal", "q-grace", "health.no", "M175,102 L175,132"],
  ["probe-grace", "probe", "q-grace", "", "M430,99 L430,120 L300,120 L300,140"],
  ["grace-yes", "q-grace", "unknown", "health.yes", "M335,152 L355,152"],
  ["grace-no", "q-grace", "keep", "health.no", "M175,172 L175,203"],
  ["keep-observed", "keep", "q-observed", "", "M175,233 L175,264"],
  ["unknown-observed", "unknown", "q-observed", "", "M430,175 L430,264 L380,264"],
  ["observed-true", "q-observed", "untaint", "health.true", "M150,300 L95,337"],
  ["observed-false", "q-observed", "enq-nr", "health.false", "M260,300 L260,337"],
  ["observed-unknown", "q-observed", "enq-ur", "health.unknown-branch", "M360,300 L425,337"],
  ["untaint-mark", "untaint", "mark-pods", "health.now-not-true", "M85,383 L85,417"],
  ["to-zones", "enq-nr", "zones", "", "M260,383 L300,423"],
];

// Branches of tryUpdateNodeHealth that refresh probeTimestamp (simulation `last_pass` ids).
const PROBE_MOVED = new Set(["lease-renewed", "status-posted", "status-posted+lease", "first-seen", "ready-appeared", "ready-vanished"]);

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
  if (rules.has("nlc.enqueue-taint")) ["to-zones", "zones"].forEach((x) => lit.add(x));
  return lit;
}

const wrap = (text, max) => {
  const words = String(text).split(/(\s+)/);
  const lines = [""];
  for (const w of words) {
    if ((lines.at(-1) + w).length > max && lines.at(-1).trim()) lines.push(w.trimStart());
    else lines[lines.length - 1] += w;
  }
  return lines.map((l) => l.trim()).filter(Boolean);
};

export class HealthFlowchart {
  constructor(root, { t }) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 640 500");
    svg.setAttribute("class", "flow health");
    svg.innerHTML = `<defs><marker id="health-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="marker"/></marker></defs>`;
    this.items = new Map();
    for (const [id, , , label, d] of EDGES) {
      const path = document.createElementNS(ns, "path");
      path.setAttribute("d", d);
      path.setAttribute("class", "edge");
      path.setAttribute("marker-end", "url(#health-head)");
      path.dataset.id = id;
      svg.append(path);
      this.items.set(id, path);
      if (label) {
        const m = d.match(/M([\d.]+),([\d.]+) L([\d.]+),([\d.]+)/);
        const text = document.createElementNS(ns, "text");
        text.setAttribute("x", (Number(m[1]) + Number(m[3])) / 2 + 4);
        text.setAttribute("y", (Number(m[2]) + Number(m[4])) / 2 - 3);
        text.setAttribute("class", "edge-label");
        text.textContent = t(label);
        svg.append(text);
      }
    }
    for (const [id, n] of Object.entries(NODES)) {
      const g = document.createElementNS(ns, "g");
      g.setAttribute("class", `fc ${n.shape}`);
      g.dataset.id = id;
      const left = n.x - n.w / 2;
      const top = n.y - n.h / 2;
      g.innerHTML = n.shape === "question"
        ? `<path d="M${left + 14},${top} H${left + n.w - 14} L${left + n.w},${n.y} L${left + n.w - 14},${top + n.h} H${left + 14} L${left},${n.y} Z"/>`
        : `<rect x="${left}" y="${top}" width="${n.w}" height="${n.h}" rx="6"/>`;
      const lines = wrap(t(n.key), Math.max(12, Math.floor(n.w / 6.6)));
      lines.forEach((line, i) => {
        const text = document.createElementNS(ns, "text");
        text.setAttribute("x", n.x);
        text.setAttribute("y", n.y + 4 + (i - (lines.length - 1) / 2) * 13);
        text.setAttribute("text-anchor", "middle");
        text.textContent = line;
        g.append(text);
      });
      svg.append(g);
      this.items.set(id, g);
    }
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
