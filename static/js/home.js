// Home page and scenario links: start a run of a lesson, a drill or a scenario through the REST
// API, then go to its page with the control token in the URL fragment (never in a query string,
// so it is in no server log).
import { controlLink, createRun, viewerLink } from "./api.js";
import { makeTranslator, readJson } from "./i18n.js";

const config = readJson("page-config") ?? { strings: {} };
const t = makeTranslator(config.strings);

function toast(text) {
  const item = document.createElement("div");
  item.className = "toast-item bad";
  item.textContent = text;
  document.getElementById("toast").append(item);
  setTimeout(() => item.remove(), 6000);
}

/** `source`: what the run is of, `{lesson: name}`, `{drill: name}` or `{scenario: name}`. */
async function start(source, mode, button) {
  const label = button?.textContent;
  if (button) {
    button.disabled = true;
    button.textContent = t("home.starting");
  }
  try {
    const run = await createRun(source);
    const control = controlLink(run.id, run.control_token);
    if (mode === "live") {
      const dialog = document.getElementById("session-dialog");
      dialog.querySelector("#control-link").value = control;
      dialog.querySelector("#viewer-link").value = viewerLink(run.id);
      dialog.querySelector("#open-control").href = control;
      dialog.showModal();
    } else {
      location.assign(control);
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

/** What a start button's run is of: its data-lesson, data-drill or data-scenario. */
function sourceOf(data) {
  for (const kind of ["lesson", "drill", "scenario"]) if (data[kind]) return { [kind]: data[kind] };
  return null;
}

for (const button of document.querySelectorAll("[data-start]")) {
  button.addEventListener("click", () => start(sourceOf(button.dataset), button.dataset.start, button));
}

document.getElementById("copy-viewer-link")?.addEventListener("click", async () => {
  const input = document.getElementById("viewer-link");
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    document.execCommand("copy");
  }
});

// A scenario link starts its private run as soon as it is opened.
const pending = document.getElementById("scenario-status");
if (pending) start(sourceOf(pending.dataset), "private", null);
