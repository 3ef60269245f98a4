// @ts-check
// Home page and scenario links: start a run of a lesson, a drill or a scenario through the REST
// API, then go to its page with the control token in the URL fragment (never in a query string,
// so it is in no server log).
import {
  comparisonLink, createComparison, createdControlLink, createRun, savedScenarios, viewerLink,
} from "#js/api.js";
import { copyText } from "#js/clipboard.js";
import { makeTranslator, readJson } from "#js/i18n.js";
import { readProgress } from "#js/progress.js";

const config = readJson("page-config") ?? { strings: {} };
const t = makeTranslator(config.strings);

function toast(text) {
  const item = document.createElement("div");
  item.className = "toast-item bad";
  item.textContent = text;
  document.getElementById("toast").append(item);
  setTimeout(() => item.remove(), 6000);
}

/** `source`: what the run is of, `{lesson: name}`, `{drill: name}`, `{scenario: name}` or `{recipe: id}`;
 *  `mode`: "live" (the session dialog), "private" (its control page), "solo" (the learner's page, lesson.js). */
async function start(source, mode, button) {
  const label = button?.textContent;
  if (button) {
    button.disabled = true;
    button.textContent = t("home.starting");
  }
  try {
    const run = await createRun(source);
    // a comparison lesson starts a comparison (docs/lessons.md): its page shows both sides on one clock
    const compared = Boolean(run.comparison);
    const control = createdControlLink(run);
    if (mode === "live") {
      const dialog = /** @type {HTMLDialogElement} */ (document.getElementById("session-dialog"));
      /** @type {HTMLInputElement} */ (dialog.querySelector("#control-link")).value = control;
      /** @type {HTMLInputElement} */ (dialog.querySelector("#viewer-link")).value =
        compared ? comparisonLink(run.id) : viewerLink(run.id);
      /** @type {HTMLAnchorElement} */ (dialog.querySelector("#open-control")).href = control;
      dialog.showModal();
    } else {
      const own = createdControlLink(run, location.origin); // stays on this page's origin
      location.assign(mode === "solo" ? `${own}&solo=1` : own);
    }
  } catch (e) {
    toast(t("home.failed", { message: e.message }));
  } finally {
    if (button) {
      button.disabled = false;
      button.textContent = label;
    }
  }
}

/** What a start button's run is of: its data-lesson, data-drill or data-scenario, or a saved scenario's
 *  link page (data-shared): exactly the document the page shows. */
function sourceOf(data) {
  if (data.shared) return { document: config.document };
  for (const kind of ["lesson", "drill", "scenario", "recipe"]) if (data[kind]) return { [kind]: data[kind] };
  return null;
}

for (const button of /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll("[data-start]"))) {
  button.addEventListener("click", () => start(sourceOf(button.dataset), button.dataset.start, button));
}

/** "Compare 1.31 with 1.33": the scenario twice on one clock, opened as its trainer (the token in the fragment). */
for (const button of /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll("[data-compare]"))) {
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const made = await createComparison({ scenario: button.dataset.compare }, { kubernetesVersion: "1.31" },
        { kubernetesVersion: "1.33" });
      location.assign(`${location.origin}/compare/${made.id}/#control=${encodeURIComponent(made.control_token)}`);
    } catch (e) {
      toast(t("home.failed", { message: e.message }));
      button.disabled = false;
    }
  });
}

document.getElementById("copy-viewer-link")?.addEventListener("click", () => {
  copyText(document.getElementById("viewer-link"));
});

/** Home: the scenarios this browser saved, as their links (`/s/<id>`, which never change meaning). */
function listSaved() {
  const section = document.getElementById("my-scenarios");
  const saved = savedScenarios();
  if (!section || !saved.length) return;
  const lang = config.lang?.startsWith("zh") ? "zh" : "en";
  const items = saved.map((item) => {
    const li = document.createElement("li");
    li.className = "my-scenario";
    const link = document.createElement("a");
    link.href = `/s/${encodeURIComponent(item.id)}`;
    link.textContent = item.title?.[lang] || item.title?.en || item.name;
    link.dataset.source = "scenario";
    const id = document.createElement("code");
    id.translate = false;
    id.textContent = ` ${item.name} · ${item.id}`;
    li.append(link, id);
    return li;
  });
  section.querySelector(".my-scenario-list").replaceChildren(...items);
  section.hidden = false;
}

listSaved();

/** The lesson path and the drills: which this browser finished alone, with the best score (progress.js). */
function showProgress() {
  for (const kind of ["lesson", "drill"]) {
    const done = readProgress(kind);
    const cards = /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(`.${kind}-card[data-${kind}]`));
    for (const card of cards) {
      const entry = done[card.dataset[kind]];
      /** @type {HTMLElement | null} */
      const badge = card.querySelector(".progress-badge");
      if (!badge || !entry?.finished) continue;
      Object.assign(badge.dataset, { score: String(entry.score), of: String(entry.of) });
      badge.querySelector(".progress-text").textContent = t("home.finished", { score: entry.score, of: entry.of });
      badge.classList.toggle("perfect", entry.score === entry.of);
      badge.hidden = false;
      card.classList.add("finished");
    }
  }
}

showProgress();

// A scenario link starts its private run as soon as it is opened.
const pending = document.getElementById("scenario-status");
if (pending) start(sourceOf(pending.dataset), "private", null);
