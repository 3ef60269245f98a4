// An observation's watch problem said in the page's language, from the kind and fields the driver sends.
import assert from "node:assert/strict";
import test from "node:test";

import { makeTranslator } from "../../static/js/i18n.js";
import { sayProblem } from "../../static/js/observed-problem.js";

const t = makeTranslator({
  "observed.why.forbidden": "该令牌无权列出或 watch {what}（{status}）",
  "observed.what.events": "events（所有命名空间）",
});

test("a known kind is said in the page's words, the resource named in them", () => {
  const problem = { kind: "forbidden", server: "https://k", resource: "events", status: 403, detail: "" };
  assert.equal(sayProblem(t, problem, "the token may not list or watch events"), "该令牌无权列出或 watch events（所有命名空间）（403）");
});

test("a kind the page has no words for, or no kind, is said in the driver's sentence", () => {
  assert.equal(sayProblem(t, { kind: "other", detail: "Boom: x" }, "Boom: x"), "Boom: x");
  assert.equal(sayProblem(t, undefined, "cannot reach the API server at https://k: refused"),
    "cannot reach the API server at https://k: refused");
});
