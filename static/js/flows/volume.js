// @ts-check
// The attach/detach controller's reconciler for the selected pod's volume
// (pkg/controller/volume/attachdetach/reconciler/reconciler.go): whether a pod object on the old
// node still needs it, whether that node's kubelet still lists it in volumesInUse, the
// out-of-service taint, the maxWaitForUnmountDuration timeout (6 min) on an unhealthy node, and
// the attach to the new pod's node, with the branch the volume is on lit (volumes.js volumePath).
// Drawn only on a run that has volumes.
import { barSize, el, setText } from "#js/dom.js";
import { countdownAt, formatCountdown } from "#js/time.js";
import { volumePath } from "#js/volumes.js";
import { flowchart } from "#js/flows/svg.js";

const W = 520;
const H = 500;
const NODES = {
  loop: { x: 170, y: 18, w: 300, h: 28, key: "volume.loop", shape: "step" },
  "q-needed": { x: 170, y: 84, w: 300, h: 56, key: "volume.q-needed", shape: "question" },
  stuck: { x: 420, y: 84, w: 150, h: 70, key: "volume.stuck", shape: "step bad" },
  "q-inuse": { x: 170, y: 170, w: 300, h: 44, key: "volume.q-inuse", shape: "question" },
  detach: { x: 420, y: 170, w: 150, h: 40, key: "volume.detach", shape: "step good" },
  "q-oos": { x: 170, y: 246, w: 300, h: 44, key: "volume.q-oos", shape: "question" },
  "detach-now": { x: 420, y: 246, w: 150, h: 40, key: "volume.detach-now", shape: "step good" },
  "q-timeout": { x: 170, y: 326, w: 300, h: 56, key: "volume.q-timeout", shape: "question" },
  force: { x: 420, y: 326, w: 150, h: 40, key: "volume.force", shape: "step bad" },
  wait: { x: 170, y: 400, w: 240, h: 32, key: "volume.wait", shape: "step" },
  "multi-attach": { x: 170, y: 462, w: 300, h: 44, key: "volume.multi-attach", shape: "step bad" },
  attach: { x: 430, y: 462, w: 170, h: 56, key: "volume.attach", shape: "step good" },
};

// [id, label key, path, label x, label y]
const EDGES = [
  ["loop-needed", "", "M170,32 L170,54"],
  ["needed-yes", "health.yes", "M320,84 L343,84", 332, 74],
  ["needed-no", "volume.no-deleted", "M170,112 L170,146", 182, 130, "start"],
  ["inuse-no", "health.no", "M320,170 L343,170", 332, 160],
  ["inuse-yes", "health.yes", "M170,192 L170,222", 182, 208, "start"],
  ["oos-yes", "health.yes", "M320,246 L343,246", 332, 236],
  ["oos-no", "health.no", "M170,268 L170,296", 182, 283, "start"],
  ["timeout-yes", "health.yes", "M320,326 L343,326", 332, 316],
  ["timeout-no", "health.no", "M170,354 L170,382", 182, 369, "start"],
  ["detach-attach", "", "M495,170 L513,170 L513,432"],
  ["now-attach", "", "M495,246 L506,246 L506,432"],
  ["force-attach", "", "M495,326 L499,326 L499,432"],
];

export class VolumeFlow {
  constructor(root, { t }) {
    this.root = root;
    this.t = t;
    this.head = el("p", "vol-head");
    this.head.translate = false;
    const { svg, items, edgeGroup } = flowchart({
      width: W, height: H, cls: "volume", marker: "volume-head", nodes: NODES, t,
      edges: EDGES.map(([id, label, d, lx, ly, anchor]) => ({ id, label, d, lx, ly, anchor })),
    });
    this.items = items;
    this.edges = edgeGroup;
    // The force-detach countdown, under the chart like the eviction flow's.
    this.countdown = el("div", "countdown vol-countdown");
    this.countdown.dataset.role = "force-detach";
    this.fill = el("span", "fill live-text countdown-text");
    this.text = el("span", "label");
    this.fill.append(this.text);
    this.countdown.append(this.fill);
    this.countdown.hidden = true;
    this.note = el("p", "hint", t("volume.note"));
    this.pick = el("p", "hint", t("volume.pick"));
    this.body = el("div", "vol-body");
    this.body.append(this.head, svg, this.countdown, this.note);
    root.replaceChildren(this.pick);
    this.svg = svg;
    this.litKey = null;
    this.headKey = null;
    this.shown = {};
  }

  /** `state`: volumes.js volumeState of the selected pod (null: no pod with a volume). */
  render(state, now) {
    if (!state) {
      if (this.pick.parentNode !== this.root) this.root.replaceChildren(this.pick);
      this.litKey = null;
      return;
    }
    if (this.body.parentNode !== this.root) this.root.replaceChildren(this.body);
    const headKey = JSON.stringify([state.pod, state.claim, state.pv, state.podNode, state.oldNode]);
    if (headKey !== this.headKey) {
      this.headKey = headKey;
      this.head.replaceChildren(this.t(state.oldNode ? "volume.head-old" : "volume.head", {
        pod: state.pod, claim: state.claim, pv: state.pv, node: state.podNode ?? "—", old: state.oldNode ?? "—",
      }));
    }
    const lit = volumePath(state);
    const key = [...lit].sort().join(",");
    if (key !== this.litKey) {
      this.litKey = key;
      for (const [id, item] of this.items) {
        const on = lit.has(id);
        item.classList.toggle("lit", on);
        if (on && item.parentNode === this.edges) this.edges.append(item); // a lit edge over the unlit ones
      }
    }
    const detach = state.detach && lit.has("wait") ? state.detach : null;
    if (this.countdown.hidden !== !detach) this.countdown.hidden = !detach;
    if (detach) {
      const { left, share, shown } = countdownAt(detach, now, 400);
      if (this.shown.share !== share) {
        this.shown.share = share;
        this.fill.style.backgroundSize = barSize(share);
      }
      if (this.shown.left !== shown) {
        this.shown.left = shown;
        this.countdown.dataset.left = left.toFixed(0);
        setText(this.text, this.t("volume.force-in", { left: formatCountdown(shown), node: state.oldNode }));
      }
    }
  }
}
