// @ts-check
// Composition root of the run page: one websocket feeds one object store; every panel reads
// from it. Control mode exists only when the URL fragment carried a control token.
import { copyText } from "#js/clipboard.js";
import { RunConnection } from "#js/connection.js";
import { ControllerState } from "#js/controllers.js";
import { ClusterView } from "#js/cluster-view.js";
import { nextTask, setText } from "#js/dom.js";
import { FrameScheduler } from "#js/frames.js";
import {
  downloadReport, getEvents, getReport, getRun, parseDuration, sendCommand, takeControlToken, viewerLink,
} from "#js/api.js";
import { FaultPanel } from "#js/faults.js";
import { EventHistory } from "#js/history.js";
import { ArchitectureDiagram } from "#js/flows/architecture.js";
import { EvictionFlow } from "#js/flows/eviction.js";
import { HealthFlowchart } from "#js/flows/health.js";
import { VolumeFlow } from "#js/flows/volume.js";
import { makeTranslator } from "#js/i18n.js";
import { nameOf, naturalCompare, readyOf, zoneOf } from "#js/k8s.js";
import { KubectlPanel } from "#js/kubectl-panel.js";
import { Classroom, lookBackIn } from "#js/lesson.js";
import { NodeAnnouncer } from "#js/announcer.js";
import { NARROW, PanelTabs } from "#js/panels.js";
import { VOLUME_DECIDERS } from "#js/sequence/model.js";
import { SequenceView } from "#js/sequence/view.js";
import { ZoneTraffic } from "#js/sequence/zone-traffic.js";
import { loadOnIntent, renderStatic, sequenceToMermaid } from "#js/static-diagrams.js";
import { sayProblem } from "#js/observed-problem.js";
import { ObjectStore } from "#js/store.js";
import { formatOffset, formatUtc, VirtualClock } from "#js/time.js";
import { Timeline } from "#js/timeline.js";
import { renderWhy } from "#js/why.js";
import { claimsOf, hasVolumes, isVolumeEvent, volumeState } from "#js/volumes.js";
import { Follow } from "#js/follow.js";

// Events kept for the sequence diagram's scroll-back (rebuilt on refocus) and explanations:
// 6,000 to 7,000, about ten minutes of a 100-node class, in columns allocated when the page opens
// (history.js), so its memory does not grow while they arrive. The oldest LOG_TRIM go at once.
const LOG_MAX = 6000;
const LOG_TRIM = 1000;
const HISTORY_PAGES = 10; // pages of 5,000 events read back for a page opened mid-run

export class RunPage {
  constructor(config) {
    this.config = config;
    this.t = makeTranslator(config.strings);
    this.lang = config.lang;
    const { token, solo } = takeControlToken(config.run);
    this.token = token;
    this.solo = solo;
    this.control = Boolean(this.token);
    document.body.dataset.mode = this.control ? "control" : "viewer";
    if (this.solo) document.body.dataset.solo = "true";
    this.store = new ObjectStore();
    this.controllers = new ControllerState();
    this.clock = new VirtualClock();
    this.history = new EventHistory({ max: LOG_MAX, trim: LOG_TRIM });
    this.wantedFocus = sessionStorage.getItem(`heartbeat-focus-${config.run}`);
    this.focus = null;
    this.autoFocus = true; // until the user picks a node, or the preferred one exists
    this.selectedPod = null;
    this.renderedVersion = -1;
    this.kubectlAt = -Infinity;
    this.activeTab = "flows";
    /** @type {HTMLSelectElement | null | undefined} the trainer's speed picker, found when first synced */
    this.speedSelect = undefined;
    // Every DOM write of the live panels happens in one pass per frame, ~10 a second at most;
    // the sequence diagram's scroll to its live end comes just before it (see scrollToLive).
    this.frames = new FrameScheduler(() => this.tick(), { prepare: () => this.sequence?.scrollToLive() });
    /** Settles once the connection exists and every panel is built (what the replay drives); rejects if one
     *  cannot be. */
    this.opened = this.#open();
    this.opened.catch((e) => this.toast(String(e), true)); // a panel that cannot be built says so
  }

  /**
   * Connects and builds the panels: in several tasks (each well under 50 ms on a 100-node page,
   * where it was one of ~100 ms); the connection hands its messages over once every panel is built.
   */
  async #open() {
    const request = () => this.frames.request();
    await nextTask(); // not in the task of the constructor (sessionStorage's first read is slow)
    // The socket opens now and its messages wait for the panels (`ready`): the snapshot's download
    // and its parse in the JSON worker go on while the panels are built.
    /** @type {(value?: unknown) => void} */
    let built;
    const ready = new Promise((resolve) => {
      built = resolve;
    });
    this.connection = new RunConnection(this.config.ws, {
      ready,
      lastSeq: () => this.store.lastSeq,
      onSnapshot: (msg) => this.onSnapshot(msg),
      onFrame: (msg) => this.onFrame(msg),
      onPresence: (n) => {
        this.#setText("#viewers", this.t("clock.viewers", { n }));
      },
      onFollow: (msg) => this.follow?.onMessage(msg),
      onStatus: (msg) => this.onStatus(msg),
      onError: (message, msg) => this.classroom.refused(msg) || this.#watchProblem(msg) || this.toast(message),
      onClock: (clock) => {
        this.clock.update(clock);
        request();
      },
      onState: (state) => this.onConnectionState(state),
      onDetail: (msg) => this.onDetail(msg),
      onLesson: (msg) => this.classroom.onLesson(msg),
      onStep: (msg) => this.classroom.onStep(msg),
      onFastForward: (msg) => this.classroom.onFastForward(msg),
      onQuestion: (msg) => this.classroom.onQuestion(msg),
      onTally: (msg) => this.classroom.onTally(msg),
      onReveal: (msg) => this.classroom.onReveal(msg),
      onAnswerAck: (msg) => this.classroom.onAnswerAck(msg),
    });
    try {
      await this.#build(request);
      this.built = true;
    } finally {
      built();
    }
    window.heartbeat = this; // tests and the benchmark read the page's state from here
    request();
  }

  async #build(request) {
    const t = this.t;
    const $ = (sel) => document.querySelector(sel);
    this.cluster = new ClusterView($("#cluster"), {
      t, store: this.store, controllers: this.controllers, clock: this.clock,
      onFocus: (node) => this.setFocus(node),
      onSelectPod: (key) => this.selectPod(key), request,
    });
    await nextTask();
    this.sequence = new SequenceView($("#sequence"), {
      d3: window.d3, t, history: this.history, onSelect: (e) => this.explain(e), request,
      compact: matchMedia(NARROW).matches, // as the panel tabs will find it (setCompact below)
    });
    this.zoneTraffic = new ZoneTraffic();
    this.timeline = new Timeline($("#timeline"), {
      t, onSelect: (e) => e && this.explain(e), duration: this.config.duration,
    });
    await nextTask();
    this.arch = new ArchitectureDiagram($("#flow-arch"), { t });
    this.health = new HealthFlowchart($("#flow-health"), { t });
    this.eviction = new EvictionFlow($("#flow-eviction"), { t });
    this.volumeFlow = new VolumeFlow($("#flow-volume"), { t });
    await nextTask();
    this.kubectl = new KubectlPanel($("#kubectl"), { store: this.store, clock: this.clock });
    this.classroom = new Classroom($("#lesson-bar"), $("#question-layer"), {
      t, lang: this.lang, control: this.control, solo: this.solo, run: this.config.run,
      send: (msg) => this.connection?.send(msg) ?? false,
      command: (cmd) => this.command(cmd, { quiet: this.solo }), // alone: the card itself answers
      focus: (node) => this.setFocus(node),
      tab: (name) => this.lessonTab(name),
      explain: (event) => this.explain(event),
      reveal: (event) => this.timeline.merge([event]), // a drill's fault, hidden until now
      lookBack: lookBackIn(() => [{ id: this.config.run }]), // a revealed question's evidence, on joining later
      // the report is the trainer's alone: a viewer's page never asks for it
      report: this.control ? () => getReport(this.config.run, this.token) : null,
      download: this.control ? (format) => downloadReport(this.config.run, this.token, format).catch((e) =>
        this.toast(this.t("toast.refused", { status: e.status ?? "", message: e.message }), true)) : null,
    });
    const quietly = (cmd) => sendCommand(this.config.run, this.token, cmd).catch((e) =>
      this.toast(this.t("toast.refused", { status: e.status ?? "", message: e.message }), true)); // no toast per click
    this.follow = new Follow({ control: this.control, command: quietly,
      focus: (node) => this.setFocus(node, { auto: true }), tab: (name) => this.lessonTab(name),
      where: () => ({ node: this.focus, tab: this.activeTab }) }, $("#follow-me"), $("#follow-trainer"));
    this.clockEls = {
      time: $("#clock-time"), utc: $("#clock-utc"), speed: $("#clock-speed"), state: $("#clock-state"),
    };
    for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-tab]"))) {
      tab.addEventListener("click", () => this.showTab(tab.dataset.tab));
    }
    $("#export-sequence")?.addEventListener("click", () => this.exportSequence());
    loadOnIntent($('[data-tab="diagrams"]'), this.config.mermaid);
    if (this.control) {
      $("#control-bar").hidden = false;
      $("#faults").hidden = false;
      this.faults = new FaultPanel($("#fault-buttons"), {
        t, actions: this.config.faultActions,
        getContext: () => ({ ...this.faults.options(), node: this.focus, zone: zoneOf(this.store.node(this.focus)),
          newNode: this.#nextNodeName(), newZone: zoneOf(this.store.node(this.focus)), kubelet: true,
          pod: this.selectedPod }),
        send: (cmd) => this.command(cmd),
      });
      $("#btn-pause").addEventListener("click", () => this.command({ action: "pause" }));
      $("#btn-resume").addEventListener("click", () => this.command({ action: "resume" }));
      $("#btn-step").addEventListener("click", () => this.command({ action: "step" }));
      $("#speed").addEventListener("change", (e) => this.command({ action: "speed", value: Number(e.target.value) }));
      if (this.solo) {
        // alone: nobody to lead, and the only watcher is the learner
        $(".follow-me").hidden = true;
        $("#viewers").hidden = true;
      }
      const share = $("#share-viewer");
      share.value = viewerLink(this.config.run);
      $("#copy-viewer").addEventListener("click", async () => {
        await copyText(share);
        this.toast(t("share.copied"));
      });
    } else {
      // A viewer page has no fault buttons and no control bar at all, not merely hidden ones.
      $("#faults")?.remove();
      $("#control-bar")?.remove();
    }
    this.showTab(this.activeTab);
    this.announcer = new NodeAnnouncer($("#node-announcer"));
    this.panels = new PanelTabs($(".view-tabs"), $(".run-grid"), {
      active: this.activeTab, showTab: (name) => this.showTab(name), onNarrow: () => this.#fold(),
      onCluster: () => {
        this.cluster.invalidate(); // drawn again as it is now: it was left alone while hidden
        this.frames.request();
      },
    });
    this.sequence.setCompact(this.panels.narrow);
  }

  /** Other kubelets' requests are counted per zone, not drawn, on a large cluster or a narrow screen. */
  get foldKubelets() {
    return this.store.nodeLevel || Boolean(this.panels?.narrow);
  }

  #fold() {
    this.sequence.setCompact(this.panels.narrow);
    this.zoneTraffic.reset();
    this.zoneTrafficAt = null;
    this.sequence.setAggregate(this.foldKubelets);
    this.frames.request();
  }

  /**
   * A run with StatefulSets and volumes: their lanes in the sequence diagram, volumes and waiting
   * pods on the node cards, the volume flow. A run without any pays nothing for them.
   */
  #setVolumes(on) {
    if (this.volumes === on) return;
    this.volumes = on;
    document.body.dataset.volumes = String(on);
    document.getElementById("flow-volume-section").hidden = !on;
    this.sequence.setVolumes(on);
    this.cluster.setVolumes(on);
    if (on && this.activeTab === "diagrams") { // opened before the run showed its volumes: their diagram too
      renderStatic(document.querySelector("#static-diagrams"), this.config.mermaid).catch((e) => this.toast(String(e)));
    }
    this.renderedVersion = -1;
  }

  #nextNodeName() {
    const names = this.store.list("nodes").map(nameOf);
    let i = names.length + 1;
    while (names.includes(`node-${i}`)) i++;
    return `node-${i}`;
  }

  #setText(sel, text) {
    setText(document.querySelector(sel), text);
  }

  /**
   * An observation's failing watch (docs/observe.md, "Errors"), said in its bar until the driver says it works
   * again; whether `msg` was one.
   * @param {{error?: string, message?: string, problem?: import("#js/observed-problem.js").WatchProblem}} msg
   */
  #watchProblem(msg) {
    const line = document.getElementById("observed-problem");
    if (!line || !["cluster-unavailable", "cluster-available"].includes(msg.error ?? "")) return false;
    this.#showWatchProblem(msg.error === "cluster-unavailable" ? msg.message ?? "" : "", msg.problem);
    if (msg.error === "cluster-available") this.toast(this.t("observed.watching-again"));
    return true;
  }

  /**
   * The bar's line, and `body[data-watch-problem]`: what the end of a failed observation says (run-end.js).
   * @param {string} sentence  the driver's, in English ("" while the watch works)
   * @param {import("#js/observed-problem.js").WatchProblem | null} [problem]  its kind and fields
   * @param {boolean} [ended]  the observation ended (for this problem, or another reason when it is "")
   */
  #showWatchProblem(sentence, problem, ended = false) {
    const line = document.getElementById("observed-problem");
    if (!line) return;
    const said = sentence ? sayProblem(this.t, problem, sentence) : "";
    line.textContent = said && !ended ? this.t("observed.problem", { message: said }) : ""; // retried no more
    line.hidden = !said || ended;
    document.body.dataset.watchProblem = said;
  }

  onSnapshot(msg) {
    const snapshot = msg.snapshot ?? {};
    if (snapshot.observation) {
      const ended = ["finished", "idle", "failed", "stopped"].includes(msg.run?.status ?? "");
      this.#showWatchProblem(snapshot.observation.problem ?? "", snapshot.observation.problemDetail, ended);
    }
    this.store.loadSnapshot({ ...snapshot, last_seq: msg.last_seq ?? snapshot.last_seq });
    this.controllers.loadSnapshot(snapshot);
    this.#setVolumes(hasVolumes(this.store));
    this.zoneTraffic.reset();
    this.sequence.setAggregate(this.foldKubelets);
    this.clock.anchor(snapshot.time, snapshot.t ?? 0);
    this.clock.update(msg.clock ?? { t: snapshot.t ?? 0, speed: 1, paused: true });
    if (msg.run) this.onStatus(msg.run);
    // a page following the trainer keeps the trainer's node through a fresh snapshot (a resync, a rejoin)
    this.focus = (this.follow?.following && this.follow.last.node) || this.#defaultFocus(this.wantedFocus);
    this.setFocus(this.focus, { force: true, auto: true });
    this.cluster.invalidate();
    this.renderedVersion = -1;
    this.#scenarioInfo(snapshot.scenario, msg.run);
    this.#loadHistory(msg.last_seq ?? snapshot.last_seq ?? 0);
    this.snapshotAt = performance.now();
    this.frames.request();
  }

  /** The speed picker shows the run's speed (set by this page, another trainer tab, or the run's
   *  creation), unless the user is choosing one right now. */
  #syncSpeedSelect() {
    const select = this.speedSelect ??= /** @type {HTMLSelectElement | null} */ (document.querySelector("#speed"));
    if (!select || document.activeElement === select) return;
    const value = String(this.clock.speed);
    if (select.value === value) return;
    if (![...select.options].some((o) => o.value === value)) {
      select.add(new Option(`${this.clock.speed}×`, value));
    }
    select.value = value;
  }

  /** A page opened mid-run (or resynced) gets the faults and transitions that came before its
   *  snapshot, so the timeline has its markers (and "why" for them); the snapshot itself carries
   *  objects, not history. Decisions are left out: a 100-node run's monitor-pass records would
   *  make this megabytes; so are a large run's pod transitions (its page holds no pods). */
  async #loadHistory(upto) {
    if (!upto) return;
    const token = (this.historyToken = {});
    const older = [];
    let after = 0;
    try {
      for (let page = 0; page < HISTORY_PAGES && after < upto; page++) {
        const res = await getEvents(this.config.run, after, "fault,transition", { nodes: this.store.nodeLevel });
        if (this.historyToken !== token) return; // a newer snapshot took over
        for (const event of res.events) if (event.seq <= upto) older.push(event);
        if (!res.has_more || res.next_after <= after) break;
        after = res.next_after;
      }
    } catch {
      return; // the live view works without history
    }
    this.timeline.merge(older);
  }

  /** The node to show first: the one this tab showed, else the one the scenario breaks, else node-2. */
  #defaultFocus(wanted) {
    const nodes = this.store.list("nodes").map(nameOf).sort(naturalCompare);
    for (const name of [wanted, this.scenarioFocus, "node-2"]) if (name && nodes.includes(name)) return name;
    return nodes[0] ?? null;
  }

  /**
   * Until the user picks a node, the page follows the faults: the node the scenario's first fault
   * is about, then the node of each fault as it happens (a trainer's command). Not in a drill,
   * where which node is broken is the question, nor while the page follows the trainer (follow.js).
   */
  #followFault(node) {
    if (!node || this.userPicked || this.drillRun || this.follow?.following || !this.store.node(node)) return;
    this.setFocus(node, { auto: true });
  }

  /** Scenario title in the page's language, and its length for the timeline's axis. */
  async #scenarioInfo(scenario, run) {
    if (!scenario?.name || this.scenarioName === scenario.name) return;
    this.scenarioName = scenario.name;
    const title = scenario.title?.[this.lang.startsWith("zh") ? "zh" : "en"] ?? scenario.title?.en ?? scenario.name;
    this.#setText("#scenario-title", title);
    document.getElementById("scenario-title").title = title; // the bar may cut it short
    this.drillRun = Boolean(run?.drill);
    if (run?.drill) return; // a drill's scenario is named after the drill: no catalogue entry
    try {
      const doc = (await getRun(this.config.run)).document; // the run's own, saved or inline
      const seconds = parseDuration((doc?.document ?? doc)?.duration);
      if (seconds) this.timeline.setDuration(seconds);
      this.scenarioFocus = (doc?.document ?? doc)?.faults?.find((fault) => fault.node)?.node ?? null;
      if (!this.wantedFocus) this.#followFault(this.scenarioFocus);
    } catch {
      // A custom scenario has no catalogue entry: the timeline grows with the run instead.
    }
  }

  onFrame(msg) {
    this.clock.update(msg.clock);
    // A page that joined before the driver's first publish was told "pending" (starting); a frame carries no status
    // (docs/architecture.md: a status message comes at the end only), so the frame itself says the run is going.
    if (document.body.dataset.runStatus === "pending") this.onStatus({ status: "running" });
    const fresh = [];
    let volumes = false;
    for (const raw of msg.events ?? []) {
      if (!this.store.apply(raw)) continue; // already seen (overlap after a resume)
      if (!this.volumes && (isVolumeEvent(raw) || VOLUME_DECIDERS.has(raw.component))) volumes = true;
      this.controllers.apply(raw);
      this.#touch(raw);
      // The history keeps the request, not the written object (the store holds the current one).
      this.history.push(raw);
      this.arch.pulse(raw, this.focus);
      fresh.push(raw);
      if (raw.type === "fault") this.#followFault(raw.node);
    }
    this.store.applyFrameExtras(msg);
    if (this.foldKubelets) {
      this.zoneTraffic.add(msg, { zoneOf: (node) => zoneOf(this.store.node(node)) ?? "", focus: this.focus });
    }
    if (fresh.length) {
      this.sequence.append(fresh);
      this.timeline.append(fresh);
      this.classroom.events(fresh);
      this.announcer.add(fresh);
    }
    if (volumes) this.#setVolumes(true); // the first StatefulSet or volume of a run: its lanes and cards
    // A run that starts empty gets its nodes by create writes: focus one as soon as there is one
    // (the preferred one when it comes, unless the user picked one meanwhile). Looked at again
    // only when the node count moved: the preferred node may never come, and this sorts them all.
    // Not while the page follows the trainer: the trainer's node is the one to show.
    const nodeCount = this.store.count("nodes");
    if (this.autoFocus && !this.follow?.following && nodeCount && nodeCount !== this.autoFocusCount) {
      this.autoFocusCount = nodeCount;
      const best = this.#defaultFocus(this.wantedFocus);
      if (best !== this.focus) this.setFocus(best, { auto: true });
      if (best === (this.wantedFocus ?? this.scenarioFocus ?? "node-2")) this.autoFocus = false;
    }
    this.lastFrameAt = performance.now();
    this.framesSeen = (this.framesSeen ?? 0) + 1;
    this.frames.request();
  }

  /** Tells the cluster view which node cards an event may have changed. */
  #touch(event) {
    if (event.type === "write") {
      if (event.resource === "nodes" || event.resource === "leases") this.cluster.touch(event.name);
      else if (event.resource === "pods") this.cluster.touch(event.object?.spec?.nodeName ?? event.node ?? "");
      else if (this.volumes && isVolumeEvent(event)) this.cluster.touchAll(); // a pod elsewhere may wait on it
      else if (this.volumes && event.resource === "events" && event.object?.involvedObject?.kind === "Pod") {
        const about = event.object.involvedObject;
        this.cluster.touch(this.store.get("pods", about.namespace ?? "default", about.name)?.spec?.nodeName ?? "");
      }
    } else if (event.type === "decision" && this.volumes && VOLUME_DECIDERS.has(event.component)) {
      this.cluster.touchAll();
    } else if (event.type === "fault" && event.node) this.cluster.touch(event.node);
    else if (event.type === "fault") this.cluster.invalidate();
    else if (event.type === "decision" && event.component === "taint-eviction-controller") {
      this.cluster.touch(event.node);
    }
  }

  onStatus(msg) {
    const status = msg.status ?? msg.run?.status;
    // an observation's end as it happens: the refusal that ended it, or none (a retried problem is no reason any
    // more); a page that joined it ended had both from the snapshot, and its status message repeats no problem
    const ended = (status) => ["finished", "idle", "failed", "stopped"].includes(status ?? "");
    if (msg.type === "status" && !ended(document.body.dataset.runStatus)) {
      this.#showWatchProblem(msg.problem ? msg.reason ?? "" : "", msg.problem, true);
    }
    if (status) {
      document.body.dataset.runStatus = status;
      // The clock already says running/paused; the status line speaks only when it differs.
      const shown = ["running", "paused"].includes(status) ? "" : this.t(`run-status.${status}`, {}, status);
      this.#setText("#run-status", shown);
    }
    if (msg.clock) this.clock.update(msg.clock);
    this.frames?.request();
  }

  onConnectionState(state) {
    const badge = document.getElementById("conn-state");
    badge.dataset.state = state;
    badge.textContent = this.t(`conn.${state}`);
    if (state === "resynced") setTimeout(() => {
      if (this.connection.state === "resynced") this.connection.setState("live");
    }, 2500);
  }

  setFocus(node, { force = false, auto = false } = {}) {
    if (!auto) this.autoFocus = false;
    if (!auto) this.userPicked = true;
    if (!auto) this.follow?.picked();
    if (!node || (node === this.focus && !force)) return;
    this.focus = node;
    this.follow?.looked({ node });
    sessionStorage.setItem(`heartbeat-focus-${this.config.run}`, node);
    this.cluster.setFocus(node);
    this.sequence.setFocus(node);
    this.kubectl.setNode(node);
    this.faults?.setTarget({ node, zone: zoneOf(this.store.node(node)) });
    this.#setText("#focus-name", node);
    this.askDetail();
    this.renderedVersion = -1;
    this.frames.request();
  }

  /** Large clusters: other kubelets' traffic per zone, above the sequence diagram, once a virtual second. */
  #zoneTrafficLine(now) {
    if (!this.foldKubelets || Math.floor(now) === this.zoneTrafficAt) return;
    this.zoneTrafficAt = Math.floor(now);
    // Kubelets per zone change with the node set (a node's zone label stays), not with every node write.
    const nodeCount = this.store.count("nodes");
    if (this.kubeletsAt !== nodeCount || this.kubeletsFocus !== this.focus) {
      this.kubeletsAt = nodeCount;
      this.kubeletsFocus = this.focus;
      this.kubelets = new Map();
      for (const node of this.store.list("nodes")) {
        if (nameOf(node) === this.focus) continue;
        const zone = zoneOf(node) ?? "";
        this.kubelets.set(zone, (this.kubelets.get(zone) ?? 0) + 1);
      }
    }
    this.sequence.renderZones(this.zoneTraffic.summary(now, this.kubelets));
  }

  /**
   * On a node-level run (a large cluster) the focused node's pods and full objects come on request
   * and stay exact while frames carry its details; the request is renewed before the server's
   * minute runs out (docs/websocket-protocol.md).
   */
  askDetail() {
    clearTimeout(this.detailTimer);
    if (!this.store.nodeLevel || !this.focus) return;
    this.connection.send({ type: "detail", node: this.focus });
    this.detailTimer = setTimeout(() => this.askDetail(), 20_000);
  }

  onDetail(msg) {
    if (msg.node !== this.focus) return; // an answer for a node the user has left meanwhile
    this.store.loadDetail(msg);
    this.renderedVersion = -1;
    this.frames.request();
  }

  selectPod(key) {
    this.selectedPod = key;
    this.cluster.setSelectedPod(key);
    this.faults?.setTarget({ pod: key });
    this.showTab("flows");
    // A pod with a volume: its flow (below the node's) comes into view once this pass has drawn them.
    const [ns, name] = key.split("/");
    this.showVolumeFlow = Boolean(this.volumes && claimsOf(this.store.get("pods", ns, name)).length);
    this.renderedVersion = -1;
    this.frames.request();
  }

  explain(event) {
    if (!event) return;
    document.querySelector("#why")
      .replaceChildren(renderWhy(event, { t: this.t, lang: this.lang, history: this.history }));
    for (const row of document.querySelectorAll("#sequence g.row.selected")) row.classList.remove("selected");
    document.querySelector(`#sequence g.row[data-seq="${event.seq}"]`)?.classList.add("selected");
    this.showTab("why");
  }

  /** A lesson step's `tab` action: a side panel's tab, or the cluster or traffic panel lit a moment.
   *  "why" explains the focused node's latest controller decision (what the step is about). */
  lessonTab(name) {
    this.panels?.follow(name); // on a small screen, that panel comes forward
    if (["flows", "kubectl", "why", "diagrams"].includes(name)) this.showTab(name);
    if (name === "why") {
      const h = this.history;
      for (let i = h.length - 1; i >= Math.max(0, h.length - 3000); i--) {
        if (h.typeAt(i) !== "decision") continue;
        const event = h.at(i);
        if (event.node !== this.focus || event.rule === "nlc.monitor-pass") continue;
        this.explain(event);
        break;
      }
    }
    const panel = document.querySelector({ cluster: ".cluster-panel", traffic: ".seq-panel" }[name] ?? ".side-panel");
    panel.classList.add("lesson-spot");
    panel.addEventListener("animationend", () => panel.classList.remove("lesson-spot"), { once: true });
  }

  showTab(name) {
    this.activeTab = name;
    this.follow?.looked({ tab: name });
    for (const tab of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-tab]"))) {
      tab.setAttribute("aria-selected", String(tab.dataset.tab === name));
    }
    const panels = /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-panel]"));
    for (const panel of panels) panel.hidden = panel.dataset.panel !== name;
    this.panels?.follow(name);
    if (name === "diagrams") {
      renderStatic(document.querySelector("#static-diagrams"), this.config.mermaid).catch((e) => this.toast(String(e)));
    }
    this.renderedVersion = -1;
    this.kubectlAt = -Infinity;
    this.frames?.request();
  }

  async exportSequence() {
    const model = this.sequence.model;
    const rows = model.slice(model.length - 150, model.length);
    const text = sequenceToMermaid(rows, (id) => this.t(`lane.${id}`, { node: this.focus ?? "" }));
    const out = document.getElementById("export-output");
    out.textContent = text;
    out.hidden = false;
    const blob = new Blob([text], { type: "text/plain" });
    const link = /** @type {HTMLAnchorElement} */ (document.getElementById("export-download"));
    if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href); // the previous export's
    link.href = URL.createObjectURL(blob);
    link.hidden = false;
  }

  /** A command with the control token; `quiet`: no toast when it is taken (a refusal always has one). */
  async command(cmd, { quiet = false } = {}) {
    try {
      const result = await sendCommand(this.config.run, this.token, cmd);
      if (quiet) return;
      const label = this.t(`action.${cmd.action}`, {}, cmd.action);
      this.toast(this.t("toast.sent", { action: label, at: result?.at !== undefined ? formatOffset(result.at) : "" }));
    } catch (e) {
      this.toast(this.t("toast.refused", { status: e.status ?? "", message: e.message }), true);
    }
  }

  toast(text, bad = false) {
    const box = document.querySelector("#toast");
    const item = document.createElement("div");
    item.className = `toast-item${bad ? " bad" : ""}`;
    item.textContent = text;
    box.append(item);
    setTimeout(() => item.remove(), 5000);
  }

  /**
   * The pass of DOM writes (one per frame, ~10 a second while the clock runs): redraws what
   * changed (structure) and moves what moves (bars, arrows arriving, pulses).
   */
  tick() {
    if (!this.built) return; // still building (#open): its end asks for the first pass
    const now = this.clock.now();
    const c = this.clockEls;
    const clockText = `T+${formatOffset(now)}`;
    const box = c.time.parentElement; // the clock's fixed box, wider once it shows hours
    if (clockText.length > 9 !== box.classList.contains("hours")) box.classList.toggle("hours", clockText.length > 9);
    setText(c.time, clockText);
    setText(c.utc, `${formatUtc(this.clock.nowMs())} UTC`);
    const limited = this.clock.limitedFrom;
    setText(c.speed, limited ? this.t("clock.limited", { speed: this.clock.speed, asked: limited })
      : `${this.clock.speed}×`);
    this.#syncSpeedSelect();
    const paused = String(this.clock.paused);
    if (document.body.dataset.paused !== paused) document.body.dataset.paused = paused;
    const state = this.clock.preparing ? "clock.preparing" : this.clock.paused ? "clock.paused" : "clock.running";
    setText(c.state, this.t(state, { t: Math.floor(now) }));
    this.classroom.onClock({ fast_forward: this.clock.fastForward },
      ["finished", "idle", "failed"].includes(document.body.dataset.runStatus));
    this.timeline.flush();
    this.#zoneTrafficLine(now);
    let busy = false;
    const version = this.store.version + this.controllers.version * 1e6;
    // A cluster panel not on the screen (a phone showing another tab) is left alone meanwhile.
    const clusterOn = this.panels?.clusterShown ?? true;
    const changed = version !== this.renderedVersion || (clusterOn && this.cluster.needsRebuild);
    // The whole cluster view drawn (a snapshot, a new node set: render() is true) and the other
    // panels in one pass made a task of ~100 ms on a 100-node page (script, then style, layout
    // and paint of it all). Its first rows, the rest of them (mountRest, a step per pass) and the
    // other panels come in successive passes, each in the next animation frame.
    let clusterBuilt = false;
    if (changed) {
      this.renderedVersion = version;
      if (clusterOn) clusterBuilt = this.cluster.render();
    } else if (clusterOn) {
      this.cluster.tick();
    }
    if (clusterOn && !clusterBuilt) clusterBuilt = this.cluster.mountRest();
    if (clusterBuilt) {
      this.restPending = true;
      this.frames.request(true);
      return;
    }
    const rest = changed || this.restPending;
    this.restPending = false;
    if (rest) this.health.highlight(this.controllers.lastPass.get(this.focus));
    // kubectl prints ages in whole seconds at best: twice a second is as fresh as it gets.
    const wall = performance.now();
    if (this.activeTab === "kubectl" && wall - this.kubectlAt >= 500
      && (rest || this.kubectl.command !== "get-lease")) {
      this.kubectlAt = wall;
      this.kubectl.render();
    }
    if (this.activeTab === "flows") {
      this.#flowValues(now);
      busy = this.arch.flush(wall);
    } else {
      this.arch.clear();
    }
    this.timeline.setNow(now);
    busy = this.sequence.render() || busy;
    // The clock moves the bars: keep the passes coming while it runs (or something animates).
    if (!this.clock.paused || busy) this.frames.request();
  }

  #flowValues(now) {
    const node = this.store.node(this.focus);
    const lease = this.store.lease(this.focus);
    const renew = lease ? this.clock.secondsOf(lease.spec?.renewTime) : null;
    this.arch.setValues({
      kubelet: this.focus ?? "",
      "obj-lease": renew === null ? "—" : this.t("arch.renewed-ago", { age: Math.floor(Math.max(0, now - renew)) }),
      "obj-node": `Ready=${readyOf(node) ?? "—"}`,
      "obj-pods": this.t("arch.pods", { n: this.store.podsOn(this.focus).length }),
      nlc: this.t("arch.grace", { grace: this.controllers.gracePeriod }),
    });
    let pod = null;
    if (this.selectedPod) {
      const [ns, name] = this.selectedPod.split("/");
      pod = this.store.get("pods", ns, name);
    }
    if (!pod) pod = this.store.podsOn(this.focus).sort((a, b) => naturalCompare(nameOf(a), nameOf(b)))[0] ?? null;
    const podNode = pod ? this.store.node(pod.spec?.nodeName) : null;
    const ev = pod ? this.controllers.evictionOf(pod, podNode, (ts) => this.clock.secondsOf(ts)) : null;
    this.eviction.render(pod, podNode, ev, now);
    if (!this.volumes) return;
    this.volumeFlow.render(this.#volumePod(pod), now);
    if (this.showVolumeFlow) {
      this.showVolumeFlow = false;
      document.querySelector("#flow-volume-section").scrollIntoView({ block: "start" });
    }
  }

  /** The pod whose volume the volume flow follows: the selected one, else the focused node's first with a claim. */
  #volumePod(shown) {
    const withClaim = (p) => p && claimsOf(p).length > 0;
    const pod = withClaim(shown) ? shown
      : this.store.podsOn(this.focus).sort((a, b) => naturalCompare(nameOf(a), nameOf(b))).find(withClaim);
    return pod ? volumeState(this.store, this.controllers, pod) : null;
  }
}
