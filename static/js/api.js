// REST calls of the pages. Commands carry the control token as a bearer header; the token
// itself only ever lives in the URL fragment and this tab's sessionStorage.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(method, url, { body, token } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit" });
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
export const createRun = (source, speed) => request("POST", "/api/runs", { body: speed ? { ...source, speed } : source });
export const getScenario = (name) => request("GET", `/api/scenarios/${encodeURIComponent(name)}`);

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
export const getEvents = (id, after, types) =>
  request("GET", `/api/runs/${encodeURIComponent(id)}/events?after=${after}&limit=5000&types=${encodeURIComponent(types)}`);
export const sendCommand = (id, token, command) =>
  request("POST", `/api/runs/${encodeURIComponent(id)}/commands`, { body: command, token });

/** The page link a run's control token opens: the token rides in the fragment only. */
export function controlLink(id, token) {
  return `${location.origin}/runs/${encodeURIComponent(id)}/#control=${encodeURIComponent(token)}`;
}

export function viewerLink(id) {
  return `${location.origin}/runs/${encodeURIComponent(id)}/`;
}
