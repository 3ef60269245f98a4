// @ts-check
// Myth vs fact page: "See it" starts a private run of the lesson or scenario that shows the fact
// and opens its page, the control token in the URL fragment (never in a query string).
import { createdControlLink, startRun } from "#js/api.js";
import { makeTranslator, readJson } from "#js/i18n.js";

const config = readJson("page-config") ?? { strings: {} };
const t = makeTranslator(config.strings);

async function seeIt(button) {
  const { see, name, speed } = button.dataset;
  const error = button.parentElement.querySelector(".see-error");
  button.dataset.label ??= button.textContent;
  button.disabled = true;
  button.textContent = t("home.starting");
  error.hidden = true;
  try {
    const run = await startRun(speed ? { [see]: name, speed: Number(speed) } : { [see]: name });
    location.assign(createdControlLink(run, location.origin)); // a comparison lesson's opens its comparison page
  } catch (e) {
    error.textContent = t("home.failed", { message: e.message });
    error.hidden = false;
    reset(button);
  }
}

function reset(button) {
  button.disabled = false;
  button.textContent = button.dataset.label ?? button.textContent;
}

document.addEventListener("click", (event) => {
  const target = /** @type {Element} */ (event.target);
  const button = /** @type {HTMLButtonElement | null} */ (target.closest("button[data-see]"));
  if (button && !button.disabled) seeIt(button);
});

// Back from the run page (the browser's page cache): the buttons are ready again.
addEventListener("pageshow", (event) => {
  if (event.persisted) document.querySelectorAll("button[data-see]").forEach(reset);
});
