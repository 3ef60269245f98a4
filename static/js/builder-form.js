// @ts-check
// The scenario builder's form: drawn from the document (docs/architecture.md §3) each time its shape
// changes. Every control and every row carries the field path of what it edits (data-path, the validator's
// own notation: cluster.zones[1].nodes), which is also how a validation message finds its place.
import { pathText } from "#js/builder-yaml.js";

const MAX_NODES = 5000;
const TOLERATION_KEYS = ["node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready",
  "node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure", "node.kubernetes.io/unschedulable"];
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

/** Seconds of a scenario duration (90, "90s", "5m", "1m30s", "200ms"), or null. */
export function seconds(value) {
  if (typeof value === "number") return value >= 0 ? value : null;
  const text = String(value ?? "").trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  if (!text || text.replace(DURATION_PART, "") !== "") return null;
  let total = 0;
  for (const [, n, unit] of text.matchAll(DURATION_PART)) {
    total += Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit];
  }
  return total;
}

/** "1:30", "12:05", "1:00:00": a virtual time as the run page's clock shows it. */
export function clock(s) {
  const whole = Math.round(s);
  const [h, m, sec] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  const pad = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(sec)}` : `${m}:${pad(sec)}`;
}

function count(value, fallback) {
  return Number.isInteger(value) && value >= 0 ? Math.min(value, MAX_NODES) : fallback;
}

/** The cluster's nodes as the simulation names them: node-1, node-2... in zone order. */
export function clusterNodes(doc) {
  const cluster = doc.cluster && typeof doc.cluster === "object" ? doc.cluster : {};
  if (Array.isArray(cluster.zones)) {
    const nodes = [];
    for (const zone of cluster.zones) {
      for (let i = 0; i < count(zone?.nodes, 1) && nodes.length < MAX_NODES; i += 1) {
        nodes.push({ name: `node-${nodes.length + 1}`, zone: String(zone?.name ?? "") });
      }
    }
    return nodes;
  }
  return Array.from({ length: count(cluster.nodes, 3) }, (_, i) => ({ name: `node-${i + 1}`, zone: "" }));
}

export function labelsText(labels) {
  if (!labels || typeof labels !== "object") return "";
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(", ");
}

export function parseLabels(text) {
  const out = {};
  for (const item of text.split(",")) {
    if (!item.trim()) continue;
    const at = item.indexOf("=");
    out[(at < 0 ? item : item.slice(0, at)).trim()] = at < 0 ? "" : item.slice(at + 1).trim();
  }
  return out;
}

/** The value a control holds, in the document's terms: undefined means "leave the field out". */
export function controlValue(control) {
  const raw = control.type === "checkbox" ? control.checked : control.value;
  const kind = control.dataset.kind;
  if (kind === "checkbox") return raw;
  if (raw === "") return undefined;
  if (kind === "integer") return /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (kind === "number") return Number.isFinite(Number(raw)) ? Number(raw) : raw;
  if (kind === "duration") return /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw.trim();
  if (kind === "labels") return parseLabels(raw);
  if (kind === "bool") return raw === "true";
  return raw;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "className") node.className = value;
    else if (key in node && key !== "list" && key !== "translate") node[key] = value; // translate: "no" is an attribute
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

const idOf = (path) => `f-${path.replace(/[^A-Za-z0-9]+/g, "-")}`;

/** Draws the form of `doc` into `form` (its sections: data-section). `t` translates, `config` is the page's. */
export function renderForm(form, doc, { t, config }) {
  const ctx = { t, config, doc, nodes: clusterNodes(doc) };
  const section = (name) => form.querySelector(`[data-section="${name}"]`);
  section("scenario").replaceChildren(...scenarioFields(ctx));
  section("cluster").replaceChildren(...clusterFields(ctx));
  section("workloads").replaceChildren(...workloadFields(ctx));
  section("services").replaceChildren(...serviceFields(ctx));
  for (const component of ["kubelet", "controllerManager", "apiServer"]) {
    section(component).replaceChildren(...componentFields(ctx, component));
  }
  section("faults").replaceChildren(...faultFields(ctx));
}

/**
 * One labelled control: `kind` says how its text becomes a value (controlValue).
 * @param {(string | number)[]} path  where its value sits in the document
 * @param {string} label
 * @param {{kind?: string, value?: unknown, placeholder?: string, hint?: string, options?: string[][],
 *   rerender?: boolean, wide?: boolean, attrs?: Record<string, string | number>}} [how]  `rerender`: the form is
 *   drawn again when it changes; `wide`: it takes a whole row
 */
function field(path, label, { kind = "text", value, placeholder, hint, options, rerender, wide, attrs = {} } = {}) {
  const text = pathText(path);
  const id = idOf(text);
  const described = [hint ? `${id}-hint` : null, `${id}-error`].filter(Boolean).join(" ");
  const common = {
    id, "data-path": text, "data-kind": kind, "aria-describedby": described, "data-rerender": rerender, ...attrs,
  };
  let control;
  if (options) {
    control = el("select", common,
      ...options.map(([v, l]) => el("option", { value: v, selected: String(value ?? "") === v }, l)));
  } else if (kind === "textarea") {
    control = el("textarea", { ...common, rows: 2, value: value ?? "", placeholder });
  } else if (kind === "checkbox") {
    control = el("input", { ...common, type: "checkbox", checked: value !== false });
  } else {
    const shown = kind === "labels" ? labelsText(value) : value ?? "";
    const type = kind === "integer" || kind === "number" ? "number" : "text";
    control = el("input", { ...common, type, value: String(shown), placeholder,
      inputMode: type === "number" ? "decimal" : undefined,
      step: kind === "number" ? "any" : undefined, autocomplete: "off", spellcheck: false });
  }
  return el("div", { className: `field${wide ? " wide" : ""}${kind === "checkbox" ? " check" : ""}` },
    el("label", { htmlFor: id }, label), control,
    hint ? el("span", { className: "hint", id: `${id}-hint` }, hint) : null,
    el("span", { className: "field-error", id: `${id}-error`, lang: "en", translate: "no" }));
}

function rowError(path) {
  return el("p", { className: "field-error row-error", lang: "en", translate: "no", "data-error-of": pathText(path) });
}

function removeButton(path, label) {
  return el("button", {
    type: "button", className: "ghost remove", "data-op": "remove", "data-target": pathText(path),
    "aria-label": label, title: label,
  }, "✕");
}

function scenarioFields({ t, config, doc }) {
  const text = (key) => (doc[key] && typeof doc[key] === "object" ? doc[key] : { en: doc[key], zh: doc[key] });
  const title = text("title");
  const watch = text("watch");
  const versions = Object.keys(config.defaults).reverse();
  return [
    field(["name"], t("builder.name"), { value: doc.name, hint: t("builder.name-hint") }),
    field(["kubernetesVersion"], t("builder.version"), {
      value: doc.kubernetesVersion, rerender: true,
      options: [["", t("builder.default-version", { version: config.defaultVersion })], ...versions.map((v) => [v, v])],
    }),
    field(["title", "en"], t("builder.title-en"), { value: title.en, wide: true }),
    field(["title", "zh"], t("builder.title-zh"), { value: title.zh, wide: true }),
    field(["watch", "en"], t("builder.watch-en"), { kind: "textarea", value: watch.en, wide: true }),
    field(["watch", "zh"], t("builder.watch-zh"), { kind: "textarea", value: watch.zh, wide: true }),
    field(["duration"], t("builder.duration"), {
      kind: "duration", value: doc.duration, placeholder: "15m", hint: t("builder.default", { value: "15m" }),
      rerender: true,
    }),
    field(["seed"], t("builder.seed"), {
      kind: "integer", value: doc.seed, placeholder: "1", hint: t("builder.default", { value: 1 }),
    }),
  ];
}

function clusterFields(ctx) {
  const { t, doc, nodes } = ctx;
  const cluster = doc.cluster && typeof doc.cluster === "object" ? doc.cluster : {};
  const zoned = Array.isArray(cluster.zones);
  const radio = (value, label) => el("label", { className: "choice" },
    el("input", {
      type: "radio", name: "node-layout", value, checked: zoned === (value === "zones"), "data-op": "layout",
    }), label);
  const out = [
    rowError(["cluster"]),
    el("fieldset", { className: "choices" }, el("legend", { className: "visually-hidden" }, t("builder.node-layout")),
      radio("zones", t("builder.nodes-in-zones")), radio("nodes", t("builder.nodes-no-zones"))),
  ];
  if (zoned) {
    const rows = cluster.zones.map((zone, i) => el("div",
      { className: "row", "data-path": pathText(["cluster", "zones", i]) },
      field(["cluster", "zones", i, "name"], t("builder.zone-name"), { value: zone?.name, rerender: true }),
      field(["cluster", "zones", i, "nodes"], t("builder.zone-nodes"), {
        kind: "integer", value: zone?.nodes, placeholder: "1", rerender: true, attrs: { min: 0 },
      }),
      removeButton(["cluster", "zones", i], t("builder.remove-zone", { name: zone?.name ?? "" })),
      rowError(["cluster", "zones", i])));
    out.push(el("div", { className: "rows", "data-path": "cluster.zones" }, rowError(["cluster", "zones"]), ...rows),
      el("button", { type: "button", "data-op": "add-zone" }, `+ ${t("builder.add-zone")}`));
  } else {
    out.push(field(["cluster", "nodes"], t("builder.node-count"), {
      kind: "integer", value: cluster.nodes, placeholder: "3", rerender: true, attrs: { min: 0 },
    }));
  }
  const byZone = new Map();
  for (const node of nodes) byZone.set(node.zone, [...(byZone.get(node.zone) ?? []), node.name]);
  const list = [...byZone].map(([zone, names]) =>
    `${names.length > 3 ? `${names[0]} … ${names.at(-1)}` : names.join(", ")}${zone ? ` (${zone})` : ""}`)
    .join(" · ");
  out.push(el("p", { className: "hint node-names", translate: "no" }, t("builder.node-names", { list: list || "—" })));
  return out;
}

function workloadFields(ctx) {
  const { t, doc } = ctx;
  const workloads = Array.isArray(doc.cluster?.workloads) ? doc.cluster.workloads : [];
  const cards = workloads.map((w, i) => {
    const base = ["cluster", "workloads", i];
    const daemon = w?.kind === "DaemonSet";
    const tolerations = Array.isArray(w?.tolerations) ? w.tolerations : [];
    return el("fieldset", { className: "item", "data-path": pathText(base) },
      el("legend", {}, t("builder.workload", { name: w?.name ?? "" }),
        removeButton(base, t("builder.remove-workload", { name: w?.name ?? "" }))),
      rowError(base),
      el("div", { className: "fields" },
        field([...base, "name"], t("builder.workload-name"), { value: w?.name, rerender: true }),
        field([...base, "kind"], t("builder.kind"), {
          value: w?.kind ?? "Deployment", rerender: true,
          options: [["Deployment", "Deployment"], ["DaemonSet", "DaemonSet"]],
          attrs: { "data-op": "kind", translate: "no" },
        }),
        daemon ? el("p", { className: "hint daemon-note" }, t("builder.daemonset-replicas"))
          : field([...base, "replicas"], t("builder.replicas"), {
            kind: "integer", value: w?.replicas, placeholder: "1", attrs: { min: 0 },
          }),
        field([...base, "nodeSelector"], t("builder.node-selector"), {
          kind: "labels", value: w?.nodeSelector, placeholder: "kubernetes.io/hostname=node-2",
          hint: t("builder.labels-hint"), wide: true,
        })),
      el("div", { className: "rows tolerations", "data-path": pathText([...base, "tolerations"]) },
        el("h4", {}, t("builder.tolerations")), rowError([...base, "tolerations"]),
        ...(tolerations.length ? tolerations.map((tol, j) => tolerationRow(ctx, [...base, "tolerations", j], tol))
          : [el("p", { className: "hint" }, t("builder.no-tolerations"))])),
      el("button", { type: "button", "data-op": "add-toleration", "data-target": pathText([...base, "tolerations"]) },
        `+ ${t("builder.add-toleration")}`));
  });
  return [rowError(["cluster", "workloads"]),
    ...(cards.length ? cards : [el("p", { className: "hint" }, t("builder.no-workloads"))]),
    el("button", { type: "button", "data-op": "add-workload" }, `+ ${t("builder.add-workload")}`)];
}

function tolerationRow(ctx, path, tol) {
  const { t, config } = ctx;
  const listId = "toleration-keys";
  const effects = config.effects.map((e) => [e, e || t("builder.effect-any")]);
  return el("div", { className: "row toleration", "data-path": pathText(path) },
    field([...path, "key"], t("builder.toleration-key"), { value: tol?.key, wide: true, attrs: { list: listId } }),
    field([...path, "operator"], t("builder.toleration-operator"), {
      value: tol?.operator ?? "Equal", options: [["Equal", "Equal"], ["Exists", "Exists"]], attrs: { translate: "no" },
    }),
    field([...path, "value"], t("builder.toleration-value"), { value: tol?.value }),
    field([...path, "effect"], t("builder.toleration-effect"), {
      value: tol?.effect ?? "", options: effects, attrs: { translate: "no" },
    }),
    field([...path, "tolerationSeconds"], t("builder.toleration-seconds"), {
      kind: "integer", value: tol?.tolerationSeconds, attrs: { min: 0 },
    }),
    removeButton(path, t("builder.remove-toleration")),
    rowError(path));
}

export function tolerationKeyList() {
  return el("datalist", { id: "toleration-keys" }, ...TOLERATION_KEYS.map((key) => el("option", { value: key })));
}

function serviceFields(ctx) {
  const { t, doc } = ctx;
  const services = Array.isArray(doc.cluster?.services) ? doc.cluster.services : [];
  const rows = services.map((s, i) => el("div", { className: "row", "data-path": pathText(["cluster", "services", i]) },
    field(["cluster", "services", i, "name"], t("builder.service-name"), { value: s?.name, rerender: true }),
    field(["cluster", "services", i, "selector"], t("builder.selector"), {
      kind: "labels", value: s?.selector, placeholder: "app=web", hint: t("builder.labels-hint"), wide: true,
    }),
    removeButton(["cluster", "services", i], t("builder.remove-service", { name: s?.name ?? "" })),
    rowError(["cluster", "services", i])));
  return [rowError(["cluster", "services"]),
    ...(rows.length ? rows : [el("p", { className: "hint" }, t("builder.no-services"))]),
    el("button", { type: "button", "data-op": "add-service" }, `+ ${t("builder.add-service")}`)];
}

const INTEGER_SETTINGS = new Set(["nodeLeaseDurationSeconds", "largeClusterSizeThreshold",
  "defaultNotReadyTolerationSeconds", "defaultUnreachableTolerationSeconds"]);
const NUMBER_SETTINGS = new Set(["nodeEvictionRate", "secondaryNodeEvictionRate", "unhealthyZoneThreshold"]);

/** A component's settings: empty means the version's default, shown as the placeholder and the hint. */
function componentFields(ctx, component) {
  const { t, config, doc } = ctx;
  const defaults = config.defaults[doc.kubernetesVersion] ?? config.defaults[config.defaultVersion];
  const given = doc[component] && typeof doc[component] === "object" ? doc[component] : {};
  const out = [rowError([component])];
  for (const [key, fallback] of Object.entries(defaults[component])) {
    const hint = t("builder.default", { value: String(fallback) });
    const path = [component, key];
    if (typeof fallback === "boolean") {
      const options = [["", t("builder.default", { value: fallback ? t("builder.yes") : t("builder.no") })],
        ["true", t("builder.yes")], ["false", t("builder.no")]];
      out.push(field(path, key, { kind: "bool", value: given[key] === undefined ? "" : String(given[key]), options }));
      continue;
    }
    const kind = INTEGER_SETTINGS.has(key) ? "integer" : NUMBER_SETTINGS.has(key) ? "number" : "duration";
    out.push(field(path, key, {
      kind, value: given[key], placeholder: String(fallback), hint, attrs: { translate: "no" },
    }));
  }
  return out;
}

/** The targets a fault action can take in this cluster: its nodes (and those created by earlier faults). */
function nodeOptions(ctx, index) {
  const created = (Array.isArray(ctx.doc.faults) ? ctx.doc.faults : []).slice(0, index < 0 ? undefined : index)
    .filter((f) => f?.action === "create-node" && f.name).map((f) => f.name);
  return [...ctx.nodes.map((n) => n.name), ...created];
}

function zoneOptions(ctx) {
  return [...new Set(ctx.nodes.map((n) => n.zone))];
}

/**
 * The options of a picker of `names` (value, text), with `current` even when it is not one of them.
 * @param {{t: Function}} ctx
 * @param {string[]} names
 * @param {string | undefined | null} current
 * @param {{empty?: string}} [how]  `empty`: the text of a choice of none, first
 */
function choices(ctx, names, current, { empty } = {}) {
  const options = names.map((n) => [n, n || "(unlabelled)"]);
  if (current !== undefined && current !== null && current !== "" && !names.includes(current)) {
    options.push([String(current), ctx.t("builder.not-in-cluster", { name: current })]);
  }
  return empty ? [["", empty], ...options] : options;
}

/** A fault's own fields, by what its action needs (simulation/faults.py ACTIONS). */
export function faultTargetFields(ctx, path, fault, index) {
  const { t, config } = ctx;
  const spec = config.actions[fault?.action] ?? { required: [], optional: [], reverse: null };
  const wants = [...spec.required, ...spec.optional];
  const out = [];
  const optional = (key) => !spec.required.includes(key);
  if (wants.includes("node")) {
    out.push(field([...path, "node"], t("builder.fault-node"), {
      value: fault?.node ?? "",
      options: choices(ctx, nodeOptions(ctx, index), fault?.node, {
        empty: optional("node") ? t("builder.fault-all-nodes") : null,
      }),
      attrs: { translate: "no" },
    }));
  }
  if (wants.includes("name")) {
    out.push(field([...path, "name"], t("builder.fault-new-node"), { value: fault?.name, placeholder: "node-new" }));
  }
  if (wants.includes("zone")) {
    out.push(field([...path, "zone"], t("builder.fault-zone"), {
      value: fault?.zone ?? "",
      options: choices(ctx, zoneOptions(ctx), fault?.zone, { empty: optional("zone") ? "—" : null }),
      attrs: { translate: "no" },
    }));
  }
  if (wants.includes("resource")) {
    out.push(field([...path, "resource"], t("builder.fault-resource"), {
      value: fault?.resource, options: config.resources.map((r) => [r, r]), attrs: { translate: "no" },
    }));
  }
  if (wants.includes("latency")) {
    out.push(field([...path, "latency"], t("builder.fault-latency"), {
      kind: "duration", value: fault?.latency, placeholder: "2s",
    }));
  }
  if (wants.includes("kubelet")) {
    out.push(field([...path, "kubelet"], t("builder.fault-kubelet"), { kind: "checkbox", value: fault?.kubelet }));
  }
  if (spec.reverse) {
    out.push(field([...path, "for"], t("builder.fault-for"), {
      kind: "duration", value: fault?.for, placeholder: t("builder.fault-for-hint"), rerender: true,
    }));
  }
  return out;
}

function actionOptions({ t, config }) {
  return Object.keys(config.actions).map((a) => [a, t(`action.${a}`)]);
}

export function faultTarget(fault) {
  return fault?.node ?? fault?.zone ?? fault?.name ?? "";
}

function faultFields(ctx) {
  const { t, doc } = ctx;
  const faults = Array.isArray(doc.faults) ? doc.faults : [];
  const duration = seconds(doc.duration ?? "15m") || 900;
  const rows = faults.map((fault, i) => {
    const path = ["faults", i];
    return el("div", { className: "row fault", "data-path": pathText(path), id: `fault-${i}` },
      field([...path, "at"], t("builder.fault-at"), {
        kind: "duration", value: fault?.at, placeholder: "60s", rerender: true, attrs: { translate: "no" },
      }),
      field([...path, "action"], t("builder.fault-action"), {
        value: fault?.action, options: actionOptions(ctx), attrs: { "data-op": "action" },
      }),
      ...faultTargetFields(ctx, path, fault, i),
      removeButton(path, t("builder.remove-fault", { at: String(fault?.at ?? "") })),
      rowError(path));
  });
  const draft = { action: "stop-kubelet", node: ctx.nodes[1]?.name ?? ctx.nodes[0]?.name ?? "node-1" };
  const adder = el("div", { className: "row fault-adder", "data-path": "draft" },
    field(["draft", "at"], t("builder.fault-at"), {
      kind: "duration", value: "", placeholder: nextFaultTime(faults, duration), attrs: { translate: "no" },
    }),
    field(["draft", "action"], t("builder.fault-action"), {
      value: draft.action, options: actionOptions(ctx), attrs: { "data-op": "draft-action" },
    }),
    el("div", { className: "draft-target", "data-draft": "target" }, ...faultTargetFields(ctx, ["draft"], draft, -1)),
    el("button", { type: "button", className: "primary", "data-op": "add-fault" }, `+ ${t("builder.add-fault")}`));
  return [timeline(ctx, faults, duration), rowError(["faults"]),
    ...(rows.length ? rows : [el("p", { className: "hint" }, t("builder.no-faults"))]), adder];
}

/** A minute after the last fault, within the duration: where the next one is likely to go. */
export function nextFaultTime(faults, duration) {
  const last = Math.max(0, ...faults.map((f) => seconds(f?.at) ?? 0));
  const next = Math.min(last + 60, duration);
  return next % 60 === 0 ? `${next / 60}m` : `${next}s`;
}

function timeline(ctx, faults, duration) {
  const { t } = ctx;
  const step = [60, 120, 300, 600, 900, 1800, 3600, 7200].find((s) => duration / s <= 10) ?? 7200;
  const ticks = [];
  for (let s = 0; s <= duration; s += step) {
    ticks.push(el("span", { className: "tick", style: `left:${(s / duration) * 100}%` }, clock(s)));
  }
  const markers = faults.map((fault, i) => {
    const at = Math.min(seconds(fault?.at) ?? 0, duration);
    const span = seconds(fault?.for);
    const label = `${clock(at)} ${t(`action.${fault?.action}`, {}, String(fault?.action))} ${faultTarget(fault)}`;
    const marker = el("button", {
      type: "button", className: "marker", style: `left:${(at / duration) * 100}%`, "data-op": "focus-fault",
      "data-target": `fault-${i}`, title: label, "aria-label": label,
    });
    // `for`: the stretch until the reverse action, drawn from the marker on
    const stretch = span ? el("span", {
      className: "stretch",
      style: `left:${(at / duration) * 100}%;width:${(Math.min(span, duration - at) / duration) * 100}%`,
      "aria-hidden": "true",
    }) : null;
    return stretch ? [stretch, marker] : [marker];
  }).flat();
  return el("div", { className: "timeline", role: "group", "aria-label": t("builder.timeline"),
    title: t("builder.timeline"), "data-duration": duration },
    el("div", { className: "track", "data-op": "timeline" }),
    el("div", { className: "ticks", "aria-hidden": "true" }, ...ticks), ...markers);
}
