// @ts-check
// Composition root of the comparison page (docs/architecture.md §6.9): the two runs of one scenario on one
// clock, each side with its own websocket, object store, cluster view and sequence diagram (the run page's
// modules), and above them the strip of the key transitions that differ. Commands go to both sides at once;
// control mode exists only when the URL fragment carried the comparison's control token. A comparison lesson
// (docs/lessons.md) has the run page's lesson bar and question card (lesson.js): side a's run holds the lesson,
// and the events of both sides, each marked with its side, are what its reveals wait for.
import {
  comparisonLink, downloadReport, getComparison, getReport, sendComparisonCommand, takeComparisonRecipe,
  takeControlToken,
} from "#js/api.js";
import { copyText } from "#js/clipboard.js";
import { ClusterView } from "#js/cluster-view.js";
import { RunConnection } from "#js/connection.js";
import { ControllerState } from "#js/controllers.js";
import { el, setText } from "#js/dom.js";
import { FaultPanel } from "#js/faults.js";
import { Follow } from "#js/follow.js";
import { FrameScheduler } from "#js/frames.js";
import { EventHistory } from "#js/history.js";
import { makeTranslator } from "#js/i18n.js";
import { nameOf, naturalCompare, zoneOf } from "#js/k8s.js";
import { TimeAxis } from "#js/sequence/time-axis.js";
import { SequenceView } from "#js/sequence/view.js";
import { ObjectStore } from "#js/store.js";
import { Classroom, lookBackIn } from "#js/lesson.js";
import { formatOffset, formatUtc, VirtualClock } from "#js/time.js";

const LOG_MAX = 4000; // per side: half the run page's scroll-back, two diagrams share the screen
const LOG_TRIM = 1000;
const ENDED = ["finished", "idle", "failed"];
// a lesson step's tab (the run page's panels) -> the part of this page that shows the same (showPart)
const PARTS = { cluster: ".cluster", kubectl: ".cluster", traffic: ".seq", flows: ".seq", why: "#differences" };

/** One side: a run's stream into its own store, drawn by its own cluster view and sequence diagram. */
class Side {
  constructor(page, run, root) {
    this.page = page;
    this.run = run;
    this.key = run.side;
    this.root = root;
    this.store = new ObjectStore();
    this.controllers = new ControllerState();
    this.clock = new VirtualClock();
    this.history = new EventHistory({ max: LOG_MAX, trim: LOG_TRIM });
    this.renderedVersion = -1;
    this.faults = []; // the faults this side applied, as they came (the page's tests read them)
    const request = () => page.frames.request();
    this.cluster = new ClusterView(root.querySelector(".cluster"), {
      t: page.t, store: this.store, controllers: this.controllers, clock: this.clock,
      onFocus: (node) => page.setFocus(node, { picked: true }), onSelectPod: () => {}, request,
    });
    this.sequence = new SequenceView(root.querySelector(".seq"), {
      d3: window.d3, t: page.t, history: this.history, onSelect: () => {}, request,
    });
    // side a's run holds a comparison lesson: its messages go to the page's classroom
    const classroom = run.side === "a" ? page.classroom : null;
    this.connection = new RunConnection(run.ws, {
      lastSeq: () => this.store.lastSeq,
      onSnapshot: (msg) => this.onSnapshot(msg),
      onFrame: (msg) => this.onFrame(msg),
      onClock: (clock) => this.onClock(clock),
      onStatus: (msg) => this.onStatus(msg),
      onState: (state) => page.onConnectionState(this.key, state),
      onPresence: (n) => page.onPresence(this.key, n),
      onComparison: (msg) => page.onComparison(msg),
      // "Viewers follow me": a command for a comparison goes to both runs; side a's messages say it
      ...(run.side === "a" ? { onFollow: (msg) => page.follow?.onMessage(msg) } : {}),
      onError: (message, msg) => classroom?.refused(msg) || page.toast(message),
      ...(classroom ? {
        onLesson: (msg) => classroom.onLesson(msg),
        onStep: (msg) => classroom.onStep(msg),
        onFastForward: (msg) => classroom.onFastForward(msg),
        onQuestion: (msg) => classroom.onQuestion(msg),
        onTally: (msg) => classroom.onTally(msg),
        onReveal: (msg) => classroom.onReveal(msg),
        onAnswerAck: (msg) => classroom.onAnswerAck(msg),
      } : {}),
    });
  }

  onSnapshot(msg) {
    const snapshot = msg.snapshot ?? {};
    this.store.loadSnapshot({ ...snapshot, last_seq: msg.last_seq ?? snapshot.last_seq });
    this.controllers.loadSnapshot(snapshot);
    this.clock.anchor(snapshot.time, snapshot.t ?? 0);
    this.onClock(msg.clock ?? { t: snapshot.t ?? 0, speed: 1, paused: true });
    if (msg.run) this.onStatus(msg.run);
    if (snapshot.scenario) this.page.onScenario(snapshot.scenario);
    this.cluster.invalidate();
    this.renderedVersion = -1;
    this.page.sideReady(this);
  }

  onFrame(msg) {
    this.onClock(msg.clock);
    const fresh = [];
    for (const raw of msg.events ?? []) {
      if (!this.store.apply(raw)) continue;
      this.controllers.apply(raw);
      this.history.push(raw);
      fresh.push(raw);
      if (raw.type === "fault") this.faults.push(raw);
      if (raw.type === "write" && (raw.resource === "nodes" || raw.resource === "leases")) this.cluster.touch(raw.name);
      else if (raw.type === "write" && raw.resource === "pods") {
        this.cluster.touch(raw.object?.spec?.nodeName ?? raw.node ?? "");
      } else if (raw.node) this.cluster.touch(raw.node);
    }
    this.store.applyFrameExtras(msg);
    if (fresh.length) this.sequence.append(fresh);
    this.page.nodesCame(this);
    // a reveal's evidence may name the side it comes from (`side: b`): each event says its own
    if (fresh.length && this.page.classroom) this.page.classroom.events(fresh.map((e) => ({ ...e, side: this.key })));
    this.page.frames.request();
  }

  onClock(clock) {
    if (!clock) return;
    this.clock.update(clock);
    this.page.frames.request();
  }

  onStatus(msg) {
    const status = msg.status ?? msg.run?.status;
    if (status) this.status = status;
    if (msg.clock) this.clock.update(msg.clock);
    this.page.onStatus();
  }

  setFocus(node) {
    this.cluster.setFocus(node);
    this.sequence.setFocus(node);
    this.renderedVersion = -1;
  }

  render() {
    const version = this.store.version + this.controllers.version * 1e6;
    if (version !== this.renderedVersion || this.cluster.needsRebuild) {
      this.renderedVersion = version;
      this.cluster.render();
    } else {
      this.cluster.tick();
    }
    this.cluster.mountRest();
    return this.sequence.render();
  }
}

export class ComparePage {
  constructor(config) {
    this.config = config;
    this.t = makeTranslator(config.strings);
    this.lang = config.lang;
    const { token, solo } = takeControlToken(`comparison-${config.comparison}`);
    this.token = token;
    this.solo = solo;
    this.control = Boolean(this.token);
    document.body.dataset.mode = this.control ? "control" : "viewer";
    if (this.solo) document.body.dataset.solo = "true";
    this.focus = null;
    this.autoFocus = true; // until the user picks a node (nodesCame)
    this.autoFocusCount = 0;
    this.rows = [];
    this.rowsById = new Map(); // the strip's rows by name, as the driver's messages left them
    this.rowsVersion = null; // the driver's message they stand at (`v`)
    this.final = false;
    // the sequence diagrams follow their live end before the pass, never in it (sequence/view.js)
    this.frames = new FrameScheduler(() => this.tick(), {
      prepare: () => this.sides?.forEach((side) => side.sequence.scrollToLive()),
    });
    this.classroom = config.lesson ? this.#classroom() : null;
    const quietly = (cmd) => sendComparisonCommand(config.comparison, this.token, cmd).catch((e) =>
      this.toast(this.t("toast.refused", { status: e.status ?? "", message: e.message }), true)); // no toast per click
    // both sides show their cluster and their traffic: the trainer's node is what there is to follow
    this.follow = new Follow({ control: this.control, command: quietly, focus: (node) => this.setFocus(node),
      tab: () => {}, where: () => ({ node: this.focus }) },
    document.querySelector("#follow-me"), document.querySelector("#follow-trainer"));
    this.sides = config.runs.map((run) => new Side(this, run, document.querySelector(`#side-${run.side}`)));
    this.#oneTimeAxis();
    this.#controls();
    this.#sideTabs();
    this.#fetchRows();
    window.heartbeat = this; // tests read the page's state from here
    this.frames.request();
  }

  /** A comparison lesson's bar and card (lesson.js), on side a's run, where its questions and answers are. */
  #classroom() {
    const $ = (sel) => document.querySelector(sel);
    const run = this.config.runs[0].id;
    const refused = (e) => this.toast(this.t("toast.refused", { status: e.status ?? "", message: e.message }), true);
    return new Classroom($("#lesson-bar"), $("#question-layer"), {
      t: this.t, lang: this.lang, control: this.control, solo: this.solo, run,
      send: (msg) => this.sides?.[0].connection.send(msg) ?? false,
      command: (cmd) => this.command(cmd, { quiet: this.solo }), // alone: the card itself answers
      focus: (node) => this.setFocus(node),
      tab: (name) => this.showPart(name),
      explain: (event) => this.showEvidence(event),
      reveal: () => {},
      // a revealed question's evidence, on joining later: among the events of the side its matcher names (of
      // either side without one, docs/lessons.md "Comparison lessons")
      lookBack: lookBackIn((match) => this.config.runs.filter((r) => !match.side || r.side === match.side)
        .map((r) => ({ id: r.id, side: r.side }))),
      report: this.control ? () => getReport(run, this.token) : null,
      download: this.control ? (format) => downloadReport(run, this.token, format).catch(refused) : null,
    });
  }

  #controls() {
    const $ = (sel) => document.querySelector(sel);
    if (!this.control) {
      $("#control-bar")?.remove();
      $("#faults")?.remove();
      return;
    }
    $("#control-bar").hidden = false;
    $("#faults").hidden = false;
    if (this.solo) { // alone: nobody to lead, and the only watcher is the learner
      $("#viewers").hidden = true;
      $(".follow-me").hidden = true;
    }
    $("#btn-pause").addEventListener("click", () => this.command({ action: "pause" }));
    $("#btn-resume").addEventListener("click", () => this.command({ action: "resume" }));
    $("#btn-step").addEventListener("click", () => this.command({ action: "step" }));
    $("#btn-end").addEventListener("click", () => this.command({ action: "stop" }));
    $("#speed").addEventListener("change", (e) => this.command({ action: "speed", value: Number(e.target.value) }));
    const store = () => this.sides[0].store;
    this.faults = new FaultPanel($("#fault-buttons"), {
      t: this.t, actions: this.config.faultActions,
      getContext: () => ({ ...this.faults.options(), node: this.focus, zone: zoneOf(store().node(this.focus)),
        newNode: `node-${store().count("nodes") + 1}`, newZone: zoneOf(store().node(this.focus)), kubelet: true }),
      send: (cmd) => this.command(cmd),
    });
    const share = $("#share-viewer");
    share.value = comparisonLink(this.config.comparison);
    $("#copy-viewer").addEventListener("click", async () => {
      await copyText(share);
      this.toast(this.t("share.copied"));
    });
    $("#take-recipe")?.addEventListener("click", () => this.#takeRecipe());
    $("#show-qr").addEventListener("click", () => {
      const image = $("#qr-image");
      if (!image.src) image.src = image.dataset.src;
      setText($("#qr-link"), share.value);
      $("#qr-dialog").showModal();
    });
  }

  /** A recipe link of the comparison (POST /api/comparisons/<id>/recipe): it plays both sides again. */
  async #takeRecipe() {
    const $ = (sel) => document.querySelector(sel);
    const link = $("#recipe-link");
    link.value = "";
    setText($("#recipe-error"), "");
    $("#recipe-open").removeAttribute("href");
    $("#recipe-dialog").showModal();
    try {
      const recipe = await takeComparisonRecipe(this.config.comparison, this.token);
      link.value = recipe.url;
      $("#recipe-open").href = recipe.url;
      link.select();
    } catch (e) {
      setText($("#recipe-error"), e.message);
    }
  }

  /**
   * The two sequence diagrams on one time axis (sequence/time-axis.js): the same virtual second at the same
   * height in both, and scrolled together, so that side by side a row of side a faces what side b did then.
   */
  #oneTimeAxis() {
    const axis = new TimeAxis(Object.fromEntries(this.sides.map((side) => [side.key, side.sequence.model])));
    for (const side of this.sides) side.sequence.setAxis(axis, side.key);
    const scrollers = this.sides.map((side) => side.sequence.scroller);
    for (const scroller of scrollers) {
      scroller.addEventListener("scroll", () => {
        for (const other of scrollers) {
          if (other !== scroller && Math.abs(other.scrollTop - scroller.scrollTop) >= 1) {
            other.scrollTop = scroller.scrollTop;
          }
        }
      }, { passive: true });
    }
  }

  /** On a phone the two sides are tabs under the strip of differences (css/compare.css). */
  #sideTabs() {
    const tabs = [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".side-tabs [data-side]"))];
    const show = (key) => {
      document.body.dataset.side = key;
      for (const tab of tabs) tab.setAttribute("aria-selected", String(tab.dataset.side === key));
      for (const side of this.sides) side.cluster.invalidate();
      this.frames.request();
    };
    for (const tab of tabs) tab.addEventListener("click", () => show(tab.dataset.side));
    show("a");
    this.showSide = show;
  }

  /**
   * A lesson step's "tab" action (the run page's panels, docs/lessons.md): this page shows every part at once,
   * so the step brings the part it names into view, on the side shown (both on a laptop): the cluster, the API
   * traffic (for "flows" too), and for "why" (the run page's explanation of an event) the strip of differences,
   * which says what the settings changed. kubectl has no part here: the cluster stands in for it.
   */
  showPart(name) {
    const part = PARTS[name];
    if (!part) return;
    document.body.dataset.part = name;
    const target = part === "#differences" ? document.querySelector(part)
      : document.querySelector(`#side-${document.body.dataset.side ?? "a"} ${part}`);
    target?.scrollIntoView({ block: "nearest" });
  }

  /** A reveal's evidence ("Why?"): its node in focus on both sides, and on a phone the side it happened on. */
  showEvidence(event) {
    if (event.node) this.setFocus(event.node, { picked: true });
    if (event.side) this.showSide?.(event.side);
  }

  sideReady(side) {
    if (this.focus) side.setFocus(this.focus);
    this.nodesCame(side);
  }

  /**
   * Until the user picks a node, the page focuses the one the scenario breaks (else node-2) as soon as it
   * exists: a page opened before the cluster came up gets its nodes by create writes, one by one, and shows
   * the first meanwhile. Looked at again only when the node count moved (as the run page does).
   */
  nodesCame(side) {
    const count = side.store.count("nodes");
    if (!this.autoFocus || !count || count === this.autoFocusCount) return;
    this.autoFocusCount = count;
    if (this.follow?.following && this.follow.last.node) return; // the trainer's node, not the scenario's
    const nodes = side.store.list("nodes").map(nameOf).sort(naturalCompare);
    const wanted = this.config.focus ?? "node-2";
    const best = nodes.includes(wanted) ? wanted : nodes[0];
    if (best !== this.focus) this.setFocus(best);
    if (best === wanted) this.autoFocus = false;
  }

  setFocus(node, { picked = false } = {}) {
    if (!node) return;
    if (picked) {
      this.autoFocus = false;
      this.follow?.picked(); // a viewer's own pick: the page stops following the trainer
    }
    this.focus = node;
    this.follow?.looked({ node });
    for (const side of this.sides) side.setFocus(node);
    this.faults?.setTarget({ node, zone: zoneOf(this.sides[0].store.node(node)) });
    for (const box of document.querySelectorAll(".focus-name")) setText(box, node);
    this.frames.request();
  }

  onScenario(scenario) {
    if (this.titled) return;
    this.titled = true;
    const title = scenario.title?.[this.lang.startsWith("zh") ? "zh" : "en"] ?? scenario.title?.en ?? scenario.name;
    setText(document.querySelector("#scenario-title"), title);
  }

  onConnectionState(key, state) {
    this.states = { ...this.states, [key]: state };
    const badge = document.getElementById("conn-state");
    // the worse of the two sides' connections speaks for the page
    const order = ["gone", "reconnecting", "connecting", "resynced", "live"];
    const worst = Object.values(this.states).sort((x, y) => order.indexOf(x) - order.indexOf(y))[0];
    badge.dataset.state = worst;
    badge.textContent = this.t(`conn.${worst}`);
  }

  onPresence(key, n) {
    if (key === "a") setText(document.querySelector("#viewers"), this.t("clock.viewers", { n }));
  }

  onStatus() {
    const statuses = this.sides.map((side) => side.status).filter(Boolean);
    const ended = statuses.find((status) => ENDED.includes(status));
    document.body.dataset.runStatus = ended ?? statuses[0] ?? "";
    setText(document.querySelector("#run-status"), ended ? this.t(`run-status.${ended}`, {}, ended) : "");
    this.frames.request();
  }

  /** Every row of the strip (GET /api/comparisons/<id>): on opening, and when an update does not follow on
   *  from the rows the page has (it missed one while reconnecting, or another driver took the comparison over). */
  #fetchRows() {
    if (this.fetchingRows) {
      this.fetchAgain = true; // an update came that the answer on its way may predate
      return;
    }
    this.fetchingRows = true;
    this.fetchAgain = false;
    getComparison(this.config.comparison).then((body) => {
      if (body.comparison) this.onComparison(body.comparison, { fetched: true });
    }).catch(() => {}).finally(() => {
      this.fetchingRows = false;
      if (this.fetchAgain) this.#fetchRows();
    });
  }

  /** The strip's message (docs/websocket-protocol.md "Comparisons"): every row, or with `since` only the rows
   *  that changed since that message. */
  onComparison(msg, { fetched = false } = {}) {
    if (msg.v !== undefined && msg.v === this.rowsVersion) return; // these rows already
    if (msg.since !== undefined) {
      if (msg.since !== this.rowsVersion) {
        this.#fetchRows();
        return;
      }
    } else if (fetched && this.rowsVersion !== null && this.rowsVersion !== msg.v && this.rowsAt > msg.t) {
      return; // the websocket brought newer rows meanwhile
    } else {
      this.rowsById.clear();
    }
    for (const row of msg.rows ?? []) this.rowsById.set(row.id, row);
    this.rowsVersion = msg.v ?? null;
    const first = (row) => Math.min(...[row.a, row.b].filter((t) => t !== null && t !== undefined));
    this.rows = [...this.rowsById.values()].sort((x, y) => first(x) - first(y));
    this.rowsAt = msg.t;
    this.final = Boolean(msg.final) || ENDED.includes(document.body.dataset.runStatus);
    this.#renderDifferences();
  }

  /** A transition in the page's language: object names and Kubernetes values as Kubernetes writes them. */
  describe(row) {
    const t = this.t;
    switch (row.kind) {
      case "fault":
        return t("compare.fault", { action: t(`action.${row.action}`, {}, row.action), node: row.node ?? "" });
      case "node-ready":
        return `${row.node} Ready=${row.to}`;
      case "node-condition":
        return `${row.node} ${row.key}=${row.to}`;
      case "taint-added":
      case "taint-removed":
        return `${row.node} taint ${row.kind === "taint-added" ? "+" : "-"}${row.key}:${row.effect}`;
      case "zone-state":
        return `zone ${row.key ?? ""} ${row.to}`;
      default:
        return t(`compare.${row.kind}`, { node: row.node ?? "" }, row.label);
    }
  }

  #renderDifferences() {
    const list = document.querySelector("#differences .diff-list");
    const differing = this.rows.filter((row) => row.differs);
    const missing = this.t(this.final ? "compare.never" : "compare.not-yet");
    const when = (value) => (value === null || value === undefined ? missing
      : this.t("compare.seconds", { t: value.toFixed(1) }));
    list.replaceChildren(...differing.map((row) => {
      const item = el("li", "diff-row");
      item.dataset.kind = row.kind;
      const what = el("span", "diff-what", this.describe(row));
      const a = el("span", "diff-a", `A ${when(row.a)}`);
      const b = el("span", "diff-b", `B ${when(row.b)}`);
      for (const part of [a, b]) part.translate = false;
      item.append(what, a, b);
      const delta = row.a !== null && row.b !== null ? row.b - row.a : null;
      if (delta !== null && Math.abs(delta) >= 0.05) {
        item.append(el("span", "diff-delta", this.t("compare.delta", { d: `${delta > 0 ? "+" : ""}${delta.toFixed(1)}` })));
      }
      return item;
    }));
    /** @type {HTMLElement} */ (document.querySelector("#differences .diff-none")).hidden = differing.length > 0;
  }

  async command(cmd, { quiet = false } = {}) {
    try {
      const result = await sendComparisonCommand(this.config.comparison, this.token, cmd);
      if (quiet) return;
      const label = this.t(`action.${cmd.action}`, {}, cmd.action);
      this.toast(this.t("compare.sent", { action: label, at: result?.at !== null ? formatOffset(result.at) : "" }));
    } catch (e) {
      this.toast(this.t("toast.refused", { status: e.status ?? "", message: e.message }), true);
    }
  }

  toast(text, bad = false) {
    const item = el("div", `toast-item${bad ? " bad" : ""}`, text);
    document.querySelector("#toast").append(item);
    setTimeout(() => item.remove(), 5000);
  }

  tick() {
    const clock = this.sides[0].clock; // one clock: side a's messages say it
    const now = clock.now();
    setText(document.querySelector("#clock-time"), `T+${formatOffset(now)}`);
    setText(document.querySelector("#clock-utc"), `${formatUtc(clock.nowMs())} UTC`);
    setText(document.querySelector("#clock-speed"), `${clock.speed}×`);
    const state = clock.preparing ? "clock.preparing" : clock.paused ? "clock.paused" : "clock.running";
    setText(document.querySelector("#clock-state"), this.t(state, { t: Math.floor(now) }));
    document.body.dataset.paused = String(clock.paused);
    this.classroom?.onClock({ fast_forward: clock.fastForward }, ENDED.includes(document.body.dataset.runStatus));
    for (const side of this.sides) setText(side.root.querySelector(".side-time"), `T+${formatOffset(side.clock.now())}`);
    let busy = false;
    for (const side of this.sides) busy = side.render() || busy;
    if (!clock.paused || busy) this.frames.request();
  }
}
