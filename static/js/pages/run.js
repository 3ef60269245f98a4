// @ts-check
// The run page (templates/pages/run.html), also an observed cluster's: its one entry module. The panels, the
// connection and the lesson are the RunPage's (run-page.js); around it the end of the run, the replay bar,
// "Your own kubectl" and the room's share buttons.
import { nextTask } from "#js/dom.js";
import { readJson } from "#js/i18n.js";
import { showOwnKubectl } from "#js/own-kubectl.js";
import { startReplay } from "#js/replay.js";
import { watchRunEnd } from "#js/run-end.js";
import { RunPage } from "#js/run-page.js";
import { shareRoom } from "#js/share-room.js";

const config = readJson("run-config");
if (config) {
  watchRunEnd(config);
  showOwnKubectl(config);
  shareRoom(config);
  // Not in the task that evaluated the page's modules.
  nextTask().then(() => {
    const page = new RunPage(config);
    page.opened.then(() => startReplay(page, config), () => {}); // a page whose panels failed said so already
  });
}
