// Parses a large websocket message (a snapshot: 2.5 MB of JSON on a 100-node run) off the
// page's main thread, where receiving it already takes ~30 ms of the same task. It sends the
// message back as JSON texts the page parses one per task: the message with its long object
// lists emptied, then those lists in slices of SLICE objects. (Sending the parsed objects would
// cost the page more than parsing: structured clone reads slower than JSON.parse here.)
const SLICE = 200;

onmessage = (e) => {
  const { id, text } = e.data;
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    postMessage({ id, error: true });
    return;
  }
  const objects = msg?.snapshot?.objects;
  const slices = [];
  if (objects && typeof objects === "object") {
    for (const [kind, list] of Object.entries(objects)) {
      if (!Array.isArray(list) || list.length <= SLICE) continue;
      for (let i = 0; i < list.length; i += SLICE) slices.push([kind, JSON.stringify(list.slice(i, i + SLICE))]);
      objects[kind] = [];
    }
  }
  postMessage({ id, head: JSON.stringify(msg), slices });
};
