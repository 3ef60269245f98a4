// @ts-check
// Parses a large websocket message off the page's main thread: a snapshot (2.5 MB of JSON on a
// 100-node run), or a frame of a large cluster's busy second (thousands of events, megabytes).
// It sends the message back as JSON texts the page parses one per task, each in a reply of its
// own (one reply of megabytes costs the page a long task just to receive): first the message with
// its long lists emptied (`head`), then those lists in slices (`slice`: [kind, text]), then
// `done`. The lists: a snapshot's objects, SLICE objects a slice; a frame's events, EVENTS a
// slice. (Sending the parsed objects would cost the page more than parsing: structured clone
// reads slower than JSON.parse here.)
const SLICE = 200;
const EVENTS = 500;

onmessage = (e) => {
  const { id, text } = e.data;
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    postMessage({ id, error: true });
    return;
  }
  const slices = [];
  const objects = msg?.snapshot?.objects;
  if (objects && typeof objects === "object") {
    for (const [kind, list] of Object.entries(objects)) {
      if (!Array.isArray(list) || list.length <= SLICE) continue;
      for (let i = 0; i < list.length; i += SLICE) slices.push([kind, JSON.stringify(list.slice(i, i + SLICE))]);
      objects[kind] = [];
    }
  }
  if (msg?.type === "frame" && Array.isArray(msg.events) && msg.events.length > EVENTS) {
    for (let i = 0; i < msg.events.length; i += EVENTS) {
      slices.push(["events", JSON.stringify(msg.events.slice(i, i + EVENTS))]);
    }
    msg.events = [];
  }
  postMessage({ id, head: JSON.stringify(msg) });
  for (const slice of slices) postMessage({ id, slice });
  postMessage({ id, done: true });
};
