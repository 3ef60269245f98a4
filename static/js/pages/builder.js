// @ts-check
// The scenario builder (/build/): the form and the YAML view edit one document (builder-yaml.js); each edit
// is checked by the server's own validator (POST /api/scenarios/validate) and every message is shown at its
// field and on its YAML line. "Preview" runs the first minutes headless (POST /api/scenarios/preview),
// "Save" stores it (POST /api/scenarios) and gives its /s/<id> link.
import { controlLink, createRun, saveScenario } from "#js/api.js";
import {
  clock, clusterNodes, controlValue, faultTarget, faultTargetFields, renderForm, seconds, tolerationKeyList,
} from "#js/builder-form.js";
import { YamlSource, pathParts } from "#js/builder-yaml.js";
import { copyText } from "#js/clipboard.js";
import { makeTranslator, readJson } from "#js/i18n.js";

const config = readJson("page-config");
const t = makeTranslator(config.strings);
/** @typedef {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} Control a field of the form */
const form = document.getElementById("builder-form");
const yamlArea = /** @type {HTMLTextAreaElement} */ (document.getElementById("yaml"));
const yamlProblems = document.getElementById("yaml-problems");
const status = document.getElementById("builder-status");
const source = YamlSource.of(config.document);
const VALIDATE_DELAY = 350; // ms after the last keystroke: one request per pause in typing, not per key
let validation = 0; // the latest validation asked for; older answers are dropped
let validateTimer = null;
let yamlTimer = null;
let saved = null;

function render() {
  const focused = /** @type {HTMLElement | null} */ (document.activeElement);
  const path = focused?.dataset?.path ?? null;
  const op = focused?.dataset?.op ?? null;
  renderForm(form, source.mapping, { t, config });
  // the control that had the focus is drawn again: give it back its focus
  /** @type {HTMLElement | null} */
  const again = path ? form.querySelector(`[data-path="${CSS.escape(path)}"]`)
    : op && op !== "remove" ? form.querySelector(`[data-op="${op}"]`) : null;
  if (again && form.contains(focused) === false && focused !== yamlArea) again.focus();
}

function showYaml() {
  if (document.activeElement !== yamlArea) yamlArea.value = source.text;
}

function edited({ redraw = false } = {}) {
  showYaml();
  if (redraw) render();
  scheduleValidation();
}

// -- the form edits the document ---------------------------------------------------------------

function applyControl(control) {
  const path = pathParts(control.dataset.path);
  const doc = source.mapping;
  if ((path[0] === "title" || path[0] === "watch") && typeof doc[path[0]] === "string") {
    source.set([path[0]], { en: doc[path[0]], zh: doc[path[0]] }); // one text for both: now two
  }
  const value = controlValue(control);
  if (value === undefined) source.remove(path);
  else source.set(path, value);
}

/** The fields a fault of `action` needs, with a first value each (the cluster's first node or zone). */
function faultFor(action, keep = {}) {
  const spec = config.actions[action];
  const doc = source.mapping;
  const nodes = clusterNodes(doc);
  const firsts = {
    node: nodes[0]?.name ?? "node-1", zone: nodes[0]?.zone ?? "", resource: "memory", latency: "2s", name: "node-new",
  };
  const fault = { at: keep.at ?? "60s", action };
  for (const key of spec.required) fault[key] = keep[key] ?? firsts[key];
  for (const key of spec.optional) if (keep[key] !== undefined) fault[key] = keep[key];
  if (spec.reverse && keep.for !== undefined) fault.for = keep.for;
  return fault;
}

function draftFault() {
  const value = (name) => {
    const control = form.querySelector(`[data-path="draft.${name}"]`);
    return control ? controlValue(control) : undefined;
  };
  const atControl = /** @type {HTMLInputElement} */ (form.querySelector('[data-path="draft.at"]'));
  /** @type {Record<string, unknown>} */
  const fault = { at: value("at") ?? atControl.placeholder, action: value("action") };
  for (const key of ["node", "zone", "name", "resource", "latency", "kubelet", "for"]) {
    const v = value(key);
    if (v !== undefined) fault[key] = v;
  }
  return fault;
}

function uniqueName(base, taken) {
  if (!taken.includes(base)) return base;
  let n = 2;
  while (taken.includes(`${base}-${n}`)) n += 1;
  return `${base}-${n}`;
}

const OPS = {
  remove(button) {
    const section = button.closest("[data-section]").dataset.section;
    source.remove(pathParts(button.dataset.target));
    edited({ redraw: true });
    // the focus goes to the section's last "Add" button rather than to the page's start
    const adds = /** @type {NodeListOf<HTMLButtonElement>} */ (
      form.querySelectorAll(`[data-section="${section}"] button[data-op^="add"]`));
    [...adds].at(-1)?.focus();
  },
  "add-zone"() {
    const zones = source.mapping.cluster?.zones ?? [];
    const name = uniqueName(`zone-${String.fromCharCode(97 + Math.min(zones.length, 25))}`, zones.map((z) => z?.name));
    source.insert(["cluster", "zones"], { name, nodes: 1 });
    edited({ redraw: true });
  },
  "add-workload"() {
    const workloads = source.mapping.cluster?.workloads ?? [];
    source.insert(["cluster", "workloads"], { name: uniqueName("app", workloads.map((w) => w?.name)), replicas: 2 });
    edited({ redraw: true });
  },
  "add-toleration"(button) {
    source.insert(pathParts(button.dataset.target),
      { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 60 });
    edited({ redraw: true });
  },
  "add-service"() {
    const doc = source.mapping;
    const taken = (doc.cluster?.services ?? []).map((s) => s?.name);
    const workload = (doc.cluster?.workloads ?? []).find((w) => !taken.includes(w?.name))?.name ?? "web";
    source.insert(["cluster", "services"], { name: uniqueName(workload, taken), selector: { app: workload } });
    edited({ redraw: true });
  },
  "add-fault"() {
    const fault = draftFault();
    const faults = Array.isArray(source.mapping.faults) ? source.mapping.faults : [];
    const at = seconds(fault.at) ?? 0;
    const index = faults.findIndex((f) => (seconds(f?.at) ?? 0) > at); // the script reads in time order
    source.insert(["faults"], fault, index < 0 ? undefined : index);
    edited({ redraw: true });
  },
  "focus-fault"(button) {
    const first = /** @type {Control | null | undefined} */ (
      document.getElementById(button.dataset.target)?.querySelector("input, select"));
    first?.focus();
  },
};

form.addEventListener("click", (event) => {
  const target = /** @type {Element} */ (event.target);
  const button = /** @type {HTMLButtonElement | null} */ (target.closest("button[data-op]"));
  if (button && OPS[button.dataset.op]) {
    OPS[button.dataset.op](button);
    return;
  }
  const track = /** @type {HTMLElement | null} */ (target.closest('[data-op="timeline"]'));
  if (track) {
    // a click on the line puts its time, to 10 s, in the new fault's "At"
    const box = track.getBoundingClientRect();
    const duration = Number(track.parentElement.dataset.duration);
    const at = Math.round((((event.clientX - box.left) / box.width) * duration) / 10) * 10;
    const control = /** @type {HTMLInputElement} */ (form.querySelector('[data-path="draft.at"]'));
    control.value = at % 60 === 0 ? `${at / 60}m` : `${at}s`;
    /** @type {HTMLElement} */ (form.querySelector('[data-path="draft.action"]')).focus();
  }
});

form.addEventListener("input", (event) => {
  const control = /** @type {Control} */ (event.target);
  if (!control.dataset.path || control.dataset.path.startsWith("draft")) return;
  applyControl(control);
  edited();
});

form.addEventListener("change", (event) => {
  const control = /** @type {Control} */ (event.target);
  const op = control.dataset.op;
  if (op === "layout") {
    const cluster = source.mapping.cluster ?? {};
    const total = clusterNodes(source.mapping).length;
    if (control.value === "nodes") {
      source.remove(["cluster", "zones"]);
      source.set(["cluster", "nodes"], total);
    } else {
      source.remove(["cluster", "nodes"]);
      source.set(["cluster", "zones"],
        [{ name: "zone-a", nodes: Number.isInteger(cluster.nodes) ? cluster.nodes : total }]);
    }
    edited({ redraw: true });
  } else if (op === "action") {
    const path = pathParts(control.dataset.path).slice(0, 2);
    const old = source.mapping.faults?.[path[1]] ?? {};
    source.set(path, faultFor(control.value, old));
    edited({ redraw: true });
  } else if (op === "kind" && control.value === "DaemonSet") {
    source.remove([...pathParts(control.dataset.path).slice(0, -1), "replicas"]);
    edited({ redraw: true });
  } else if (op === "draft-action") {
    const target = form.querySelector('[data-draft="target"]');
    const fault = faultFor(control.value);
    target.replaceChildren(...faultTargetFields(
      { t, config, doc: source.mapping, nodes: clusterNodes(source.mapping) }, ["draft"], fault, -1));
  } else if (control.dataset.rerender !== undefined && !control.dataset.path?.startsWith("draft")) {
    render();
  }
});

// -- the YAML view edits the document ----------------------------------------------------------

yamlArea.addEventListener("input", () => {
  clearTimeout(yamlTimer);
  yamlTimer = setTimeout(() => {
    const error = source.parse(yamlArea.value);
    if (error) {
      clearTimeout(validateTimer);
      validation += 1;
      setStatus("bad", t("builder.yaml-syntax", error));
      yamlProblems.replaceChildren(problemItem(error.line, t("builder.yaml-syntax", error)));
      return;
    }
    render();
    scheduleValidation();
  }, 300);
});

function problemItem(line, text) {
  const item = document.createElement("li");
  const jump = document.createElement("button");
  jump.type = "button";
  jump.className = "ghost line-link";
  jump.textContent = t("builder.yaml-line", { line });
  jump.addEventListener("click", () => {
    const offset = source.offsetOf(line);
    yamlArea.focus();
    yamlArea.setSelectionRange(offset, offset);
    const lineHeight = parseFloat(getComputedStyle(yamlArea).lineHeight) || 18;
    yamlArea.scrollTop = Math.max(0, (line - 3) * lineHeight);
  });
  const message = document.createElement("span");
  message.lang = "en";
  message.translate = false;
  message.textContent = text;
  item.append(jump, message);
  return item;
}

// -- validation --------------------------------------------------------------------------------

function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

function scheduleValidation() {
  clearTimeout(validateTimer);
  setStatus("checking", t("builder.status-checking"));
  validateTimer = setTimeout(validate, VALIDATE_DELAY);
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body), credentials: "omit",
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = { error: "bad-response", message: response.statusText };
  }
  return { ok: response.ok, status: response.status, data };
}

/** A 400's problems as [{field, message}]: the validator's list, else the one message the server gave. */
function problemsOf(data) {
  if (Array.isArray(data?.errors) && data.errors.length) return data.errors;
  const message = String(data?.message ?? data?.error ?? "");
  const at = message.indexOf(": ");
  return [{
    field: at > 0 && !message.slice(0, at).includes(" ") ? message.slice(0, at) : "",
    message: at > 0 ? message.slice(at + 2) : message,
  }];
}

async function validate() {
  const mine = ++validation;
  try {
    const { ok, data } = await post("/api/scenarios/validate", { document: source.data });
    if (mine !== validation) return;
    if (ok) {
      showProblems([]);
      setStatus("ok", t("builder.status-valid", {
        nodes: data.node_count, faults: data.document.faults.length, duration: data.document.duration,
      }));
    } else {
      const problems = problemsOf(data);
      showProblems(problems);
      setStatus("bad", t("builder.status-invalid", { count: problems.length }));
    }
  } catch (error) {
    if (mine === validation) setStatus("bad", t("builder.status-unreachable", { message: error.message }));
  }
}

const within = (field, path) => field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);

/** Each problem beside the form's field (the deepest whose path contains it) and on its YAML line. */
function showProblems(problems) {
  for (const slot of form.querySelectorAll(".field-error")) slot.replaceChildren();
  for (const control of form.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
  const places = [
    .../** @type {Control[]} */ ([...form.querySelectorAll("input[data-path], select[data-path], textarea[data-path]")])
      .map((control) => ({
        path: control.dataset.path, control, slot: document.getElementById(`${control.id}-error`),
      })),
    .../** @type {HTMLElement[]} */ ([...form.querySelectorAll("[data-error-of]")])
      .map((slot) => ({ path: slot.dataset.errorOf, control: null, slot })),
  ].filter((place) => !place.path.startsWith("draft"));
  const others = [];
  for (const { field, message } of problems) {
    const place = places.filter((p) => within(field, p.path)).sort((a, b) => b.path.length - a.path.length)[0];
    if (!place) {
      others.push({ field, message });
      continue;
    }
    const line = document.createElement("span");
    line.textContent = field === place.path ? message
      : `${field.slice(place.path.length).replace(/^\./, "")}: ${message}`;
    place.slot.append(line);
    place.control?.setAttribute("aria-invalid", "true");
  }
  const list = document.getElementById("other-problems");
  list.replaceChildren(...others.map(({ field, message }) => {
    const item = document.createElement("li");
    item.textContent = field ? `${field}: ${message}` : message;
    return item;
  }));
  list.hidden = others.length === 0;
  document.getElementById("other-problems-title").hidden = others.length === 0;
  yamlProblems.replaceChildren(...problems.map(({ field, message }) =>
    problemItem(source.lineOf(pathParts(field)), field ? `${field}: ${message}` : message)));
}

// -- preview -----------------------------------------------------------------------------------

const previewSection = document.getElementById("preview");

function transitionText(row) {
  const target = faultTarget(row) || "";
  switch (row.kind) {
    case "fault":
      return t("builder.fault-row", {
        action: t(`action.${row.action}`, {}, row.action), target: row.node ?? row.zone ?? row.name ?? target,
      });
    case "pods-not-ready":
    case "pods-terminating":
      return t(`builder.${row.kind}`, { node: row.node, count: row.count });
    default:
      return t(`transition.${row.kind}`, {
        node: row.node, from: row.from, to: row.to, key: row.key, effect: row.effect,
      });
  }
}

function tone(row) {
  if (row.kind === "fault") return "fault";
  if (row.kind === "taint-removed" || row.to === "True" || row.to === "Normal") {
    return row.kind === "node-condition" ? "bad" : "ok";
  }
  return "bad";
}

async function runPreview(button) {
  const list = document.getElementById("preview-list");
  const title = document.getElementById("preview-title");
  const end = document.getElementById("preview-end");
  previewSection.hidden = false;
  button.disabled = true;
  title.textContent = t("builder.preview-running");
  list.replaceChildren();
  end.textContent = "";
  try {
    const { ok, data } = await post("/api/scenarios/preview", { document: source.data });
    if (!ok) {
      const problems = problemsOf(data);
      title.textContent = t("builder.status-invalid", { count: problems.length });
      end.textContent = data.message;
      if (data.error === "invalid-scenario" || data.errors) showProblems(problems);
      return;
    }
    title.textContent = t("builder.preview-title", {
      minutes: Math.round((data.until / 60) * 10) / 10, nodes: data.node_count,
    });
    list.replaceChildren(...data.transitions.map((row) => {
      const item = document.createElement("li");
      item.className = `tone-${tone(row)}`;
      item.dataset.kind = row.kind;
      const when = document.createElement("time");
      when.textContent = `T+${clock(row.t)}`;
      when.title = `${row.t.toFixed(3)} s`;
      const what = document.createElement("span");
      what.className = "what";
      what.textContent = transitionText(row);
      if (row.pods) what.title = row.pods.join(", ");
      const who = document.createElement("span");
      who.className = "who";
      who.translate = false;
      who.textContent = row.component ?? "";
      item.append(when, what, who);
      return item;
    }));
    if (!data.transitions.length) {
      list.append(Object.assign(document.createElement("li"),
        { className: "hint", textContent: t("builder.preview-none") }));
    }
    const summary = data.summary;
    end.textContent = [
      data.truncated ? t("builder.preview-truncated", { count: data.transitions.length }) : "",
      t("builder.preview-end", {
        t: `T+${clock(data.until)}`, ready: summary.nodes.ready.True ?? 0, total: summary.nodes.total,
        podsReady: summary.pods.ready, pods: summary.pods.total,
      }),
    ].filter(Boolean).join(" ");
  } catch (error) {
    end.textContent = t("builder.status-unreachable", { message: error.message });
  } finally {
    button.disabled = false;
  }
}

// -- save and start ----------------------------------------------------------------------------

async function save(button) {
  const note = document.getElementById("save-status");
  button.disabled = true;
  note.textContent = t("builder.saving");
  try {
    saved = await saveScenario(source.data);
    note.textContent = t("builder.saved");
    const result = document.getElementById("save-result");
    result.hidden = false;
    const link = /** @type {HTMLInputElement} */ (document.getElementById("saved-link"));
    link.value = saved.url;
    /** @type {HTMLAnchorElement} */ (document.getElementById("open-link")).href = saved.url;
    link.focus();
    link.select();
  } catch (error) {
    note.textContent = t("builder.save-failed", { message: error.message });
    if (error.status === 409) showProblems([{ field: "name", message: error.message.replace(/^name: /, "") }]);
    else scheduleValidation();
  } finally {
    button.disabled = false;
  }
}

async function copyLink(button) {
  await copyText(document.getElementById("saved-link"));
  const label = button.textContent;
  button.textContent = t("builder.copied");
  setTimeout(() => (button.textContent = label), 1500);
}

async function startRun(button) {
  const label = button.textContent;
  button.disabled = true;
  button.textContent = t("builder.starting");
  try {
    const run = await createRun({ document: saved.document });
    location.assign(controlLink(run.id, run.control_token, location.origin));
  } catch (error) {
    document.getElementById("save-status").textContent = t("builder.start-failed", { message: error.message });
    button.disabled = false;
    button.textContent = label;
  }
}

document.getElementById("btn-preview").addEventListener("click", (event) => runPreview(event.currentTarget));
document.getElementById("btn-save").addEventListener("click", (event) => save(event.currentTarget));
document.getElementById("copy-link").addEventListener("click", (event) => copyLink(event.currentTarget));
document.getElementById("start-run").addEventListener("click", (event) => startRun(event.currentTarget));
form.addEventListener("submit", (event) => event.preventDefault());

form.append(tolerationKeyList());
yamlArea.value = source.text;
render();
validate();
