// @ts-check
// The trainer's report of a lesson or drill (GET /api/runs/<id>/report, docs/architecture.md §6.5),
// shown on the trainer's page at the end: a row per question with the share right, a row per
// viewer, and the report to keep as CSV or JSON. Viewers' pages never build or fetch it.
import { el } from "#js/dom.js";
import { localText } from "#js/lesson-model.js";

function cell(tag, text, cls) {
  return el(tag, cls ?? "", text);
}

function percent(share) {
  return share === null || share === undefined ? "—" : `${Math.round(share * 100)}%`;
}

/**
 * The report card. `report`: the JSON of the endpoint; `download(format)`: saves it ("csv" or
 * "json"); `close()`: folds the card away.
 */
export function renderReport(report, { t, lang, download, close }) {
  const root = el("section", "question-card report-card");
  root.setAttribute("role", "dialog");
  root.setAttribute("aria-labelledby", "report-title");
  const head = el("header", "qc-head");
  const title = el("span", "qc-label", t("lesson.report"));
  title.id = "report-title";
  const shut = el("button", "qc-hide", t("lesson.close"));
  shut.type = "button";
  shut.addEventListener("click", close);
  head.append(title, shut);
  const name = el("p", "report-lesson", localText(report.lesson?.title, lang));
  name.dataset.source = "lesson";
  const parts = [head, name];

  const questions = report.questions ?? [];
  if (!questions.length) {
    parts.push(el("p", "hint", t("lesson.report-none")));
  } else {
    const table = el("table", "report-table report-questions");
    const header = el("tr");
    header.append(cell("th", "#"), cell("th", t("lesson.question")), cell("th", t("lesson.report-answers"), "num"),
      cell("th", t("lesson.report-right"), "num"));
    table.append(el("thead"), el("tbody"));
    table.tHead.append(header);
    questions.forEach((q, i) => {
      const row = el("tr");
      row.dataset.question = q.id;
      row.dataset.status = q.status;
      const text = cell("td", localText(q.text, lang), "report-text");
      text.dataset.source = "lesson";
      if (q.status !== "revealed") text.append(" ", el("span", "report-open", t("lesson.report-open")));
      const right = cell("td", `${percent(q.share_right)}`, "num report-share");
      if (q.answers) right.title = t("lesson.report-right-of", { right: q.right ?? "—", answers: q.answers });
      row.append(cell("td", String(i + 1), "num"), text, cell("td", String(q.answers), "num"), right);
      table.tBodies[0].append(row);
    });
    parts.push(table);
  }

  const viewers = report.viewers ?? [];
  if (viewers.length) {
    const table = el("table", "report-table report-viewers");
    const header = el("tr");
    header.append(cell("th", t("lesson.report-viewer")), cell("th", t("lesson.report-right"), "num"));
    table.append(el("thead"), el("tbody"));
    table.tHead.append(header);
    for (const v of viewers) {
      const row = el("tr");
      const who = v.nickname ? cell("td", v.nickname) : cell("td", t("lesson.report-anonymous", { n: v.viewer }), "hint");
      who.translate = false;
      row.append(who, cell("td", t("lesson.report-right-of", { right: v.right, answers: v.answered }), "num"));
      table.tBodies[0].append(row);
    }
    parts.push(el("h3", "report-sub", t("lesson.report-viewers")), table);
  }

  const actions = el("div", "qc-actions");
  for (const format of ["csv", "json"]) {
    const b = el("button", format === "csv" ? "primary report-download" : "report-download",
      t(`lesson.report-${format}`));
    b.type = "button";
    b.dataset.format = format;
    b.addEventListener("click", () => download(format));
    actions.append(b);
  }
  parts.push(actions);
  root.append(...parts);
  return root;
}
