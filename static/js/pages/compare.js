// The comparison page (templates/pages/compare.html): its one entry module (the page itself: compare-page.js).
import { ComparePage } from "../compare-page.js";
import { nextTask } from "../dom.js";
import { readJson } from "../i18n.js";

const config = readJson("compare-config");
// Not in the task that evaluated the page's modules.
if (config) nextTask().then(() => new ComparePage(config));
