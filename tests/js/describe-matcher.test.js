// What a reveal waits for, in words (describeMatcher, static/js/lesson-model.js): every matcher a
// built-in lesson uses (triggers, evidence, measures, choices) read from the lesson files
// themselves, in English and Chinese, never in matcher syntax.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { parse } from "yaml";
import { describeMatcher } from "../../static/js/lesson-model.js";

const LESSONS = new URL("../../simulation/lessons/builtin/", import.meta.url);

/** Every matcher of a lesson document: trigger events, evidence, measure ends, choices' and items' matches. */
function matchersOf(lesson) {
  const found = [];
  for (const step of lesson.steps ?? []) {
    if (step.trigger?.event) found.push(step.trigger.event);
    const q = step.question;
    if (!q) continue;
    if (q.evidence) found.push(q.evidence);
    if (q.measure) found.push(q.measure.from, q.measure.to);
    for (const item of [...(q.choices ?? []), ...(q.items ?? [])]) if (item.match) found.push(item.match);
  }
  return found;
}

const lessons = readdirSync(LESSONS).filter((f) => f.endsWith(".yaml"))
  .map((f) => [f, parse(readFileSync(new URL(f, LESSONS), "utf8"))]);

test("the built-in lessons are all read", () => {
  assert.ok(lessons.length >= 13, `${lessons.length} lesson files`);
  assert.ok(lessons.every(([, doc]) => matchersOf(doc).length), "every lesson waits for something");
});

test("every matcher of every lesson reads as a sentence in both languages", () => {
  for (const [file, doc] of lessons) {
    for (const matcher of matchersOf(doc)) {
      for (const lang of ["en", "zh-hans"]) {
        const text = describeMatcher(matcher, lang);
        const where = `${file} ${JSON.stringify(matcher)} (${lang}): ${text}`;
        assert.ok(text.length >= 8, where);
        for (const syntax of ["type=", "{", "}", "undefined", "null", "[object", "=>"]) {
          assert.ok(!text.includes(syntax), `${syntax} in ${where}`);
        }
        if (lang === "zh-hans") assert.match(text, /[\u4e00-\u9fff]/, `no Chinese in ${where}`);
        for (const v of [matcher.node, matcher.pod, matcher.key].flat().filter((x) => typeof x === "string")) {
          assert.ok(text.includes(v), `${v} is not named in ${where}`);
        }
      }
    }
  }
});

test("transitions, writes, decisions and faults say what happens", () => {
  const en = (m, names) => describeMatcher(m, "en", names);
  const zh = (m, names) => describeMatcher(m, "zh-hans", names);
  const unknown = { type: "transition", kind: "node-ready", node: "node-2", to: "Unknown" };
  assert.equal(en(unknown), "node-2 turns Ready=Unknown");
  assert.equal(zh(unknown), "node-2 变为 Ready=Unknown");
  const taint = { type: "transition", kind: "taint-added", node: "node-2", key: "node.kubernetes.io/unreachable",
    effect: "NoExecute" };
  assert.equal(en(taint), "taint node.kubernetes.io/unreachable:NoExecute added to node-2");
  assert.equal(zh(taint), "node-2 被加上污点 node.kubernetes.io/unreachable:NoExecute");
  const terminating = { type: "transition", kind: "pod-terminating", node: "node-2", pod: "web-*" };
  assert.equal(en(terminating), "a pod of web-* on node-2 starts terminating");
  const deletion = { type: "write", verb: "delete", resource: "pods", name: "web-*", node: "node-2" };
  assert.equal(en(deletion), "DELETE of pods web-* on node-2");
  const endpoint = { type: "transition", kind: "endpoint", node: "node-2", key: "web", to: { ready: true } };
  assert.equal(en(endpoint), "an endpoint of web on node-2 turns ready");
  assert.equal(zh(endpoint), "web 的一个端点（node-2 上）变为 就绪");
  const decision = { type: "decision", rule: ["nlc.taint-no-execute", "nlc.enter-master-disruption"] };
  assert.equal(en(decision, { rule: (id) => ({ "nlc.taint-no-execute": "Taint NoExecute" })[id] ?? id }),
    "a controller decides “Taint NoExecute or nlc.enter-master-disruption”");
  const fault = { type: "fault", action: "stop-kubelet", node: "node-2" };
  assert.equal(en(fault), "the fault “stop kubelet” on node-2");
  assert.equal(zh(fault, { action: () => "停止 kubelet" }), "故障“停止 kubelet”（node-2）");
  assert.equal(en({ type: ["decision", "transition"], node: "node-1", component: "kubelet" }),
    "a decision or a change of state about node-1 by the kubelet");
});

test("a comparison lesson's matcher names its side, and fits only that side's events", async () => {
  const { matches } = await import("../../static/js/lesson-model.js");
  const unknown = { side: "b", type: "transition", kind: "node-ready", node: "node-2", to: "Unknown" };
  assert.equal(describeMatcher(unknown, "en"), "side B: node-2 turns Ready=Unknown");
  assert.equal(describeMatcher(unknown, "zh-hans"), "B 侧：node-2 变为 Ready=Unknown");
  const event = { type: "transition", kind: "node-ready", node: "node-2", from: "True", to: "Unknown" };
  assert.ok(matches(unknown, { ...event, side: "b" }));
  assert.ok(!matches(unknown, { ...event, side: "a" }));
});
