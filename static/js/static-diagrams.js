// Static diagrams and export, drawn by Mermaid (loaded only when asked: 3.6 MB). Live drawing is
// the incremental SVG renderer; Mermaid re-renders everything and is too slow to follow events.
import { LANES } from "./sequence/model.js";

let loading = null;

export function loadMermaid(src) {
  if (window.mermaid) return Promise.resolve(window.mermaid);
  loading ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = () => {
      const dark = document.documentElement.dataset.theme === "projector";
      window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "default", fontFamily: "inherit" });
      resolve(window.mermaid);
    };
    script.onerror = reject;
    document.head.append(script);
  });
  return loading;
}

const ACTOR = Object.fromEntries(LANES.map((l) => [l.id, l.id.replace(/[^a-zA-Z0-9]/g, "_")]));
const clean = (text) => String(text).replace(/[;#:\n]/g, " ").trim();

/** Mermaid text for the last rows of the live sequence diagram (export / print). */
export function sequenceToMermaid(rows, laneName) {
  const used = new Set();
  for (const r of rows) {
    if (r.from) used.add(r.from);
    if (r.to) used.add(r.to);
    if (r.lane) used.add(r.lane);
    for (const x of r.targets ?? []) used.add(x);
  }
  const lines = ["sequenceDiagram"];
  for (const lane of LANES) if (used.has(lane.id)) lines.push(`    participant ${ACTOR[lane.id]} as ${clean(laneName(lane.id))}`);
  for (const r of rows) {
    const label = clean(r.label);
    if (r.kind === "request") lines.push(`    ${ACTOR[r.from]}->>${ACTOR[r.to]}: ${label}${r.failed ? ` ${r.code}` : ""}`);
    else if (r.kind === "lost") lines.push(`    ${ACTOR[r.from]}-x${ACTOR[r.to]}: ${label}`);
    else if (r.kind === "watch") for (const x of r.targets) lines.push(`    ${ACTOR[r.from]}-->>${ACTOR[x]}: watch ${label}`);
    else if (r.kind === "decision") lines.push(`    Note over ${ACTOR[r.lane]}: ${label}`);
    else if (r.kind === "note") lines.push(`    Note over ${ACTOR[LANES[1].id]},${ACTOR[LANES[3].id]}: ${label}`);
  }
  return lines.join("\n");
}

/** Renders every `<pre class="mermaid-src">` inside root once. */
export async function renderStatic(root, src) {
  const mermaid = await loadMermaid(src);
  let i = 0;
  for (const pre of root.querySelectorAll("pre.mermaid-src:not([data-done])")) {
    const { svg } = await mermaid.render(`static-diagram-${Date.now()}-${i++}`, pre.textContent);
    const figure = document.createElement("div");
    figure.className = "mermaid-figure";
    figure.innerHTML = svg;
    pre.dataset.done = "1";
    pre.hidden = true;
    pre.after(figure);
  }
}
