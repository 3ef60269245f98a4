// @ts-check
// What this browser finished alone ("Try alone" on the home page): per lesson and per drill, the
// best score. Kept in localStorage only: a solo run sends the server its answers and the checks
// (reveals), never a score. The solo run page writes it (lesson.js), the home page reads it.

const KEYS = { lesson: "heartbeat-lessons", drill: "heartbeat-drills" };

function browserStorage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null; // a browser that refuses storage: nothing is kept
  }
}

/** `{name: {finished: true, score, of, at}}` of one kind ("lesson" or "drill"); {} when nothing is kept. */
export function readProgress(kind, storage = browserStorage()) {
  try {
    const value = JSON.parse(storage?.getItem(KEYS[kind]) ?? "{}");
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/**
 * A finished lesson or drill: its entry keeps the best score and when it was reached (`at`, ISO
 * time); a worse or equal score, or the same run's page opened again, leaves it as it was. A
 * lesson whose question count changed since starts afresh. Returns the entry kept.
 */
export function recordFinish(kind, name, { score, of }, { storage = browserStorage(), now = new Date() } = {}) {
  const all = readProgress(kind, storage);
  const before = all[name];
  if (!before?.finished || before.of !== of || score > before.score) {
    all[name] = { finished: true, score, of, at: now.toISOString() };
    try {
      storage?.setItem(KEYS[kind], JSON.stringify(all));
    } catch {
      // full or refused: the page still shows the score
    }
  }
  return all[name];
}
