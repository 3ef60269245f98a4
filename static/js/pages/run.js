// The run page (templates/pages/run.html), also an observed cluster's: its one entry module. The panels, the
// connection and the lesson are the RunPage's (run-page.js); around it the end of the run, the replay bar,
// "Your own kubectl" and the room's share buttons.
import { nextTask } from "../dom.js";
import { readJson } from "../i18n.js";
import { showOwnKubectl } from "../own-kubectl.js";
import { startReplay } from "../replay.js";
import { watchRunEnd } from "../run-end.js";
import { RunPage } from "../run-page.js";
import { shareRoom } from "../share-room.js";

const config = readJson("run-config");
if (config) {
  watchRunEnd(config);
  showOwnKubectl();
  shareRoom(config);
  // Not in the task that evaluated the page's modules.
  nextTask().then(() => {
    const page = new RunPage(config);
    page.opened.then(() => startReplay(page, config), () => {}); // a page whose panels failed said so already
  });
}
