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

/** A <text> of several lines centred on (x, y): one <tspan> per line. */
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
