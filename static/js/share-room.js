// @ts-check
// For the room: the viewer link as a large QR code (drawn by the site, GET /api/runs/<id>/qr.svg), and a recipe
// link of the session (POST /api/runs/<id>/recipe with the control token, which run-page.js keeps in this tab).

import { viewerLink } from "#js/api.js";

/** @param {string} runId */
function showQr(runId) {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById("qr-dialog"));
  const image = /** @type {HTMLImageElement} */ (document.getElementById("qr-image"));
  if (!image.src) image.src = image.dataset.src; // fetched the first time it is shown, not on every page load
  document.getElementById("qr-link").textContent = viewerLink(runId);
  dialog.showModal();
}

/** @param {string} runId */
async function takeRecipe(runId) {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById("recipe-dialog"));
  const link = /** @type {HTMLInputElement} */ (document.getElementById("recipe-link"));
  const open = /** @type {HTMLAnchorElement} */ (document.getElementById("recipe-open"));
  const error = document.getElementById("recipe-error");
  link.value = "";
  error.textContent = "";
  open.removeAttribute("href");
  dialog.showModal();
  const token = sessionStorage.getItem(`heartbeat-control-${runId}`);
  const response = await fetch(`/api/runs/${runId}/recipe`, {
    method: "POST", credentials: "omit", headers: { Accept: "application/json", Authorization: `Bearer ${token}` },
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    error.textContent = body.message ?? response.statusText;
    return;
  }
  link.value = body.url;
  open.href = body.url;
  link.select();
}

/**
 * The run page's "Show QR code" and "Recipe link" buttons.
 * @param {{run: string}} config  the page's run-config
 */
export function shareRoom(config) {
  document.getElementById("show-qr")?.addEventListener("click", () => showQr(config.run));
  document.getElementById("take-recipe")?.addEventListener("click", () => takeRecipe(config.run));
}
