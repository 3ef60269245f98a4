// @ts-check
// A lesson's or a drill's part of the run page (docs/websocket-protocol.md, "Lessons and drills"):
// the lesson bar (the step's text, for everyone), the question card (answers from viewers, the
// live tally for the trainer only), and the reveal with its evidence, for everyone. The run page
// hands it the messages and carries out the steps' page actions (focus, tab) it asks for.
// Alone ("Try alone", `solo`) the page holding the control token is the learner's: it answers as
// a viewer, checks its own answer (the reveal), sees no tally, and keeps its score (progress.js).
import { getEvents } from "#js/api.js";
import { el, setText } from "#js/dom.js";
import {
  answerIsRight, barEvidence, bucketHolds, describeMatcher, localText, matches, orderTimeLabels, orderTimes, revealOrder,
  settleReveal, soloScore, tallyBars, tapOrder,
} from "#js/lesson-model.js";
import { recordFinish } from "#js/progress.js";
import { renderReport } from "#js/lesson-report.js";
import { formatOffset } from "#js/time.js";
import { eventText } from "#js/why.js";

const VIEWER_KEY = "heartbeat-viewer";
const NICKNAME_KEY = "heartbeat-nickname";
const NICKNAME_MAX = 40; // the server's limit (heartbeat_site/live/classroom/questions.py)
const ANSWER_ERRORS = ["question-closed", "unknown-question", "bad-answer", "no-question"];
const NODE_SELECT_FROM = 7; // more nodes than this: a <select> instead of a button per node
const DIAGNOSIS = "diagnosis"; // a drill's one question (heartbeat_site/live/classroom/questions.py)

/** localStorage, or nothing where the browser refuses it (then this page remembers alone). */
const memory = new Map();
const storage = {
  get(key) {
    try {
      return localStorage.getItem(key) ?? memory.get(key) ?? null;
    } catch {
      return memory.get(key) ?? null;
    }
  },
  set(key, value) {
    memory.set(key, value);
    try {
      localStorage.setItem(key, value);
    } catch {
      // kept in `memory` for this page
    }
  },
};

/** This browser's answering id: random, made once, kept in localStorage (one per browser). */
export function viewerId() {
  let id = storage.get(VIEWER_KEY);
  if (!id) {
    const bytes = crypto.getRandomValues(new Uint8Array(12)); // (randomUUID needs a secure context)
    id = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    storage.set(VIEWER_KEY, id);
  }
  return id;
}

const LOOK_BACK_PAGES = 20; // of 5,000 events: a lesson's run is small (GET /api/runs/<id>/events)

/**
 * A `lookBack` for Classroom: `runsOf(match)` names the runs whose events to page through ([{id}], and on a
 * comparison page [{id, side}]: each event is marked with its side, as the page marks the events of its frames);
 * the earliest event that fits, of any of them.
 */
export function lookBackIn(runsOf) {
  const first = async ({ id, side }, match, after) => {
    const types = typeof match.type === "string" ? match.type : "fault,transition";
    let from = 0;
    for (let page = 0; page < LOOK_BACK_PAGES; page++) {
      const res = await getEvents(id, from, types);
      for (const raw of res.events) {
        const event = side ? { ...raw, side } : raw;
        if (event.t >= after && matches(match, event)) return event;
      }
      if (!res.has_more || res.next_after <= from) return null;
      from = res.next_after;
    }
    return null;
  };
  return async (match, after) => {
    const found = await Promise.all(runsOf(match).map((run) => first(run, match, after)));
    return found.filter(Boolean).sort((x, y) => x.t - y.t)[0] ?? null;
  };
}

function button(cls, text, onClick, { primary = false } = {}) {
  const b = el("button", `${cls}${primary ? " primary" : ""}`, text);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

const code = (text) => {
  const c = el("code", "", text);
  c.translate = false;
  return c;
};

export class Classroom {
  /**
   * `bar`: the lesson bar's element; `layer`: the question card's layer over the panels.
   * `send(message)`: to the websocket, false when it is not open; `command(cmd)`: a control
   * command (the trainer's page only); `focus(node)`, `tab(name)`, `explain(event)`: the page's;
   * `report()`, `download(format)`: the trainer's page only, the session report and its files;
   * `lookBack(match, after)`: the run's first event since virtual time `after` that fits a matcher (or null),
   * from the events the page did not see (it joined later).
   */
  constructor(bar, layer, options) {
    const {
      t, lang, control, solo = false, run, send, command, focus, tab, explain, reveal, report, download, lookBack,
    } = options;
    this.bar = bar;
    this.layer = layer;
    this.t = t;
    this.lang = lang;
    this.control = control;
    this.run = run;
    this.send = send;
    this.command = command;
    this.focus = focus;
    this.tab = tab;
    this.explain = explain;
    this.onRevealEvent = reveal;
    this.download = download;
    this.lookBack = lookBack;
    this.solo = Boolean(control && solo); // a learner alone: answers, then checks them (the reveal)
    this.fetchReport = this.solo ? null : report; // the session report: a trainer's only
    this.revealedIds = new Set(); // questions revealed so far
    this.reportOpen = false; // the trainer's report card is on the screen
    this.reportCard = null;
    this.kind = null; // "lesson" | "drill" once the run says so
    this.info = null; // the lesson (GET /api/lessons) or drill (GET /api/drills) as the class sees it
    this.step = null;
    this.of = 0;
    this.appliedStep = -1; // the step whose page actions this page carried out
    this.question = null; // the question on the card, open or revealed
    this.open = false;
    this.tally = null;
    this.reveal = null;
    this.mine = null; // this browser's answer the server took ({choice} | {value} | {choice, node})
    this.draft = {};
    this.shown = false;
    this.waits = []; // [{question, match}]: reveals whose evidence has not happened yet
    this.evidence = new Map(); // question id -> the event that settles it
    this.lastEvidence = null; // the latest reveal: {question, step} (the step it was revealed in)
    this.forward = null; // the step the run is fast-forwarding to (the trainer's "Next step")
    this.ended = false; // the run ended (a fast-forward then never reached its step)
    this.reveals = new Map(); // question id -> its reveal (the solo score reads them)
    this.finished = null; // solo: {score, of} once the lesson or drill is over
  }

  /** Answers from this page, as a viewer's: a viewer's page, or a learner alone. */
  get learner() {
    return !this.control || this.solo;
  }

  /** The trainer's page: the tally, "Reveal" (a learner alone has "Check my answer" instead). */
  get trainer() {
    return this.control && !this.solo;
  }

  // -- messages ---------------------------------------------------------------------------------

  /** Where the lesson is, on joining (and on every reconnection). */
  onLesson(msg) {
    this.kind = msg.drill ? "drill" : "lesson";
    this.info = msg.drill ?? msg.lesson;
    this.of = this.info?.steps?.length ?? 0;
    if (msg.step) this.#setStep(msg.step, { act: msg.step.index !== this.appliedStep });
    const revealed = new Map((msg.revealed ?? []).map((r) => [r.question, r]));
    for (const [qid, r] of revealed) this.#settle(qid, r);
    for (const id of revealed.keys()) this.revealedIds.add(id);
    for (const [qid, r] of revealed) this.#recall(qid, r.evidence);
    // a step's question opens with its step: a page that joins between the two knows it already
    const asked = msg.question ?? this.#stepQuestion();
    if (asked) {
      if (asked.id !== this.question?.id || !this.open) this.#ask(asked, true);
      this.onTally(msg.tally);
    } else {
      const last = this.kind === "drill" ? this.#diagnosis() : this.step?.question;
      const summary = last && revealed.has(last.id) && this.reveals.get(last.id);
      if (summary && summary.question !== this.reveal?.question) {
        // A page opened after the reveal: the answer, the card folded away (its evidence in the bar, as on a
        // page that folded it away itself).
        this.#ask(last, false);
        this.#revealed(summary);
        this.lastEvidence = { question: last.id, step: this.step?.index ?? null };
      }
    }
    this.#render();
  }

  onStep(msg) {
    this.of = msg.of ?? this.of;
    this.forward = null;
    if (this.question && !this.open) this.shown = false; // the class moved on from a revealed question
    this.#setStep(msg.step, { act: true });
    // The server opens the step's question right after the step, in a frame of its own: opened
    // here already, so no "Next step" shows in between (a click on it would reveal the question
    // before anyone answered).
    const asked = this.#stepQuestion();
    if (asked && asked.id !== this.question?.id) this.#ask(asked, true);
    this.#render();
  }

  /** The current step's question when it is not revealed yet: open since the step started. */
  #stepQuestion() {
    const question = this.kind === "lesson" ? this.step?.question : null;
    return question && !this.revealedIds.has(question.id) ? question : null;
  }

  /** The trainer's "Next step" runs the clock to the next step's moment. */
  onFastForward(msg) {
    this.forward = msg.step;
    this.#renderBar();
  }

  /**
   * The clock's `fast_forward` (a page that joined meanwhile learns it there) and whether the run
   * ended: a step the run was fast-forwarding to and never reached is said so.
   */
  onClock(clock, ended) {
    const step = clock?.fast_forward?.step;
    const forward = typeof step === "number" && step > (this.step?.index ?? -1) ? step : null;
    if (forward === this.forward && Boolean(ended) === this.ended) return;
    const ending = Boolean(ended) && !this.ended;
    this.forward = forward;
    this.ended = Boolean(ended);
    if (ending && this.kind && this.fetchReport) this.openReport(); // the lesson is over: the trainer's report
    else if (this.kind) this.#renderBar();
  }

  /** Whether the lesson (or drill) is over for its report: its last question revealed, or the run ended. */
  #over() {
    if (!this.kind) return false;
    if (this.ended) return true;
    const ids = this.kind === "drill" ? ["diagnosis"] : (this.info?.questions ?? []).map((q) => q.id);
    return ids.length > 0 && this.revealedIds.has(ids.at(-1));
  }

  /** The trainer's report card, fetched afresh (answers may have come since it was last shown). */
  async openReport() {
    if (!this.fetchReport) return;
    this.reportOpen = true;
    this.reportCard = el("section", "question-card report-card");
    this.reportCard.append(el("p", "hint", this.t("lesson.report-loading")));
    this.#render();
    let card;
    try {
      const report = await this.fetchReport();
      card = renderReport(report, {
        t: this.t, lang: this.lang, download: (format) => this.download(format), close: () => this.#closeReport(),
      });
    } catch (e) {
      card = el("section", "question-card report-card");
      card.append(el("p", "qc-status bad", this.t("lesson.report-failed", { message: e.message ?? "" })));
    }
    if (!this.reportOpen) return;
    this.reportCard = card;
    this.#renderCard();
  }

  #closeReport() {
    this.reportOpen = false;
    this.card = null; // the question card is built again
    this.#render();
  }

  onQuestion(msg) {
    if (msg.question.id !== this.question?.id || !this.open) this.#ask(msg.question, true); // opened with its step
    this.#render();
  }

  onTally(msg) {
    if (!msg || msg.question !== this.question?.id || !this.open) return;
    this.tally = msg;
    this.#renderResults();
  }

  onReveal(msg) {
    this.revealedIds.add(msg.question);
    if (msg.question !== this.question?.id) this.#ask(this.#questionById(msg.question), false);
    this.#revealed(msg);
    this.reveals.set(msg.question, msg);
    this.shown = true;
    this.#status(""); // "answer saved" is past news
    const event = msg.evidence?.event;
    if (event) {
      this.evidence.set(msg.question, event);
      this.onRevealEvent?.(event);
    } else if (msg.evidence?.match) {
      this.waits.push({ question: msg.question, match: msg.evidence.match });
    }
    for (const item of msg.items ?? []) { // an order question's items still to come
      if (!item.event && item.match) this.waits.push({ question: msg.question, item: item.id, match: item.match });
    }
    this.lastEvidence = { question: msg.question, step: this.step?.index ?? null };
    this.#render();
  }

  /**
   * The evidence of a question revealed before this page opened (the lesson state's `evidence`: its matcher and
   * since when): waited for in the frames as a page that saw the reveal waits, and looked for among the events
   * that came before the page did (`lookBack`); whichever finds it first settles it.
   */
  #recall(qid, evidence) {
    if (!evidence?.match || this.evidence.has(qid) || this.waits.some((w) => w.question === qid && !w.item)) return;
    const wait = { question: qid, match: evidence.match };
    this.waits.push(wait);
    this.lookBack?.(evidence.match, evidence.after ?? 0).then((event) => {
      if (!event || !this.waits.includes(wait)) return;
      this.waits.splice(this.waits.indexOf(wait), 1);
      this.evidence.set(qid, event);
      this.#render();
    }).catch(() => {}); // it is waited for in the frames anyway
  }

  /**
   * A revealed question as the lesson state on joining tells it: the page's own reveal completed
   * with the item events it missed, and an order's items still to come watched for in the frames
   * (once each: a reconnection sends the state again).
   */
  #settle(qid, summary) {
    const { reveal, waits } = settleReveal(this.reveals.get(qid), summary);
    this.reveals.set(qid, reveal);
    this.waits = this.waits.filter((w) => !(w.question === qid && w.item));
    for (const wait of waits) this.waits.push({ question: qid, ...wait });
  }

  onAnswerAck(msg) {
    if (msg.question !== this.question?.id) return;
    this.mine = { choice: msg.choice, value: msg.value, node: msg.node, order: msg.order };
    storage.set(this.#answerKey(msg.question), JSON.stringify(this.mine));
    this.#status(this.t(this.solo ? "lesson.saved-solo" : "lesson.saved"));
    this.#renderAnswer();
    if (this.solo) this.#renderCard(); // "Check my answer" comes with the first answer
  }

  /** An error message from the server: true when it refused an answer (the card says why). */
  refused(msg) {
    if (!ANSWER_ERRORS.includes(msg?.error)) return false;
    this.#status(this.t(`lesson.error.${msg.error}`, {}, msg.message), true);
    return true;
  }

  /** A frame's new events: one that fits a reveal's evidence matcher is its evidence. */
  events(list) {
    if (!this.waits.length) return;
    for (const wait of [...this.waits]) {
      const event = list.find((e) => matches(wait.match, e));
      if (!event) continue;
      this.waits.splice(this.waits.indexOf(wait), 1);
      if (wait.item) this.#itemHappened(wait, event);
      else this.evidence.set(wait.question, event);
      this.#render();
    }
  }

  /** An order question's item came after its reveal: its time joins the run's order. */
  #itemHappened(wait, event) {
    const reveal = this.reveals.get(wait.question);
    const item = reveal?.items?.find((x) => x.id === wait.item);
    if (!item) return;
    item.event = { seq: event.seq, t: event.t };
    if (reveal.items.every((x) => x.event)) this.evidence.set(wait.question, event); // the last one settles it
  }

  /** Sends this browser's answer to the open question (it replaces an earlier one). */
  answer(fields) {
    const question = this.question;
    if (!question) return;
    const message = { type: "answer", question: question.id, viewer: viewerId(), ...fields };
    const nickname = this.solo ? null : storage.get(NICKNAME_KEY);
    if (nickname) message.nickname = nickname;
    if (!this.send(message)) {
      this.#status(this.t("lesson.offline"), true);
      return;
    }
    this.#status(this.t("lesson.sending"));
  }

  // -- state --------------------------------------------------------------------------------------

  #setStep(step, { act }) {
    this.step = step;
    if (!act) return;
    this.appliedStep = step.index;
    for (const action of step.actions ?? []) {
      if (action.action === "focus" && action.node) this.focus(action.node);
      else if (action.action === "tab" && action.tab) this.tab(action.tab);
    }
  }

  #ask(question, open) {
    this.question = question;
    this.open = open;
    this.tally = null;
    this.reveal = null;
    this.shown = open;
    this.mine = question ? this.#kept(question.id) : null;
    this.draft = { ...(this.mine ?? {}) };
    this.card = null; // built again for this question
  }

  #revealed(reveal) {
    this.open = false;
    this.reveal = reveal;
  }

  #answerKey(qid) {
    return `heartbeat-answer:${this.run}:${qid}`;
  }

  /** The answer this browser gave to a question of this run, as the server took it. */
  #kept(qid) {
    try {
      return JSON.parse(storage.get(this.#answerKey(qid)));
    } catch {
      return null;
    }
  }

  #diagnosis() {
    const d = this.info ?? {};
    return { id: DIAGNOSIS, kind: "diagnosis", text: d.brief, choices: d.choices ?? [], nodes: d.nodes ?? [] };
  }

  #questionById(qid) {
    if (this.kind === "drill") return this.#diagnosis();
    return (this.info?.questions ?? []).find((q) => q.id === qid) ?? { id: qid, kind: "choice", text: "", choices: [] };
  }

  #text(text) {
    return localText(text, this.lang);
  }

  // -- the lesson bar -----------------------------------------------------------------------------

  #render() {
    this.#checkEnd();
    this.#renderBar();
    this.#renderCard();
  }

  /**
   * Alone: the lesson is over once its last step started and every question is revealed (a
   * drill: once its diagnosis is); its score is kept in this browser (progress.js), the best one.
   */
  #checkEnd() {
    if (!this.solo || this.finished || !this.info) return;
    const ids = this.kind === "drill" ? [DIAGNOSIS] : (this.info.questions ?? []).map((q) => q.id);
    if (this.kind === "lesson" && (!this.step || this.step.index + 1 < this.of)) return;
    const result = soloScore(ids, (qid) => this.#kept(qid), this.reveals);
    if (!result.done) return;
    this.finished = { score: result.score, of: result.of };
    recordFinish(this.kind, this.info.name, this.finished);
  }

  #renderBar() {
    const bar = this.bar;
    bar.hidden = !this.kind;
    if (!this.kind) return;
    if (!this.barParts) {
      const kind = el("span", "lb-kind");
      const title = el("strong", "lb-title");
      const progress = el("span", "lb-progress");
      const text = el("p", "lb-text");
      const evidence = el("div", "lb-evidence");
      const forward = el("p", "lb-forward");
      forward.setAttribute("role", "status");
      const score = el("p", "lb-score");
      score.setAttribute("role", "status");
      const show = button("lb-show", "", () => {
        this.shown = true;
        this.#render();
      });
      const actions = el("div", "lb-actions");
      actions.append(show);
      if (this.trainer) {
        this.revealButton = button("lb-reveal", this.t("lesson.reveal"), () => this.#command("reveal"));
        actions.append(this.revealButton);
      }
      if (this.control) {
        this.nextButton = button("lb-next", this.t("lesson.next"), () => this.#command("next"));
        this.reportButton = button("lb-report", this.t("lesson.report"), () => this.openReport());
        actions.append(this.nextButton, this.reportButton);
      }
      const head = el("div", "lb-head");
      head.append(kind, title, progress);
      title.dataset.source = text.dataset.source = "lesson"; // the library's own texts
      bar.replaceChildren(head, text, forward, evidence, score, actions);
      this.barParts = { kind, title, progress, text, forward, evidence, score, show };
    }
    const p = this.barParts;
    bar.dataset.kind = this.kind;
    setText(p.kind, this.kind === "drill" ? this.t("lesson.drill")
      : this.t("lesson.lesson", { n: this.info?.position ?? "" }));
    setText(p.title, this.#text(this.info?.title));
    const stepText = this.kind === "drill" ? this.#text(this.info?.brief) : this.#text(this.step?.text);
    setText(p.text, stepText);
    setText(p.progress, this.kind === "lesson" && this.step
      ? this.t("lesson.step-of", { n: this.step.index + 1, of: this.of }) : "");
    const forwarding = this.kind === "lesson" && this.forward !== null;
    bar.dataset.forward = forwarding ? (this.ended ? "missed" : "on") : "";
    p.forward.hidden = !forwarding;
    if (forwarding) {
      setText(p.forward, this.t(this.ended ? "lesson.forward-missed" : "lesson.forwarding", { n: this.forward + 1 }));
    }
    // the card folded away: a button brings it back
    p.show.hidden = !this.question || this.shown;
    setText(p.show, this.t(this.open
      ? (this.kind === "drill" ? "lesson.show-diagnosis" : "lesson.show-question")
      : "lesson.show-answer"));
    p.show.classList.toggle("primary", this.open && this.learner);
    if (this.revealButton) this.revealButton.hidden = !this.open || this.shown;
    if (this.nextButton) {
      this.nextButton.hidden = this.kind !== "lesson" || this.open || this.shown
        || (this.step?.index ?? -1) + 1 >= this.of;
      this.reportButton.hidden = !this.fetchReport || !this.#over() || this.reportOpen;
      this.reportButton.classList.toggle("primary", !this.shown);
    }
    // the latest reveal's evidence, while its card is folded away and the class is still there
    const qid = barEvidence(this.lastEvidence, {
      question: this.question?.id, step: this.step?.index ?? null, open: this.open, shown: this.shown,
    });
    p.evidence.hidden = !qid;
    if (qid) p.evidence.replaceChildren(...this.#evidenceLine(qid));
    this.#renderScore();
  }

  /** Alone, at the end: the score, and the way back to the lesson path (which shows it too). */
  #renderScore() {
    const box = this.barParts.score;
    box.hidden = !this.finished;
    if (!this.finished || box.dataset.score === String(this.finished.score)) return;
    const { score, of } = this.finished;
    Object.assign(box.dataset, { score: String(score), of: String(of) });
    const home = el("a", "lb-home", this.t("lesson.back-home"));
    home.href = "/";
    box.replaceChildren(el("strong", "", this.t(this.kind === "drill" ? "lesson.finished-drill" : "lesson.finished",
      { score, of })), " ", home);
  }

  // -- the question card ----------------------------------------------------------------------------

  #renderCard() {
    const layer = this.layer;
    if (this.reportOpen) {
      layer.hidden = false;
      layer.classList.remove("docked");
      if (layer.firstChild !== this.reportCard) layer.replaceChildren(this.reportCard);
      return;
    }
    layer.hidden = !(this.question && this.shown);
    if (layer.hidden) return;
    // A drill's diagnosis stays open while the run goes on: its card sits in a corner, the
    // panels stay in view. A lesson's question pauses the run: its card takes the stage.
    layer.classList.toggle("docked", this.kind === "drill" && this.open);
    if (!this.card) this.#buildCard();
    const card = this.card;
    card.root.dataset.state = this.open ? "open" : "revealed";
    card.answer.hidden = !this.learner || !this.open;
    card.nickname.hidden = this.control || !this.open;
    card.results.hidden = this.solo; // alone: no class to tally
    this.#renderAnswer();
    this.#renderResults();
    this.#renderReveal();
    // the trainer reveals for the class; a learner alone checks their own answer, once given
    card.reveal.hidden = !this.open || !this.control || (this.solo && !this.mine);
    card.next.hidden = this.open || !this.control || this.kind !== "lesson" || (this.step?.index ?? -1) + 1 >= this.of;
    card.close.hidden = this.open;
  }

  #buildCard() {
    const q = this.question;
    const t = this.t;
    const root = el("section", "question-card");
    root.setAttribute("role", "dialog");
    root.setAttribute("aria-labelledby", "question-text");
    root.dataset.question = q.id;
    root.dataset.kind = q.kind;
    root.classList.toggle("learner", this.learner); // (an order's reveal: the learner's own result first)
    const head = el("header", "qc-head");
    const index = (this.info?.questions ?? []).findIndex((x) => x.id === q.id);
    const label = q.kind === "diagnosis" ? t("lesson.diagnosis")
      : index >= 0 ? t("lesson.question-of", { n: index + 1, of: this.info.questions.length }) : t("lesson.question");
    head.append(el("span", "qc-label", label), button("qc-hide", t("lesson.hide"), () => this.#hide()));
    const text = el("p", "qc-text", q.kind === "diagnosis" ? t("lesson.diagnosis-ask") : this.#text(q.text));
    text.id = "question-text";
    if (q.kind !== "diagnosis") text.dataset.source = "lesson";
    const answer = el("div", "qc-answer");
    answer.append(...this.#answerControls(q));
    const status = el("p", "qc-status");
    status.setAttribute("role", "status");
    const nickname = el("div", "qc-nickname");
    const results = el("div", "qc-results");
    const revealBox = el("div", "qc-reveal");
    const actions = el("div", "qc-actions");
    const reveal = button("qc-reveal-button", t(this.solo ? "lesson.check" : "lesson.reveal"),
      () => this.#command("reveal"), { primary: true });
    const next = button("qc-next", t("lesson.next"), () => this.#command("next"), { primary: true });
    const close = button("qc-close", t("lesson.close"), () => this.#hide());
    const evidence = el("p", "qc-evidence"); // in the footer: in view however long the card is
    actions.append(evidence, reveal, next, close);
    root.append(head, text, answer, status, nickname, results, revealBox, actions);
    this.layer.replaceChildren(root);
    this.card = { root, answer, status, nickname, results, revealBox, evidence, reveal, next, close };
    this.#renderNickname();
  }

  #hide() {
    this.shown = false;
    this.#render();
  }

  #command(action) {
    for (const b of [this.card?.reveal, this.card?.next, this.revealButton, this.nextButton]) if (b) b.disabled = true;
    Promise.resolve(this.command({ action })).finally(() => {
      for (const b of [this.card?.reveal, this.card?.next, this.revealButton, this.nextButton]) {
        if (b) b.disabled = false;
      }
    });
  }

  /** The viewer's controls: a button per choice, a number with its unit, or a cause and a node. */
  #answerControls(q) {
    const t = this.t;
    const choiceButtons = (choices, field) => {
      const box = el("div", "qc-choices");
      box.setAttribute("role", "group");
      for (const choice of choices) {
        const value = choice.id ?? choice;
        const b = button("qc-choice", "", () => this.#pick(field, value));
        Object.assign(b.dataset, { field, value });
        if (choice.text) {
          b.append(el("span", "qc-choice-text", this.#text(choice.text)));
          b.lastChild.dataset.source = "lesson";
        } else {
          b.append(code(choice));
        }
        box.append(b);
      }
      return box;
    };
    if (q.kind === "number") {
      const form = el("form", "qc-number");
      const input = el("input");
      Object.assign(input, { type: "number", step: "any", inputMode: "decimal", name: "value", required: true });
      input.setAttribute("aria-label", t("lesson.your-number"));
      if (typeof this.mine?.value === "number") input.value = String(this.mine.value);
      const unit = el("span", "qc-unit", q.unit ?? "");
      unit.translate = false;
      const send = el("button", "primary", t("lesson.send"));
      send.type = "submit";
      form.append(input, unit, send);
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const value = input.valueAsNumber;
        if (Number.isFinite(value)) this.answer({ value });
        else this.#status(t("lesson.need-number"), true);
      });
      return [form];
    }
    if (q.kind === "order") return this.#orderControls(q);
    if (q.kind === "diagnosis") {
      const cause = el("fieldset", "qc-group");
      cause.append(el("legend", "", t("lesson.what-broke")), choiceButtons(q.choices, "choice"));
      const node = el("fieldset", "qc-group");
      node.append(el("legend", "", t("lesson.which-node")));
      if ((q.nodes ?? []).length < NODE_SELECT_FROM) {
        node.append(choiceButtons(q.nodes ?? [], "node"));
      } else {
        const select = el("select", "qc-node-select");
        select.translate = false;
        select.append(new Option("—", ""), ...q.nodes.map((n) => new Option(n, n)));
        select.addEventListener("change", () => select.value && this.#pick("node", select.value));
        node.append(select);
      }
      return [cause, node];
    }
    return [choiceButtons(q.choices ?? [], "choice")];
  }

  /**
   * An order question: a finger-sized button per event; tapping them in sequence numbers them
   * 1, 2, 3 (tapped again: out, the later ones move up), and "Send" sends the whole order.
   */
  #orderControls(q) {
    const t = this.t;
    const hint = el("p", "qc-order-hint", t("lesson.order-hint"));
    const list = el("ol", "qc-order");
    list.setAttribute("aria-label", t("lesson.order-list"));
    for (const item of q.items ?? []) {
      const li = el("li", "qc-order-row");
      const b = button("qc-order-item", "", () => this.#tap(item.id));
      b.dataset.item = item.id;
      const text = el("span", "qc-order-text", this.#text(item.text));
      text.dataset.source = "lesson";
      b.append(el("span", "qc-order-n"), text);
      li.append(b);
      list.append(li);
    }
    const actions = el("div", "qc-order-actions");
    const clear = button("qc-order-clear", t("lesson.order-clear"), () => {
      this.draft.order = [];
      this.#status("");
      this.#renderAnswer();
      this.#tell(t("lesson.order-cleared"));
    });
    const send = button("qc-order-send", t("lesson.order-send"), () => this.#sendOrder(), { primary: true });
    actions.append(clear, send);
    // what a tap did, for a screen reader (the number on the button is not announced by itself)
    const told = el("p", "qc-order-told visually-hidden");
    told.setAttribute("role", "status");
    told.setAttribute("aria-atomic", "true");
    return [hint, list, actions, told];
  }

  #tap(id) {
    const order = tapOrder(this.draft.order ?? [], id);
    this.draft.order = order;
    this.#status("");
    this.#renderAnswer();
    const item = this.#text((this.question.items ?? []).find((x) => x.id === id)?.text) || id;
    const place = order.indexOf(id);
    this.#tell(place >= 0 ? this.t("lesson.order-placed", { item, n: place + 1, of: (this.question.items ?? []).length })
      : this.t("lesson.order-removed", { item }));
  }

  /** Says what a tap did in the order question's live region. */
  #tell(text) {
    const told = this.card?.answer.querySelector(".qc-order-told");
    if (told) setText(told, text);
  }

  #sendOrder() {
    const order = this.draft.order ?? [];
    const left = (this.question.items ?? []).length - order.length;
    if (left > 0) this.#status(this.t("lesson.order-need", { n: left }), true);
    else this.answer({ order });
  }

  /** A choice (or a drill's cause or node) picked: sent at once, a diagnosis once it has both. */
  #pick(field, value) {
    this.draft[field] = value;
    this.#renderAnswer();
    if (this.question.kind !== "diagnosis") this.answer({ choice: value });
    else if (this.draft.choice && this.draft.node) this.answer({ choice: this.draft.choice, node: this.draft.node });
    else this.#status(this.t(this.draft.choice ? "lesson.need-node" : "lesson.need-cause"));
  }

  #renderAnswer() {
    if (!this.card) return;
    for (const b of this.card.answer.querySelectorAll(".qc-choice")) {
      const { field, value } = b.dataset;
      b.setAttribute("aria-pressed", String(this.draft[field] === value));
      b.classList.toggle("saved", this.mine?.[field] === value);
    }
    const select = this.card.answer.querySelector(".qc-node-select");
    if (select && this.draft.node) select.value = this.draft.node;
    const order = this.draft.order ?? [];
    const saved = (this.mine?.order ?? []).join(">");
    for (const b of this.card.answer.querySelectorAll(".qc-order-item")) {
      const place = order.indexOf(b.dataset.item);
      b.setAttribute("aria-pressed", String(place >= 0));
      b.dataset.place = place >= 0 ? String(place + 1) : "";
      setText(b.querySelector(".qc-order-n"), place >= 0 ? String(place + 1) : "");
    }
    const send = this.card.answer.querySelector(".qc-order-send");
    if (send) {
      const complete = order.length === (this.question.items ?? []).length;
      send.classList.toggle("saved", complete && order.join(">") === saved);
      send.setAttribute("aria-disabled", String(!complete));
    }
  }

  #renderNickname() {
    const box = this.card.nickname;
    const name = storage.get(NICKNAME_KEY);
    if (name) {
      const line = el("p", "qc-as");
      line.append(el("span", "", `${this.t("lesson.answering-as")} `), el("strong", "", name));
      box.replaceChildren(line);
      return;
    }
    const form = el("form", "qc-nick");
    const input = el("input");
    Object.assign(input, { name: "nickname", maxLength: NICKNAME_MAX, autocomplete: "nickname" });
    const label = el("label", "", `${this.t("lesson.nickname")} `);
    label.append(input);
    const save = el("button", "", this.t("lesson.save-name"));
    save.type = "submit";
    form.append(label, save);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const value = input.value.trim().slice(0, NICKNAME_MAX);
      if (!value) return;
      storage.set(NICKNAME_KEY, value);
      this.#renderNickname();
    });
    box.replaceChildren(form);
  }

  #status(text, bad = false) {
    if (!this.card) return;
    setText(this.card.status, text);
    this.card.status.classList.toggle("bad", bad);
  }

  /** The tally: the trainer's while answers come in, everyone's after the reveal. */
  #renderResults() {
    if (!this.card) return;
    const box = this.card.results;
    const q = this.question;
    if (this.solo) return; // no class, no tally
    if (!this.control && this.open) {
      box.replaceChildren(el("p", "hint", this.t("lesson.hidden-until-reveal")));
      return;
    }
    const tally = this.tally;
    const count = tally?.answers ?? 0;
    const parts = [el("p", "qc-count", this.t("lesson.answered", { n: count }))];
    parts[0].dataset.answers = String(count);
    if (!tally && !this.open) parts.length = 0; // a page opened after the reveal has no tally
    const unit = q.unit ? ` ${q.unit}` : "";
    const group = (counts, order, labelOf, isRight, isMine, heading, compact = false) => {
      const list = el("ol", compact ? "tally compact" : "tally");
      if (heading) list.setAttribute("aria-label", heading);
      for (const bar of tallyBars(counts, { order, answers: count })) {
        const row = el("li", "tally-row");
        row.dataset.key = bar.key;
        row.dataset.count = String(bar.count);
        const right = this.reveal && isRight(bar.key);
        row.classList.toggle("correct", Boolean(right));
        row.classList.toggle("mine", Boolean(isMine(bar.key)));
        const label = el("span", "tally-label");
        if (right) label.append(el("span", "tally-mark", "✓ "));
        label.append(labelOf(bar.key));
        if (!this.control && isMine(bar.key)) label.append(" ", el("span", "tally-you", this.t("lesson.yours")));
        const track = el("span", "tally-track");
        const fill = el("span", "tally-fill");
        fill.style.width = `${bar.share * 100}%`;
        track.append(fill);
        row.append(label, track, el("span", "tally-count", `${bar.count} · ${bar.percent}%`));
        list.append(row);
      }
      return list;
    };
    const choiceText = (id) => {
      const span = el("span", "", this.#text((q.choices ?? []).find((c) => c.id === id)?.text) || id);
      span.dataset.source = "lesson";
      return span;
    };
    const correct = this.reveal?.correct;
    if (tally && q.kind === "order") {
      parts.push(...this.#orderTally(q, tally));
    } else if (tally && q.kind === "number") {
      parts.push(group(tally.counts ?? {}, [], (k) => code(`${k}${unit}`),
        (k) => bucketHolds(k, correct, this.reveal?.tolerance),
        (k) => typeof this.mine?.value === "number" && bucketHolds(k, this.mine.value, 0)));
    } else if (tally) {
      parts.push(group(tally.counts ?? {}, (q.choices ?? []).map((c) => c.id), choiceText, (k) => k === correct,
        (k) => this.mine?.choice === k, this.t("lesson.what-broke")));
      if (q.kind === "diagnosis") {
        parts.push(el("p", "qc-sub", this.t("lesson.which-node")));
        parts.push(group(tally.nodes ?? {}, q.nodes ?? [], code, (k) => k === this.reveal?.node,
          (k) => this.mine?.node === k, this.t("lesson.which-node"), true));
      }
    }
    if (!tally && this.open) parts.push(el("p", "hint", this.t("lesson.no-answers")));
    box.replaceChildren(...parts);
  }

  /**
   * An order question's tally: per event, how many put it at each place (the places it holds in
   * the run's order marked after the reveal), and then how many gave a right order.
   */
  #orderTally(q, tally) {
    const t = this.t;
    const r = this.reveal;
    const times = r ? orderTimes(r) : null;
    const ids = r?.correct ?? (q.items ?? []).map((item) => item.id);
    const textOf = (id) => this.#text((q.items ?? []).find((item) => item.id === id)?.text) || id;
    const table = el("table", "order-tally");
    const head = el("tr");
    head.append(el("th", "", t("lesson.order-event")));
    ids.forEach((_id, i) => head.append(el("th", "order-place", String(i + 1))));
    const body = el("tbody");
    for (const id of ids) {
      const row = el("tr");
      row.dataset.item = id;
      const name = el("th", "order-name", textOf(id));
      name.scope = "row";
      name.dataset.source = "lesson";
      row.append(name);
      const counts = tally.positions?.[id] ?? [];
      const before = times ? ids.filter((x) => times[x] < times[id]).length : -1;
      const ties = times ? ids.filter((x) => x !== id && times[x] === times[id]).length : 0;
      ids.forEach((_x, place) => {
        const cell = el("td", "order-count", String(counts[place] ?? 0));
        cell.classList.toggle("correct", place >= before && place <= before + ties && before >= 0);
        cell.classList.toggle("mine", this.mine?.order?.[place] === id);
        row.append(cell);
      });
      body.append(row);
    }
    const thead = el("thead");
    thead.append(head);
    table.append(thead, body);
    table.setAttribute("aria-label", t("lesson.order-tally"));
    const parts = [table];
    if (r && typeof r.right === "number" && r.answers > 0) {
      const whole = el("p", "qc-order-right", t("lesson.order-whole", {
        n: r.right, of: r.answers, percent: Math.round((r.share ?? 0) * 100),
      }));
      whole.dataset.right = String(r.right);
      parts.unshift(whole);
    }
    return parts;
  }

  #renderReveal() {
    const box = this.card.revealBox;
    const r = this.reveal;
    box.hidden = !r;
    if (!r) {
      this.card.evidence.replaceChildren();
      return;
    }
    const q = this.question;
    const t = this.t;
    const parts = [];
    const right = el(q.kind === "order" ? "div" : "p", "qc-correct"); // (an order is a list)
    right.append(el("span", "qc-correct-label", `${t("lesson.correct")} `));
    if (q.kind === "order") {
      const { placed, pending } = revealOrder(r);
      if (pending.length) right.append(el("span", "qc-order-pending", t("lesson.order-not-shown")));
      if (placed.length) right.append(this.#orderList(q, placed, r));
      if (pending.length) right.append(this.#orderList(q, pending, r, null, { numbered: false }));
    } else if (q.kind === "number") {
      const value = `${r.correct}${q.unit ? ` ${q.unit}` : ""}`;
      right.append(el("strong", "", value));
      if (r.tolerance) {
        right.append(" ", el("span", "hint", t("lesson.tolerance", {
          tolerance: `${r.tolerance}${q.unit ? ` ${q.unit}` : ""}`,
        })));
      }
    } else {
      const strong = el("strong", "", this.#text((q.choices ?? []).find((c) => c.id === r.correct)?.text) || r.correct);
      strong.dataset.source = "lesson";
      right.append(strong);
      if (q.kind === "diagnosis") {
        if (r.cause) right.append(" ", code(r.cause));
        if (r.node) right.append(" ", el("span", "", t("lesson.on-node")), " ", code(r.node));
      }
    }
    parts.push(right);
    if (this.learner && this.solo && !this.mine) {
      parts.push(el("p", "qc-mine wrong", t("lesson.you-none")));
    }
    if (this.learner && this.mine) {
      const ok = answerIsRight(this.mine, r);
      const unknown = q.kind === "order" && orderTimes(r) === null; // the run has not shown the order yet
      const mine = el(q.kind === "order" ? "div" : "p", `qc-mine ${unknown ? "pending" : ok ? "right" : "wrong"}`);
      mine.append(el("span", "", `${t(unknown ? "lesson.you-pending" : ok ? "lesson.you-right" : "lesson.you-wrong")} `));
      if (q.kind === "order") {
        mine.append(this.#orderList(q, this.mine.order ?? [], null, unknown ? null : r));
        parts.push(mine);
      }
      const what = q.kind === "order" ? "" : this.mine.value !== undefined && this.mine.value !== null
        ? `${this.mine.value}${q.unit ? ` ${q.unit}` : ""}`
        : [this.#text((q.choices ?? []).find((c) => c.id === this.mine.choice)?.text), this.mine.node]
          .filter(Boolean).join(" · ");
      if (q.kind !== "order") {
        const whatEl = el("strong", "", what);
        whatEl.dataset.source = "lesson";
        mine.append(whatEl);
        parts.push(mine);
      }
    }
    const explain = this.#text(r.explain);
    if (explain) {
      const p = el("p", "qc-explain", explain);
      p.dataset.source = "lesson";
      parts.push(p);
    }
    box.replaceChildren(...parts);
    this.card.evidence.replaceChildren(...this.#evidenceLine(r.question));
  }

  /**
   * An order as a numbered list of its events: the run's (`timed`: each with its virtual time,
   * or "still to come"), or a viewer's (`against`: each place marked right or wrong). Not
   * `numbered`: events whose place the run has not shown yet.
   */
  #orderList(q, ids, timed, against = null, { numbered = true } = {}) {
    const list = el(numbered ? "ol" : "ul", numbered ? "qc-order-reveal" : "qc-order-reveal qc-order-unplaced");
    const times = against ? orderTimes(against) : null;
    const labels = timed ? orderTimeLabels(timed.items) : {};
    ids.forEach((id, place) => {
      const li = el("li", "qc-order-step");
      li.dataset.item = id;
      const text = el("span", "qc-order-text", this.#text((q.items ?? []).find((item) => item.id === id)?.text) || id);
      text.dataset.source = "lesson";
      li.append(el("span", "qc-order-n", numbered ? String(place + 1) : "·"), text);
      if (timed) {
        li.append(el("span", "qc-order-t", labels[id] ?? this.t("lesson.order-to-come")));
      }
      if (times) {
        const before = ids.filter((x) => times[x] < times[id]).length;
        const ties = ids.filter((x) => x !== id && times[x] === times[id]).length;
        const ok = place >= before && place <= before + ties;
        li.classList.add(ok ? "in-place" : "out-of-place");
        li.append(el("span", "qc-order-mark", ok ? "✓" : "✗"));
      }
      list.append(li);
    });
    return list;
  }

  /** The evidence of a revealed question: the event with a "why" button, or what the page waits for. */
  #evidenceLine(qid) {
    const event = this.evidence.get(qid);
    if (event) {
      const why = button("evidence-why", this.t("lesson.why"), () => {
        this.explain(event);
        this.#hide();
      });
      why.dataset.seq = String(event.seq);
      // (a fault in a lesson or drill is the run's own, not a trainer's command)
      const what = event.type === "fault"
        ? this.t("lesson.fault", {
          action: this.t(`action.${event.action}`, {}, event.action), target: event.node ?? event.zone ?? "",
        })
        : eventText(event, this.t);
      return [el("span", "evidence-label", `${this.t("lesson.evidence")} `),
        el("span", "evidence-what", `${what} · T+${formatOffset(event.t)}`), why];
    }
    // (an order question: its last event still to come, the one that settles it)
    const wait = this.waits.findLast((w) => w.question === qid);
    if (!wait) return [];
    const names = {
      rule: (id) => this.t(`rule.${id}`, {}, id), action: (id) => this.t(`action.${id}`, {}, id),
    };
    return [el("span", "evidence-label", `${this.t("lesson.evidence-waiting")} `),
      el("span", "evidence-what", describeMatcher(wait.match, this.lang, names))];
  }
}
