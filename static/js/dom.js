// @ts-check
// Small DOM writers for texts and bars that change every frame or second.

/** A new element with a class and a text (both optional). */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * Sets an element's text. An element holding a single text node keeps it and only its data
 * changes, which lays out that text again; replacing the node (textContent) would also remove
 * and create a layout object each time.
 */
export function setText(node, text) {
  if (!node) return;
  const first = node.firstChild;
  if (first && first.nodeType === Node.TEXT_NODE && !first.nextSibling) {
    if (first.data !== text) first.data = text;
  } else if (node.textContent !== text) {
    node.textContent = text;
  }
}

/**
 * The background-size of a bar's fill at `share` (0..1). Never quite empty: a fill with nothing
 * drawn but its base colour is painted as a plain colour, and each switch between the two makes
 * Chrome redo the page's compositing layers (a Lease renewal empties a bar several times a
 * second on a 100-node page); 1 px of fill is drawn instead.
 */
export function barSize(share) {
  return `max(1px, ${share * 100}%) 100%`;
}

/**
 * Resolves in a new task, so the browser can run input, rendering and other tasks in between:
 * the page's opening is split into steps that each stay well under 50 ms (a long task) instead
 * of one that holds the main thread. `scheduler.yield` where the browser has it (it keeps this
 * work ahead of other queued tasks), otherwise a MessageChannel message (no 4 ms timer clamp).
 */
export function nextTask() {
  if (globalThis.scheduler?.yield) return globalThis.scheduler.yield();
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close(); // done with: a port left open keeps a Node.js test process alive
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
