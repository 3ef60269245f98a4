// @ts-check
// REST calls of the pages. Commands carry the control token as a bearer header; the token
// itself only ever lives in the URL fragment and this tab's sessionStorage.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * @param {string} method
 * @param {string} url
 * @param {{body?: unknown, token?: string | null}} [options]  a JSON body; the control token, as a bearer header
 */
async function request(method, url, { body, token } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(url, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit",
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data?.message ?? data?.error ?? response.statusText);
  return data;
}

/** A new run of `source`: `{scenario: name}`, `{lesson: name}` or `{drill: name}`. */
export const createRun = (source, speed) =>
  request("POST", "/api/runs", { body: speed ? { ...source, speed } : source });
export const getScenario = (name) => request("GET", `/api/scenarios/${encodeURIComponent(name)}`);

const SAVED_KEY = "heartbeat-saved-scenarios";

/** The scenarios this browser saved, newest first: `[{id, url, name, title, savedAt}]`. */
export function savedScenarios() {
  try {
    const list = JSON.parse(localStorage.getItem(SAVED_KEY) ?? "[]");
    return Array.isArray(list) ? list.filter((item) => item && typeof item.id === "string") : [];
  } catch {
    return [];
  }
}

/** Saves a scenario document (`POST /api/scenarios`); the answer's link is remembered for the home page. */
export async function saveScenario(document) {
  const saved = await request("POST", "/api/scenarios", { body: { document } });
  const entry = { id: saved.id, url: saved.url, name: saved.name, title: saved.title, savedAt: Date.now() };
  const others = savedScenarios().filter((item) => item.id !== saved.id);
  try {
    localStorage.setItem(SAVED_KEY, JSON.stringify([entry, ...others].slice(0, 100)));
  } catch {
    // storage full or refused: the link still works, home just does not list it
  }
  return saved;
}

/** Scenario durations: 900, "90s", "15m", "1h" (docs/architecture.md §3 accepts all four). */
export function parseDuration(value) {
  if (typeof value === "number") return value;
  const match = String(value ?? "").trim().match(/^(\d+(?:\.\d+)?)(s|m|h)?$/);
  if (!match) return null;
  return Number(match[1]) * { s: 1, m: 60, h: 3600 }[match[2] ?? "s"];
}

export const getRun = (id) => request("GET", `/api/runs/${encodeURIComponent(id)}`);
/** A new run from a whole `POST /api/runs` body: `{scenario|lesson|drill: name}`, optional speed, seed, paused. */
export const startRun = (body) => request("POST", "/api/runs", { body });
/** A page of a run's events of `types`; with `nodes` none about single pods (a node-level page holds none). */
export const getEvents = (id, after, types, { nodes = false } = {}) =>
  request("GET", `/api/runs/${encodeURIComponent(id)}/events?after=${after}&limit=5000` +
    `&types=${encodeURIComponent(types)}${nodes ? "&detail=nodes" : ""}`);
export const sendCommand = (id, token, command) =>
  request("POST", `/api/runs/${encodeURIComponent(id)}/commands`, { body: command, token });

/** A lesson's or drill's report (the trainer's: it needs the control token). */
export const getReport = (id, token) => request("GET", `/api/runs/${encodeURIComponent(id)}/report`, { token });

/** Saves the report as a file: fetched with the token (a plain link cannot carry it), then handed to the browser. */
export async function downloadReport(id, token, format) {
  const response = await fetch(`/api/runs/${encodeURIComponent(id)}/report?format=${format}`, {
    headers: { Authorization: `Bearer ${token}` }, credentials: "omit",
  });
  if (!response.ok) throw new ApiError(response.status, response.statusText);
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement("a"), { href: url, download: `run-${id}-report.${format}` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Where the room reaches this site: the site's public address (the laptop's on the room's network, though this
 *  browser may have opened 127.0.0.1), else this page's own origin. */
export function siteOrigin() {
  return document.querySelector('meta[name="heartbeat-origin"]')?.getAttribute("content") || location.origin;
}

/** The page link a run's control token opens: the token rides in the fragment only. `origin`: this page's own
 *  to stay on it, the site's public one (the default) for a link to hand on. */
export function controlLink(id, token, origin = siteOrigin()) {
  return `${origin}/runs/${encodeURIComponent(id)}/#control=${encodeURIComponent(token)}`;
}

/** The control page of what `POST /api/runs` created: a run's, or a comparison's when the lesson or recipe started is
 *  one (its answer names the `comparison`). `origin` as for controlLink. */
export function createdControlLink(created, origin = siteOrigin()) {
  const page = created.comparison ? "compare" : "runs";
  return `${origin}/${page}/${encodeURIComponent(created.id)}/#control=${encodeURIComponent(created.control_token)}`;
}

/** A comparison (docs/architecture.md §6.9): both runs and the latest strip of differences. */
export const getComparison = (id) => request("GET", `/api/comparisons/${encodeURIComponent(id)}`);

/** A comparison of a scenario (`{scenario: name}`): each side's settings in `a` and `b` (docs/architecture.md §6.9). */
export const createComparison = (source, a, b) => request("POST", "/api/comparisons", { body: { ...source, a, b } });

/** A command for both sides of a comparison, applied at one virtual instant. */
export const sendComparisonCommand = (id, token, command) =>
  request("POST", `/api/comparisons/${encodeURIComponent(id)}/commands`, { body: command, token });

/** A recipe link of a comparison: it plays both sides again (`/r/<id>`). */
export const takeComparisonRecipe = (id, token) =>
  request("POST", `/api/comparisons/${encodeURIComponent(id)}/recipe`, { token });

export function comparisonLink(id) {
  return `${siteOrigin()}/compare/${encodeURIComponent(id)}/`;
}

export function viewerLink(id) {
  return `${siteOrigin()}/runs/${encodeURIComponent(id)}/`;
}

/**
 * Takes the control token out of the URL fragment (so it never shows on a projector) into this tab's
 * sessionStorage, with `solo=1` ("Try alone": the learner's page, lesson.js), which stays with it across reloads.
 * `scope` names what the token controls: a run's id, or `comparison-<id>`.
 * @param {string} scope
 * @returns {{token: string | null, solo: boolean}}
 */
export function takeControlToken(scope) {
  const key = `heartbeat-control-${scope}`;
  const soloKey = `heartbeat-solo-${scope}`;
  const match = location.hash.match(/control=([^&]+)/);
  if (match) {
    sessionStorage.setItem(key, decodeURIComponent(match[1]));
    if (/[#&]solo=1(&|$)/.test(location.hash)) sessionStorage.setItem(soloKey, "1");
    else sessionStorage.removeItem(soloKey);
    history.replaceState(null, "", location.pathname + location.search);
  }
  const token = sessionStorage.getItem(key);
  return { token, solo: Boolean(token) && sessionStorage.getItem(soloKey) === "1" };
}
