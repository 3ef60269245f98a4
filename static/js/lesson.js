// A lesson's or a drill's part of the run page (docs/websocket-protocol.md, "Lessons and drills"):
// the lesson bar (the step's text, for everyone), the question card (answers from viewers, the
// live tally for the trainer only), and the reveal with its evidence, for everyone. The run page
// hands it the messages and carries out the steps' page actions (focus, tab) it asks for.
import { el, setText } from "./dom.js";
import { answerIsRight, bucketHolds, localText, matcherText, matches, tallyBars } from "./lesson-model.js";
import { formatOffset } from "./time.js";
import { eventText } from "./why.js";

const VIEWER_KEY = "heartbeat-viewer";
const NICKNAME_KEY = "heartbeat-nickname";
const NICKNAME_MAX = 40; // the server's limit (heartbeat_site/live/classroom.py)
const ANSWER_ERRORS = ["question-closed", "unknown-question", "bad-answer", "no-question"];
const NODE_SELECT_FROM = 7; // more nodes than this: a <select> instead of a button per node

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
   * command (the trainer's page only); `focus(node)`, `tab(name)`, `explain(event)`: the page's.
   */
  constructor(bar, layer, { t, lang, control, run, send, command, focus, tab, explain, reveal }) {
    Object.assign(this, {
      bar, layer, t, lang, control, run, send, command, focus, tab, explain, onRevealEvent: reveal,
    });
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
    this.lastEvidence = null; // question id of the latest reveal
  }

  // -- messages ---------------------------------------------------------------------------------

  /** Where the lesson is, on joining (and on every reconnection). */
  onLesson(msg) {
    this.kind = msg.drill ? "drill" : "lesson";
    this.info = msg.drill ?? msg.lesson;
    this.of = this.info?.steps?.length ?? 0;
    if (msg.step) this.#setStep(msg.step, { act: msg.step.index !== this.appliedStep });
    const revealed = new Map((msg.revealed ?? []).map((r) => [r.question, r]));
    if (msg.question) {
      if (msg.question.id !== this.question?.id || !this.open) this.#ask(msg.question, true);
      this.onTally(msg.tally);
    } else {
      const last = this.kind === "drill" ? this.#diagnosis() : this.step?.question;
      const summary = last && revealed.get(last.id);
      if (summary && summary.question !== this.reveal?.question) {
        // A page opened after the reveal: the answer, the card folded away.
        this.#ask(last, false);
        this.#revealed(summary);
      }
    }
    this.#render();
  }

  onStep(msg) {
    this.of = msg.of ?? this.of;
    if (this.question && !this.open) this.shown = false; // the class moved on from a revealed question
    this.#setStep(msg.step, { act: true });
    this.#render();
  }

  onQuestion(msg) {
    this.#ask(msg.question, true);
    this.#render();
  }

  onTally(msg) {
    if (!msg || msg.question !== this.question?.id || !this.open) return;
    this.tally = msg;
    this.#renderResults();
  }

  onReveal(msg) {
    if (msg.question !== this.question?.id) this.#ask(this.#questionById(msg.question), false);
    this.#revealed(msg);
    this.shown = true;
    this.#status(""); // "answer saved" is past news
    const event = msg.evidence?.event;
    if (event) {
      this.evidence.set(msg.question, event);
      this.onRevealEvent?.(event);
    } else if (msg.evidence?.match) {
      this.waits.push({ question: msg.question, match: msg.evidence.match });
    }
    this.lastEvidence = msg.question;
    this.#render();
  }

  onAnswerAck(msg) {
    if (msg.question !== this.question?.id) return;
    this.mine = { choice: msg.choice, value: msg.value, node: msg.node };
    storage.set(this.#answerKey(msg.question), JSON.stringify(this.mine));
    this.#status(this.t("lesson.saved"));
    this.#renderAnswer();
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
      this.evidence.set(wait.question, event);
      this.#render();
    }
  }

  /** Sends this browser's answer to the open question (it replaces an earlier one). */
  answer(fields) {
    const question = this.question;
    if (!question) return;
    const message = { type: "answer", question: question.id, viewer: viewerId(), ...fields };
    const nickname = storage.get(NICKNAME_KEY);
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
    return { id: "diagnosis", kind: "diagnosis", text: d.brief, choices: d.choices ?? [], nodes: d.nodes ?? [] };
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
    this.#renderBar();
    this.#renderCard();
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
      const show = button("lb-show", "", () => {
        this.shown = true;
        this.#render();
      });
      const actions = el("div", "lb-actions");
      actions.append(show);
      if (this.control) {
        this.revealButton = button("lb-reveal", this.t("lesson.reveal"), () => this.#command("reveal"));
        this.nextButton = button("lb-next", this.t("lesson.next"), () => this.#command("next"));
        actions.append(this.revealButton, this.nextButton);
      }
      const head = el("div", "lb-head");
      head.append(kind, title, progress);
      title.dataset.source = text.dataset.source = "lesson"; // the library's own texts
      bar.replaceChildren(head, text, evidence, actions);
      this.barParts = { kind, title, progress, text, evidence, show };
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
    // the card folded away: a button brings it back
    p.show.hidden = !this.question || this.shown;
    setText(p.show, this.t(this.open
      ? (this.kind === "drill" ? "lesson.show-diagnosis" : "lesson.show-question")
      : "lesson.show-answer"));
    p.show.classList.toggle("primary", this.open && !this.control);
    if (this.control) {
      this.revealButton.hidden = !this.open || this.shown;
      this.nextButton.hidden = this.kind !== "lesson" || this.open || this.shown
        || (this.step?.index ?? -1) + 1 >= this.of;
    }
    // the latest reveal's evidence, while its card is not on the screen
    const qid = this.lastEvidence;
    const showEvidence = qid && !(this.shown && this.question?.id === qid);
    p.evidence.hidden = !showEvidence;
    if (showEvidence) p.evidence.replaceChildren(...this.#evidenceLine(qid));
  }

  // -- the question card ----------------------------------------------------------------------------

  #renderCard() {
    const layer = this.layer;
    layer.hidden = !(this.question && this.shown);
    if (layer.hidden) return;
    // A drill's diagnosis stays open while the run goes on: its card sits in a corner, the
    // panels stay in view. A lesson's question pauses the run: its card takes the stage.
    layer.classList.toggle("docked", this.kind === "drill" && this.open);
    if (!this.card) this.#buildCard();
    const card = this.card;
    card.root.dataset.state = this.open ? "open" : "revealed";
    card.answer.hidden = this.control || !this.open;
    card.nickname.hidden = this.control || !this.open;
    this.#renderAnswer();
    this.#renderResults();
    this.#renderReveal();
    card.reveal.hidden = !this.open || !this.control;
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
    const reveal = button("qc-reveal-button", t("lesson.reveal"), () => this.#command("reveal"), { primary: true });
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
    if (tally && q.kind === "number") {
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
    const right = el("p", "qc-correct");
    right.append(el("span", "qc-correct-label", `${t("lesson.correct")} `));
    if (q.kind === "number") {
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
    if (!this.control && this.mine) {
      const ok = answerIsRight(this.mine, r);
      const mine = el("p", `qc-mine ${ok ? "right" : "wrong"}`);
      mine.append(el("span", "", `${t(ok ? "lesson.you-right" : "lesson.you-wrong")} `));
      const what = this.mine.value !== undefined && this.mine.value !== null
        ? `${this.mine.value}${q.unit ? ` ${q.unit}` : ""}`
        : [this.#text((q.choices ?? []).find((c) => c.id === this.mine.choice)?.text), this.mine.node]
          .filter(Boolean).join(" · ");
      const whatEl = el("strong", "", what);
      whatEl.dataset.source = "lesson";
      mine.append(whatEl);
      parts.push(mine);
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
    const wait = this.waits.find((w) => w.question === qid);
    if (!wait) return [];
    return [el("span", "evidence-label", `${this.t("lesson.evidence-waiting")} `), code(matcherText(wait.match))];
  }
}
