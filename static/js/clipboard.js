// @ts-check
// Copying a link or a command line for the user.

/**
 * Puts the text of `element` (an input's value, else the element's text) on the clipboard. The text is
 * selected too, so that where a browser refuses the Clipboard API (a page served over plain http from
 * another machine) the older copy command takes the selection, and the user sees what was copied.
 */
export async function copyText(element) {
  let text;
  if (typeof element.select === "function") {
    element.select();
    text = element.value;
  } else {
    const range = document.createRange();
    range.selectNodeContents(element);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    text = element.textContent;
  }
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    document.execCommand("copy");
  }
}
