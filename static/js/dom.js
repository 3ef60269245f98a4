// Small DOM writers for text that changes every frame or second.

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
