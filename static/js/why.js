// @ts-check
// "Why did this happen?": the explanation of one event, built from the decision records the
// simulation emits (rule, inputs, outcome, Kubernetes source file). A write is explained by the
// decision of the same controller that led to it.
import { requestLabel } from "#js/sequence/model.js";
import { formatOffset } from "#js/time.js";

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const code = (text) => {
  const c = el("code", "", text);
  c.translate = false;
  return c;
};

/**
 * The decision that caused a write: the same component's latest decision about that object,
 * at most 2 s earlier, looked up in the page's history (an EventHistory).
 */
export function findCause(event, history) {
  if (event.type !== "write" && event.type !== "transition") return null;
  for (let i = history.before(event.seq); i >= 0; i--) {
    if (event.t - history.t[i] > 2) break;
    if (history.typeAt(i) !== "decision") continue;
    const d = history.at(i);
    if (event.type === "write" && d.component !== event.component) continue;
    if (event.node && d.node && d.node !== event.node) continue;
    if (event.pod && d.pod && d.pod !== event.pod) continue;
    return d;
  }
  return null;
}

export function renderDecision(decision, { t, lang }) {
  const box = el("div", "why-decision");
  box.dataset.rule = decision.rule;
  const title = el("h4", "why-rule");
  title.append(el("span", "", t(`rule.${decision.rule}`, {}, decision.rule)), " ", code(decision.rule));
  box.append(title);
  // English pages show the simulation's own sentence (it carries the numbers); other languages
  // show the translated rule text, followed by the same inputs.
  const text = lang === "en" ? decision.explain : t(`rule-explain.${decision.rule}`, {}, decision.explain);
  box.append(el("p", "why-text", text ?? ""));
  const inputs = el("dl", "why-inputs");
  inputs.translate = false;
  for (const [k, v] of Object.entries(decision.inputs ?? {})) {
    inputs.append(el("dt", "", k), el("dd", "", typeof v === "object" ? JSON.stringify(v) : String(v)));
  }
  box.append(el("h5", "", t("why.inputs")), inputs);
  const outcome = el("p", "why-outcome");
  outcome.append(el("span", "", `${t("why.outcome")} `), code(String(decision.outcome ?? "")));
  box.append(outcome);
  if (decision.source) {
    const src = el("p", "why-source");
    src.append(el("span", "", `${t("why.source")} `), code(`kubernetes/kubernetes ${decision.source}`));
    box.append(src);
  }
  return box;
}

/** A transition, a fault or a decision in a sentence of the page's language (else its type). */
export function eventText(event, t) {
  if (event.type === "transition") {
    return t(`transition.${event.kind}`, {
      node: event.node ?? "", pod: event.pod ?? "", key: event.key ?? "", effect: event.effect ?? "",
      from: typeof event.from === "object" ? JSON.stringify(event.from) : event.from ?? "",
      to: typeof event.to === "object" ? JSON.stringify(event.to) : event.to ?? "",
    }, event.kind);
  }
  if (event.type === "fault") {
    return t("why.fault", {
      action: t(`action.${event.action}`, {}, event.action), target: event.node ?? event.zone ?? "",
    });
  }
  if (event.type === "decision") return t(`rule.${event.rule}`, {}, event.rule);
  if (event.type === "write" || event.type === "read") return `${requestLabel(event)} → ${event.code}`;
  return event.type;
}

export function renderWhy(event, { t, lang, history }) {
  const root = el("div", "why");
  root.dataset.seq = event.seq;
  const head = el("div", "why-head");
  head.append(el("span", "why-time", formatOffset(event.t)), " ", code(event.component ?? ""));
  if (event.node) head.append(" ", code(event.node));
  root.append(head);
  switch (event.type) {
    case "write":
    case "read": {
      const line = el("p", "why-what");
      line.append(el("span", "", `${t(`why.${event.type}`)} `), code(`${requestLabel(event)} → ${event.code}`));
      if (event.user) line.append(" ", el("span", "", t("why.as")), " ", code(event.user));
      root.append(line);
      if (event.message) root.append(el("p", "why-error", event.message));
      break;
    }
    case "request-failed":
      root.append(el("p", "why-what", t("why.request-failed", { request: requestLabel(event) })));
      if (event.message) root.append(code(event.message));
      break;
    case "watch":
      root.append(el("p", "why-what", t("why.watch", { object: `${event.resource}/${event.name}` })));
      break;
    case "transition":
    case "fault":
      root.append(el("p", "why-what", eventText(event, t)));
      break;
    case "decision":
      root.append(renderDecision(event, { t, lang }));
      return root;
    default:
      break;
  }
  const cause = findCause(event, history);
  if (cause) {
    root.append(el("h5", "why-because", t("why.because")));
    root.append(renderDecision(cause, { t, lang }));
  } else if (event.type === "write" && event.component?.startsWith("kubelet")) {
    root.append(el("p", "why-text", t(`why.kubelet.${event.component}`, {}, "")));
  }
  return root;
}
