// @ts-check
// Static diagrams and export, drawn by Mermaid (loaded only when asked: 3.6 MB). Live drawing is
// the incremental SVG renderer; Mermaid re-renders everything and is too slow to follow events.
import { ALL_LANES as LANES } from "#js/sequence/model.js";

// Loading it costs one main-thread task of about half a second and ~4 MB of heap, so it is not
// loaded ahead in idle time (the live view would stall and keep the memory for nothing): it
// starts when the pointer or focus reaches the Diagrams tab, and drawn diagrams are cached in
// localStorage, so later pages show them without Mermaid at all.
let loading = null;
let mermaidTheme = null; // the theme Mermaid was initialised with

const currentTheme = () => (document.documentElement.dataset.theme === "projector" ? "dark" : "default");

export function loadMermaid(src) {
  if (window.mermaid) return Promise.resolve(window.mermaid);
  loading ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = () => {
      mermaidTheme = currentTheme();
      window.mermaid.initialize({
        startOnLoad: false, securityLevel: "strict", theme: mermaidTheme, fontFamily: "inherit",
      });
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
  for (const lane of LANES) {
    if (used.has(lane.id)) lines.push(`    participant ${ACTOR[lane.id]} as ${clean(laneName(lane.id))}`);
  }
  for (const r of rows) {
    const label = clean(r.label);
    if (r.kind === "request") lines.push(`    ${ACTOR[r.from]}->>${ACTOR[r.to]}: ${label}` +
      `${r.failed ? ` ${r.code}` : ""}`);
    else if (r.kind === "lost") lines.push(`    ${ACTOR[r.from]}-x${ACTOR[r.to]}: ${label}`);
    else if (r.kind === "watch") {
      for (const x of r.targets) lines.push(`    ${ACTOR[r.from]}-->>${ACTOR[x]}: watch ${label}`);
    } else if (r.kind === "decision") lines.push(`    Note over ${ACTOR[r.lane]}: ${label}`);
    else if (r.kind === "note") lines.push(`    Note over ${ACTOR[LANES[1].id]},${ACTOR[LANES[3].id]}: ${label}`);
  }
  return lines.join("\n");
}

/** Starts loading Mermaid when the user is about to open the Diagrams tab. */
export function loadOnIntent(tab, src) {
  const start = () => loadMermaid(src).catch(() => {}); // a failure shows when the tab opens
  tab.addEventListener("pointerenter", start, { once: true });
  tab.addEventListener("focus", start, { once: true });
}

/** A short hash of a diagram's text (FNV-1a), for its cache key. */
function hashOf(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36) + text.length.toString(36);
}

function cached(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null; // storage disabled
  }
}

function remember(key, svg) {
  try {
    localStorage.setItem(key, svg);
  } catch {
    // full or disabled: the diagram is drawn again next time
  }
}

/** Renders every `<pre class="mermaid-src">` inside root once (from the cache when it can). */
export async function renderStatic(root, src) {
  let i = 0;
  // A run without volumes leaves their diagram alone (it is not shown there: site.css).
  const volumes = document.body.dataset.volumes === "true";
  for (const pre of root.querySelectorAll("pre.mermaid-src:not([data-done])")) {
    if (pre.hasAttribute("data-volumes") && !volumes) continue;
    const key = `heartbeat-diagram:${src}:${mermaidTheme ?? currentTheme()}:${hashOf(pre.textContent)}`;
    let svg = cached(key);
    if (!svg) {
      const mermaid = await loadMermaid(src);
      ({ svg } = await mermaid.render(`static-diagram-${Date.now()}-${i++}`, pre.textContent));
      remember(key, svg);
    }
    if (pre.dataset.done) continue; // drawn meanwhile (the tab was opened twice)
    const figure = document.createElement("div");
    figure.className = "mermaid-figure";
    figure.innerHTML = svg;
    // Its own width (a phone shows it at three quarters of it, scrolled sideways: small-screens.css).
    const box = figure.querySelector("svg")?.viewBox?.baseVal;
    if (box?.width) figure.style.setProperty("--natural-width", `${box.width}px`);
    pre.dataset.done = "1";
    pre.hidden = true;
    pre.after(figure);
  }
}
