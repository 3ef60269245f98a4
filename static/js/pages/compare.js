// @ts-check
// The comparison page (templates/pages/compare.html): its one entry module (the page itself: compare-page.js).
import { ComparePage } from "#js/compare-page.js";
import { nextTask } from "#js/dom.js";
import { readJson } from "#js/i18n.js";

const config = readJson("compare-config");
// Not in the task that evaluated the page's modules.
if (config) nextTask().then(() => new ComparePage(config));
