// @ts-check
// "Your own kubectl": the line to paste for this run's Kubernetes API (docs/kubectl.md). The viewer line watches
// the nodes; on a trainer's page a closed section holds the line that writes with the control token.

import { siteOrigin } from "#js/api.js";
import { copyText } from "#js/clipboard.js";

/** The server URL of the run's API; `token` goes into it over plain HTTP, where kubectl sends no --token. */
export function kubectlLines(origin, runId, token) {
  const server = `${origin}/k8s/runs/${runId}`;
  const lines = { watch: `kubectl --server ${server} get nodes -w`, control: null };
  if (token) {
    const url = new URL(origin);
    lines.control = url.protocol === "https:"
      ? `kubectl --server ${server} --token ${token} cordon node-1`
      : `kubectl --server ${url.protocol}//control:${token}@${url.host}/k8s/runs/${runId} cordon node-1`;
  }
  return lines;
}

function controlToken(runId) {
  const match = location.hash.match(/control=([^&]+)/); // run-page.js moves it into session storage
  return match ? decodeURIComponent(match[1]) : sessionStorage.getItem(`heartbeat-control-${runId}`);
}

/**
 * The lines in the "Your own kubectl" box of the run page, their copy buttons, and the API warmed once it shows.
 * @param {{run: string}} config  the page's run-config
 */
export function showOwnKubectl(config) {
  const box = document.getElementById("own-kubectl");
  if (!box) return;
  show(box, config.run);
  warmWhenSeen(box, config.run);
}

/**
 * @param {HTMLElement} box
 * @param {string} runId
 */
function show(box, runId) {
  const lines = kubectlLines(siteOrigin(), runId, controlToken(runId));
  box.querySelector("[data-line=watch]").textContent = lines.watch;
  box.querySelector("a[data-kubeconfig]").setAttribute("href", `/api/runs/${runId}/kubeconfig`);
  const control = box.querySelector("[data-line=control]");
  if (lines.control) {
    control.textContent = lines.control;
    control.closest("details").hidden = false;
  }
  for (const button of /** @type {NodeListOf<HTMLButtonElement>} */ (box.querySelectorAll("button[data-copy]"))) {
    button.addEventListener("click", () => copyLine(button, box.querySelector(`[data-line=${button.dataset.copy}]`)));
  }
}

/** The line to the clipboard, and a tick on its button. */
async function copyLine(button, line) {
  await copyText(line);
  button.dataset.copied = "true";
}

/**
 * The first time the box is on screen (its tab opened), one small read of the run's API (a get of one
 * namespace: a class opening the tab at once costs the server little once the objects are there): the server
 * then gets the run's objects (a 5,000-node run's take seconds, from its driver) and keeps them current
 * while the learner copies the line, so their first command is answered from memory.
 * @param {HTMLElement} box
 * @param {string} runId
 */
function warmWhenSeen(box, runId) {
  if (typeof IntersectionObserver === "undefined") return;
  const observer = new IntersectionObserver((entries) => {
    if (!entries.some((entry) => entry.isIntersecting)) return;
    observer.disconnect();
    fetch(`/k8s/runs/${runId}/api/v1/namespaces/default`, { priority: "low" }).catch(() => {});
  });
  observer.observe(box);
}
