// @ts-check
// Small SVG helpers shared by the live flow diagrams: elements, wrapped text (Latin words and
// CJK characters alike), arrow markers that keep their size whatever the stroke width.

export const SVG_NS = "http://www.w3.org/2000/svg";

export function svgEl(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

// Width of a character in "units" of an average Latin character: a CJK character is about 1.7
// of them, so a line of N units holds N Latin characters or about N/1.7 Chinese ones.
const wide = (ch) => ch.codePointAt(0) >= 0x2e80;
const unitsOf = (s) => [...s].reduce((n, ch) => n + (wide(ch) ? 1.7 : 1), 0);

/**
 * Lines of at most `max` units: breaks between words, after an explicit "\n", and between CJK
 * characters (a short CJK word, up to four characters, stays whole: no orphan 器 on a line of
 * its own); a Latin word longer than a line stays whole.
 */
export function wrapText(text, max) {
  const lines = [];
  for (const paragraph of String(text).split("\n")) {
    // Tokens: spaces, runs of Latin, short CJK runs whole, longer ones character by character.
    const tokens = (paragraph.match(/\s+|[\u2e80-\uffff]+|[^\s\u2e80-\uffff]+/g) ?? [])
      .flatMap((tok) => (wide(tok[0]) && [...tok].length > 4 ? [...tok] : [tok]));
    let line = "";
    for (const token of tokens) {
      if (line && unitsOf(line + token) > max && !/^\s+$/.test(token)) {
        lines.push(line.trim());
        line = token.trimStart();
      } else {
        line += token;
      }
    }
    if (line.trim()) lines.push(line.trim());
  }
  return lines.length ? lines : [""];
}

/**
 * A <text> of several lines centred on (x, y): one <tspan> per line.
 * @param {string[]} lines
 * @param {{x: number, y: number, lineHeight?: number, cls?: string, anchor?: string}} where
 */
export function multilineText(lines, { x, y, lineHeight = 13, cls, anchor = "middle" }) {
  const text = svgEl("text", {
    x, y: y - ((lines.length - 1) * lineHeight) / 2, class: cls, "text-anchor": anchor, "dominant-baseline": "central",
  });
  lines.forEach((line, i) => {
    text.append(svgEl("tspan", { x, dy: i ? lineHeight : 0 }, line));
  });
  return text;
}

/** An arrowhead marker sized in user units (a thick, lit or pulsing edge keeps a normal head). */
export function arrowMarker(id, cls = "marker") {
  const marker = svgEl("marker", {
    id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9,
    markerUnits: "userSpaceOnUse", orient: "auto-start-reverse",
  });
  marker.append(svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: cls }));
  const defs = svgEl("defs");
  defs.append(marker);
  return defs;
}

/**
 * A flowchart of boxes and edges (the live flows' shape): `nodes` {id: {x, y, w, h, key, shape}}
 * with shape "question" (a hexagon) or "step ..." (a rounded box), `edges` [{id, label, d, lx, ly,
 * anchor}], texts looked up with `t`. Returns the svg, the edges' group and every element by id
 * (to light). Edges first, then boxes, then the edge labels over both.
 */
export function flowchart({ width, height, cls, marker, nodes, edges, t }) {
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, class: `flow ${cls}` });
  svg.append(arrowMarker(marker));
  const items = new Map();
  const edgeGroup = svgEl("g");
  const labels = [];
  for (const { id, label, d, lx, ly, anchor } of edges) {
    const path = svgEl("path", { d, class: "edge", "marker-end": `url(#${marker})` });
    path.dataset.id = id;
    edgeGroup.append(path);
    items.set(id, path);
    if (label) labels.push(svgEl("text", { x: lx, y: ly, class: "edge-label", "text-anchor": anchor ?? "middle" }, t(label)));
  }
  svg.append(edgeGroup);
  for (const [id, n] of Object.entries(nodes)) {
    const g = svgEl("g", { class: `fc ${n.shape}` });
    g.dataset.id = id;
    const left = n.x - n.w / 2;
    const top = n.y - n.h / 2;
    g.append(n.shape === "question"
      ? svgEl("path", {
        d: `M${left + 14},${top} H${left + n.w - 14} L${left + n.w},${n.y} ` +
          `L${left + n.w - 14},${top + n.h} H${left + 14} L${left},${n.y} Z`,
      })
      : svgEl("rect", { x: left, y: top, width: n.w, height: n.h, rx: 6 }));
    // 7 px a character: room for the bold of a lit box.
    const room = n.w - (n.shape === "question" ? 36 : 12);
    g.append(multilineText(wrapText(t(n.key), Math.floor(room / 7)), { x: n.x, y: n.y, lineHeight: 13 }));
    svg.append(g);
    items.set(id, g);
  }
  svg.append(...labels);
  return { svg, items, edgeGroup };
}
