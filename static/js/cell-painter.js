// @ts-check
// How a cell of the cluster overview looks, drawn on a canvas: one drawing for the zones'
// canvases and the legend's keys. A cell's fill is its node's kubectl STATUS (hatched when
// cordoned); its strongest taint is marked in the mark colour, NoSchedule by a band along its
// top, NoExecute by its upper right half; its Lease age is a bar along its foot, in AGE_STEPS
// steps of the grace period (none while renewed on time, full once it ran out).
//
// Why a canvas: 5,000 styled elements cost Chrome's paint ~8 ms a frame at 10 frames a second
// (their display items are recorded again whenever anything in the panel changes); a canvas is
// one image, and a changed cell is a few rectangles drawn by the script.

export const AGE_STEPS = 3;

// The colours come from the style sheet (the theme's): each is the `color` of a probe element.
const COLOURS = ["ready", "not-ready", "unknown", "mark", "hatch"];

/** Probe elements whose computed colours readColours reads (to put somewhere hidden in the page). */
export function colourProbes() {
  return COLOURS.map((name) => {
    const probe = document.createElement("span");
    probe.className = `ov-colour-${name}`;
    return probe;
  });
}

/** The theme's colours, from the probes (a style recalculation: once per theme). */
export function readColours(probes) {
  const colours = {};
  COLOURS.forEach((name, i) => {
    colours[name] = getComputedStyle(probes[i]).color;
  });
  return colours;
}

/** Draws one cell (`look`: {status, taint, age}) at x, y, `size` CSS pixels square. */
export function paintCell(ctx, x, y, size, look, colours) {
  const status = look.status ?? "";
  ctx.fillStyle = status.startsWith("Ready") ? colours.ready
    : status.startsWith("NotReady") ? colours["not-ready"] : colours.unknown;
  ctx.fillRect(x, y, size, size);
  if (status.endsWith("SchedulingDisabled")) hatch(ctx, x, y, size, colours.hatch);
  ctx.fillStyle = colours.mark;
  if (look.taint === "NoSchedule") ctx.fillRect(x, y, size, markWidth(size, 0.2));
  if (look.taint === "NoExecute") {
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x + size, y);
    ctx.lineTo(x + size, y + size);
    ctx.closePath();
    ctx.fill();
  }
  if (look.age > 0) {
    const bar = markWidth(size, 0.16);
    ctx.fillRect(x, y + size - bar, Math.round((size * look.age) / AGE_STEPS), bar);
  }
}

/** A mark's width: a share of the cell, at least 1 px, at most 4 (a large cell keeps its colour). */
const markWidth = (size, share) => Math.min(4, Math.max(1, Math.round(size * share)));

/** Diagonal stripes over the cell: cordoned (SchedulingDisabled). */
function hatch(ctx, x, y, size, colour) {
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, size, size);
  ctx.clip();
  ctx.strokeStyle = colour;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  for (let d = -size; d < size; d += 4) {
    ctx.moveTo(x + d, y + size);
    ctx.lineTo(x + d + size, y);
  }
  ctx.stroke();
  ctx.restore();
}

/** A canvas of `width` x `height` CSS pixels, sharp on the screen's pixel ratio; its context. */
export function sizeCanvas(canvas, width, height) {
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(width * ratio));
  canvas.height = Math.max(1, Math.round(height * ratio));
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return ctx;
}
