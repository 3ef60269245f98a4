// The run page's kubectl panel under node: an ObjectStore and a VirtualClock fed a viewer's websocket messages
// the way static/js/run-page.js feeds them (onSnapshot, onFrame, the clock messages), then the panel's text of
// each command. Reads {messages, commands, node} as JSON on stdin, writes {command: text} as JSON.
import { readFileSync } from "node:fs";
import { kubectlOutput } from "../../static/js/kubectl-panel.js";
import { ObjectStore } from "../../static/js/store.js";
import { VirtualClock } from "../../static/js/time.js";

const { messages, commands, node } = JSON.parse(readFileSync(0, "utf8"));
const store = new ObjectStore();
const clock = new VirtualClock(() => 0);
for (const msg of messages) {
  if (msg.type === "snapshot") {
    const snapshot = msg.snapshot ?? {};
    store.loadSnapshot({ ...snapshot, last_seq: msg.last_seq ?? snapshot.last_seq });
    clock.anchor(snapshot.time, snapshot.t ?? 0);
    clock.update(msg.clock ?? { t: snapshot.t ?? 0, speed: 1, paused: true });
  } else if (msg.type === "frame") {
    clock.update(msg.clock);
    for (const raw of msg.events ?? []) store.apply(raw);
    store.applyFrameExtras(msg);
  } else if (msg.type === "clock") {
    clock.update(msg.clock);
  }
}
const texts = Object.fromEntries(commands.map((command) => [command, kubectlOutput(command, store, node, clock.nowMs())]));
process.stdout.write(JSON.stringify({ texts, paused: clock.paused, t: clock.now() }));
