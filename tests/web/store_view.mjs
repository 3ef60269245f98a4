// A run page's object store under node: the real static/js/store.js fed a viewer's messages (a snapshot, frames,
// a node's details) the way static/js/run-page.js feeds them (onSnapshot, onFrame, onDetail). Reads
// {messages} as JSON from the file named by the first argument, writes the store's view as JSON:
// {objects: {resource: [object]}, podCounts: {node: counts}, lastSeq, detailNode}.
import { readFileSync } from "node:fs";
import { ObjectStore } from "../../static/js/store.js";

const { messages } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const store = new ObjectStore();
for (const msg of messages) {
  if (msg.type === "snapshot") {
    const snapshot = msg.snapshot ?? {};
    store.loadSnapshot({ ...snapshot, last_seq: msg.last_seq ?? snapshot.last_seq });
  } else if (msg.type === "frame") {
    for (const raw of msg.events ?? []) store.apply(raw);
    store.applyFrameExtras(msg);
  } else if (msg.type === "detail") {
    store.loadDetail(msg);
  }
}
const objects = Object.fromEntries([...store.byResource.keys()].map((resource) => [resource, store.list(resource)]));
const podCounts = Object.fromEntries(store.list("nodes").map((node) => [node.metadata.name,
  store.podCounts(node.metadata.name)]));
process.stdout.write(JSON.stringify({ objects, podCounts, lastSeq: store.lastSeq, detailNode: store.detailNode }));
