// @ts-check
// The taint eviction controller's decision for the selected pod (docs/kubernetes-node-health.md §4.2): the node's
// NoExecute taints, the FIRST toleration that tolerates each, and the result — delete now,
// never, or a countdown to the minimum tolerationSeconds — with the taken branch highlighted.
import { evictionDecision, isTerminating, nameOf, taintString, taintsOf } from "#js/k8s.js";
import { barSize, setText } from "#js/dom.js";
import { countdownAt, formatCountdown } from "#js/time.js";

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const tolString = (tol) => {
  const parts = [tol.key || "*", tol.operator === "Exists" ? "Exists" : `=${tol.value ?? ""}`, tol.effect || "*"];
  const seconds = tol.tolerationSeconds !== undefined && tol.tolerationSeconds !== null
    ? ` ${tol.tolerationSeconds}s` : "";
  return `${parts.join(" ")}${seconds}`;
};

export class EvictionFlow {
  constructor(root, { t }) {
    this.root = root;
    this.t = t;
    this.signature = "";
  }

  render(pod, node, eviction, now) {
    if (!pod) {
      if (this.signature !== "none") this.root.replaceChildren(el("p", "hint", this.t("eviction.pick")));
      this.signature = "none";
      return;
    }
    const taints = taintsOf(node);
    const decision = evictionDecision(pod, taints);
    const signature = JSON.stringify([pod.metadata?.resourceVersion, nameOf(pod), taints, decision.kind,
      isTerminating(pod), eviction?.fireAt]);
    if (signature !== this.signature) {
      this.signature = signature;
      this.#build(pod, node, taints, decision, eviction);
    }
    const bar = this.bar;
    if (bar && eviction && !eviction.never) {
      // Written when the bar moved by a step or the text by a second (tenths in the last ten).
      const { share, shown } = countdownAt(eviction, now, 400);
      if (bar.share !== share) {
        bar.share = share;
        bar.fill.style.backgroundSize = barSize(share);
      }
      if (bar.left !== shown) {
        bar.left = shown;
        setText(bar.text, this.t("cluster.evicts-in", { left: formatCountdown(shown) }));
      }
    }
  }

  #build(pod, node, taints, decision, eviction) {
    const t = this.t;
    this.bar = null;
    const steps = [];
    const head = el("h4", "ev-pod");
    const name = el("code", "", `${pod.metadata?.namespace ?? "default"}/${nameOf(pod)}`);
    name.translate = false;
    head.append(name, " → ", Object.assign(el("code", "", nameOf(node) || "—"), { translate: false }));
    steps.push(head);

    const noExecute = taints.filter((x) => x.effect === "NoExecute");
    const s1 = el("div", `ev-step ${noExecute.length ? "lit" : "lit-none"}`);
    s1.append(el("div", "ev-q", t("eviction.q-taints")));
    const chips = el("div", "chips");
    for (const taint of noExecute) {
      chips.append(Object.assign(el("span", "chip taint effect-NoExecute", taintString(taint)), { translate: false }));
    }
    if (!noExecute.length) chips.append(el("span", "ev-none", t("eviction.no-taints")));
    s1.append(chips);
    steps.push(s1);

    const s2 = el("div", `ev-step ${noExecute.length ? "lit" : ""}`);
    s2.append(el("div", "ev-q", t("eviction.q-toleration")));
    const list = el("ol", "ev-tolerations");
    list.translate = false;
    const picked = new Set(decision.picks.map((p) => p.toleration).filter(Boolean));
    for (const tol of pod.spec?.tolerations ?? []) {
      const li = el("li", picked.has(tol) ? "picked" : "", tolString(tol));
      list.append(li);
    }
    s2.append(list);
    steps.push(s2);

    const outcomes = el("div", "ev-outcomes");
    for (const kind of ["now", "never", "after"]) {
      const box = el("div", `ev-outcome o-${kind} ${decision.kind === kind ? "lit" : ""}`);
      box.dataset.outcome = kind;
      box.append(el("div", "", t(`eviction.${kind}`, { seconds: decision.seconds ?? "N" })));
      if (kind === "after" && decision.kind === "after") {
        const bar = el("div", "countdown ev-countdown");
        const fill = el("span", "fill live-text countdown-text");
        const text = el("span", "label");
        fill.append(text);
        bar.append(fill);
        box.append(bar);
        this.bar = { fill, text, share: null, left: null };
        if (eviction?.estimated) box.append(el("div", "hint", t("eviction.estimated")));
      }
      outcomes.append(box);
    }
    steps.push(outcomes);
    if (isTerminating(pod)) steps.push(el("p", "ev-terminating", t("eviction.terminating")));
    steps.push(el("p", "hint", t("eviction.note")));
    this.root.replaceChildren(...steps);
  }
}
