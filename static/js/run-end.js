// @ts-check
// The end of a run on its page. The trainer's "End the run" button sends the stop command; once the run
// has ended (body[data-run-status], which run-page.js sets from the run's status), the page says why and
// the trainer's controls are disabled. The clock stops by itself: an ended run's clock is paused at its end.
import { getRun, sendCommand } from "#js/api.js";
import { makeTranslator } from "#js/i18n.js";

const ENDED = new Set(["finished", "idle", "failed", "stopped"]);
const STOPPED_BY_TRAINER = "stopped by the trainer"; // heartbeat_site/live/driving/driver.py STOPPED_BY_TRAINER

/** @typedef {(key: string, params?: object) => string} Translator the page's strings (i18n.js makeTranslator) */

function toast(text) {
  const item = document.createElement("div");
  item.className = "toast-item bad";
  item.textContent = text;
  document.getElementById("toast")?.append(item);
  setTimeout(() => item.remove(), 5000);
}

/** Why the run ended, in the page's language. @param {Translator} t */
function reasonOf(t, run) {
  if (run.status === "idle") return t("run-ended.idle");
  if (run.status === "failed" && run.kind === "observation") {
    // the page's own words for what ended the watch, when it heard them (run-page.js #showWatchProblem)
    return t("run-ended.observation-failed", { reason: document.body.dataset.watchProblem || run.end_reason });
  }
  if (run.status === "failed") return t("run-ended.failed", { reason: run.end_reason });
  return t(run.end_reason === STOPPED_BY_TRAINER ? "run-ended.stopped" : "run-ended.duration");
}

/** Once the run has ended: the trainer's controls off, and why it ended. @param {Translator} t */
async function showEnd(runId, t) {
  const controls = document.querySelectorAll("#control-bar button, #control-bar select, #fault-buttons button");
  for (const control of /** @type {NodeListOf<HTMLButtonElement | HTMLSelectElement>} */ (controls)) {
    control.disabled = true;
  }
  const box = document.getElementById("run-end");
  try {
    box.textContent = t("run-ended", { reason: reasonOf(t, await getRun(runId)) });
  } catch {
    box.textContent = t("run-ended", { reason: t(`run-status.${document.body.dataset.runStatus}`) });
  }
  box.hidden = false;
}

/** The trainer's "End the run": the stop command, once they confirm. @param {Translator} t */
async function endRun(runId, t) {
  const token = sessionStorage.getItem(`heartbeat-control-${runId}`);
  if (!token || !window.confirm(t("run.end-confirm"))) return;
  try {
    await sendCommand(runId, token, { action: "stop" });
  } catch (e) {
    toast(t("toast.refused", { status: e.status ?? "", message: e.message }));
  }
}

/**
 * The trainer's "End the run", and what the page says once the run has ended.
 * @param {{run: string, strings: Record<string, string>}} config  the page's run-config
 */
export function watchRunEnd(config) {
  const t = makeTranslator(config.strings ?? {});
  let shown = false;
  const follow = () => {
    if (shown || !ENDED.has(document.body.dataset.runStatus)) return;
    shown = true;
    showEnd(config.run, t);
  };
  document.getElementById("btn-end")?.addEventListener("click", () => endRun(config.run, t));
  new MutationObserver(follow).observe(document.body, { attributes: true, attributeFilter: ["data-run-status"] });
  follow();
}
