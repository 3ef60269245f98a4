// @ts-check
// The pure parts of a lesson or drill page (docs/lessons.md): the event matcher the pages wait
// for a reveal's evidence with, what it waits for in words, the tally's bars, and whether an
// answer was right. No DOM here, so tests/js runs it under Node.
import { formatOffset } from "#js/time.js";

/** A library text `{en, zh}` in the page's language (a Django code: "en", "zh-hans"). */
export function localText(text, lang) {
  if (!text || typeof text !== "object") return text ?? "";
  return (String(lang).startsWith("zh") ? text.zh : text.en) || text.en || text.zh || "";
}

/**
 * Whether `event` (an event dict of a frame) has every field `matcher` names, as the server's
 * matcher decides (simulation/lessons/matchers.py): a scalar is equal (a boolean only equals a
 * boolean), a string ending in `*` is a prefix (`pod: web-*`), a list is any of its items, a
 * mapping matches a mapping holding at least its keys. A field the event lacks never matches.
 */
export function matches(matcher, event) {
  if (!matcher || !event) return false;
  return Object.entries(matcher).every(([key, want]) => Object.hasOwn(event, key) && same(want, event[key]));
}

function same(want, have) {
  if (Array.isArray(want)) return want.some((w) => same(w, have));
  if (want !== null && typeof want === "object") {
    return have !== null && typeof have === "object" && !Array.isArray(have)
      && Object.entries(want).every(([k, v]) => Object.hasOwn(have, k) && same(v, have[k]));
  }
  if (typeof want === "string" && want.endsWith("*")) {
    return typeof have === "string" && have.startsWith(want.slice(0, -1));
  }
  return want === have; // a boolean only equals a boolean: strict equality already says so
}

/** The range a number tally's label stands for: "40-50" is [40, 50), "50" is [50, 50]. */
export function bucketRange(label) {
  const m = String(label).match(/^(-?[\d.]+(?:e[+-]?\d+)?)(?:-(-?[\d.]+(?:e[+-]?\d+)?))?$/i);
  if (!m) return null;
  const low = Number(m[1]);
  return { low, high: m[2] === undefined ? low : Number(m[2]), single: m[2] === undefined };
}

/** Whether a number tally's range holds an answer within the tolerance of the right one. */
export function bucketHolds(label, answer, tolerance = 0) {
  const range = bucketRange(label);
  if (!range || typeof answer !== "number") return false;
  const low = answer - (tolerance ?? 0);
  const high = answer + (tolerance ?? 0);
  return range.single ? range.low >= low && range.low <= high : range.low <= high && range.high > low;
}

/**
 * The bars of a tally: one per key, the given `order` first (a question's choices, each shown even
 * without an answer), then the tally's other keys (a number question's ranges, lowest first).
 * `share` (0..1) is the bar's length, of the answers given; `percent`s are whole and add up to 100
 * (largest remainders) when anyone answered.
 * @param {Record<string, number>} [counts]
 * @param {{order?: string[], answers?: number}} [options]
 */
export function tallyBars(counts = {}, { order = [], answers } = {}) {
  const keys = [...order];
  const rest = Object.keys(counts).filter((k) => !order.includes(k));
  rest.sort((a, b) => (bucketRange(a)?.low ?? 0) - (bucketRange(b)?.low ?? 0) || a.localeCompare(b));
  keys.push(...rest);
  const sum = keys.reduce((n, k) => n + (counts[k] ?? 0), 0);
  const total = Math.max(answers ?? 0, sum);
  const bars = keys.map((key) => {
    const count = counts[key] ?? 0;
    const exact = total ? (count * 100) / total : 0;
    return {
      key, count, share: total ? count / total : 0, percent: Math.floor(exact), remainder: exact - Math.floor(exact),
    };
  });
  if (sum && sum === total) {
    let missing = 100 - bars.reduce((n, b) => n + b.percent, 0);
    for (const bar of [...bars].sort((a, b) => b.remainder - a.remainder)) {
      if (missing <= 0) break;
      if (bar.count) {
        bar.percent += 1;
        missing -= 1;
      }
    }
  }
  return bars.map(({ remainder, ...bar }) => bar);
}

/**
 * The time each item of a revealed order question counts at: the run's (every item's event
 * known), else its place in `correct` (a reveal before the events); null when neither is known.
 */
export function orderTimes(reveal) {
  const items = reveal?.items ?? [];
  if (items.length && items.every((item) => item.event)) {
    return Object.fromEntries(items.map((item) => [item.id, item.event.t]));
  }
  if (!Array.isArray(reveal?.correct)) return null;
  return Object.fromEntries(reveal.correct.map((id, place) => [id, place]));
}

/**
 * Whether `order` (item ids, first to last) is a right order for the reveal, as the server
 * decides (simulation/lessons/ordering.py): every item once, none before an item that happened
 * strictly earlier; items of the same virtual instant may come in either order.
 */
export function orderIsRight(order, reveal) {
  const times = orderTimes(reveal);
  if (!times || !Array.isArray(order)) return false;
  const ids = Object.keys(times);
  if (order.length !== ids.length || !ids.every((id) => order.includes(id))) return false;
  return order.every((id, i) => i === 0 || times[order[i - 1]] <= times[id]);
}

/**
 * The virtual time of each item of an order as a page shows it ("T+01:55.2"), to the millisecond
 * where two items would otherwise read the same (one controller pass: 110.220 and 110.225).
 * `items`: [{id, event: {t} | null}]; an item still to come has no label.
 */
export function orderTimeLabels(items) {
  const tenths = (t) => `T+${formatOffset(t)}`;
  const millis = (t) => {
    const ms = String(Math.min(999, Math.floor((t % 1) * 1000 + 1e-6))).padStart(3, "0");
    return `T+${formatOffset(t, { tenths: false })}.${ms}`;
  };
  const known = (items ?? []).filter((item) => item.event);
  return Object.fromEntries(known.map((item) => {
    const t = item.event.t;
    const twin = known.some((other) => other !== item && other.event.t !== t && tenths(other.event.t) === tenths(t));
    return [item.id, twin ? millis(t) : tenths(t)];
  }));
}

/**
 * An order reveal's list as the run shows it so far: `placed`, the ids in the run's order (the
 * document's `answer`, else the items that happened, earliest first, by seq within an instant,
 * as simulation/lessons/ordering.py `run_order`), and `pending`, those still to come when the
 * document gave no answer (the run has not shown the whole order yet).
 */
export function revealOrder(reveal) {
  if (Array.isArray(reveal?.correct)) return { placed: reveal.correct, pending: [] };
  const items = reveal?.items ?? [];
  const happened = items.filter((item) => item.event)
    .sort((a, b) => a.event.t - b.event.t || a.event.seq - b.event.seq);
  return { placed: happened.map((item) => item.id), pending: items.filter((item) => !item.event).map((item) => item.id) };
}

/**
 * A revealed summary (a page's lesson state on joining) merged into the reveal the page already
 * holds: the item events it missed are filled in. Returns the merged reveal and the items of an
 * order question still to come, `[{item, match}]`, for the page to watch the frames for.
 */
export function settleReveal(held, summary) {
  const reveal = held ?? summary;
  if (held && summary) {
    for (const item of held.items ?? []) {
      const known = (summary.items ?? []).find((x) => x.id === item.id)?.event;
      if (!item.event && known) item.event = known;
    }
  }
  const waits = (reveal.items ?? []).filter((item) => !item.event && item.match)
    .map((item) => ({ item: item.id, match: item.match }));
  return { reveal, waits };
}

/**
 * Which revealed question's evidence the lesson bar shows: the latest reveal's (`last`:
 * {question, step}), only while the page is still where it was revealed (the same question on
 * the page, the same step) and its card is folded away. Once the next question opens or the
 * next step starts, it is past: its card ("Show the answer") shows it again, the bar does not.
 */
export function barEvidence(last, { question, step, open, shown }) {
  if (!last || open || shown) return null;
  return last.question === question && last.step === step ? last.question : null;
}

/**
 * A tap on an order question's item: appended to the order being built, or (tapped again)
 * taken out of it, the items after it moving up one place. Returns the new order.
 */
export function tapOrder(order, id) {
  return order.includes(id) ? order.filter((x) => x !== id) : [...order, id];
}

/** Whether a viewer's answer (`{choice}`, `{value}`, `{choice, node}` or `{order}`) is the revealed one. */
export function answerIsRight(answer, reveal) {
  if (!answer || !reveal) return false;
  if (Array.isArray(reveal.correct) || reveal.kind === "order") return orderIsRight(answer.order, reveal);
  if (typeof reveal.correct === "number") {
    return typeof answer.value === "number"
      && Math.abs(answer.value - reveal.correct) <= (reveal.tolerance ?? 0) + 1e-9;
  }
  if (answer.choice !== reveal.correct) return false;
  return reveal.node === undefined || reveal.node === null || answer.node === reveal.node;
}

// -- what a matcher waits for, in words ----------------------------------------------------------

const COMPONENTS = {
  "kubelet-lease": ["the kubelet's Lease loop", "kubelet 的 Lease 续约"],
  "kubelet-status": ["the kubelet's status report", "kubelet 的状态上报"],
  kubelet: ["the kubelet", "kubelet"],
  "kube-apiserver": ["the API server", "API 服务器"],
  "node-lifecycle-controller": ["the node lifecycle controller", "节点生命周期控制器"],
  "taint-eviction-controller": ["the taint eviction controller", "污点驱逐控制器"],
  "kube-scheduler": ["the scheduler", "调度器"],
  "endpointslice-controller": ["the EndpointSlice controller", "EndpointSlice 控制器"],
  "replicaset-controller": ["the ReplicaSet controller", "ReplicaSet 控制器"],
  "daemonset-controller": ["the DaemonSet controller", "DaemonSet 控制器"],
  "pod-garbage-collector": ["the pod garbage collector", "Pod 垃圾回收器"],
  "cloud-node-lifecycle-controller": ["the cloud node lifecycle controller", "云节点生命周期控制器"],
  "garbage-collector": ["the garbage collector", "垃圾回收器"],
  "statefulset-controller": ["the StatefulSet controller", "StatefulSet 控制器"],
  "persistentvolume-controller": ["the PersistentVolume controller", "PersistentVolume 控制器"],
  "csi-provisioner": ["the CSI provisioner", "CSI 供应器"],
  "attachdetach-controller": ["the attach/detach controller", "挂接/解挂控制器"],
  "csi-attacher": ["the CSI attacher", "CSI 挂接器"],
  trainer: ["the trainer", "讲师"],
};
const EVENT_KINDS = {
  write: ["a write", "一次写请求"], read: ["a read", "一次读请求"], "request-failed": ["a failed request", "一次失败的请求"],
  decision: ["a decision", "一个决定"], transition: ["a change of state", "一次状态变化"], fault: ["a fault", "一个故障"],
};
const ENDPOINT_STATES = {
  ready: [["ready", "not ready"], ["就绪", "未就绪"]],
  serving: [["serving", "not serving"], ["在服务", "不在服务"]],
  terminating: [["terminating", "not terminating"], ["终止中", "未在终止"]],
};

/**
 * What a matcher (docs/lessons.md, "Matchers") waits for, as a sentence in the page's language:
 * `{type: transition, kind: node-ready, node: node-2, to: Unknown}` is "node-2 turns
 * Ready=Unknown" (zh "node-2 变为 Ready=Unknown"). A reveal shows it while its evidence has not
 * happened yet. `names` may give the page's titles of rules and fault actions (`rule(id)`,
 * `action(id)`); without them their ids are shown. Never any matcher syntax.
 */
export function describeMatcher(matcher, lang = "en", names = {}) {
  const side = matcher?.side; // a comparison lesson's (docs/lessons.md): the side the event comes from
  if (!side) return describeEvent(matcher, lang, names);
  const { side: _side, ...rest } = matcher;
  const text = describeEvent(rest, lang, names);
  return String(lang).startsWith("zh") ? `${side.toUpperCase()} 侧：${text}` : `side ${side.toUpperCase()}: ${text}`;
}

function describeEvent(matcher, lang = "en", names = {}) {
  const zh = String(lang).startsWith("zh");
  const m = matcher ?? {};
  const say = (en, cn) => (zh ? cn : en);
  const or = (list) => {
    if (list.length < 2) return list[0] ?? "";
    return zh ? `${list.slice(0, -1).join("、")}或${list.at(-1)}` : `${list.slice(0, -1).join(", ")} or ${list.at(-1)}`;
  };
  const value = (v) => {
    if (Array.isArray(v)) return or(v.map(value));
    if (v === null) return say("none (removed)", "无（已移除）");
    if (typeof v === "object") return endpointState(v);
    return String(v);
  };
  const endpointState = (v) => {
    const parts = Object.entries(v).map(([k, x]) => {
      const words = ENDPOINT_STATES[k];
      return words ? words[zh ? 1 : 0][x ? 0 : 1] : `${k} ${String(x)}`;
    });
    return parts.join(zh ? "、" : ", ");
  };
  const names1 = (ids, lookup) => or((Array.isArray(ids) ? ids : [ids]).map((id) => lookup?.(id) ?? id));
  const component = m.component === undefined ? null
    : names1(m.component, (id) => COMPONENTS[id]?.[zh ? 1 : 0]);
  const node = m.node !== undefined && m.node !== null ? value(m.node) : null;
  const aNode = node ?? say("a node", "某个节点");
  const pod = m.pod ? say(`a pod of ${value(m.pod)}`, `${value(m.pod)} 的一个 Pod`) : say("a pod", "一个 Pod");
  const onNode = node ? say(` on ${node}`, `（${node} 上）`) : say("", " ");
  const by = component ? say(`, by ${component}`, `，由${component}做出`) : "";
  const change = (what, from, to, cn) => {
    // "{what} goes from A to B" / "turns B" / "leaves A" / "changes"
    if (from !== undefined && to !== undefined) return say(`${what} goes from ${value(from)} to ${value(to)}`, `${cn}从 ${value(from)} 变为 ${value(to)}`);
    if (to !== undefined) return say(`${what} turns ${value(to)}`, `${cn}变为 ${value(to)}`);
    if (from !== undefined) return say(`${what} is no longer ${value(from)}`, `${cn}不再是 ${value(from)}`);
    return say(`${what} changes`, `${cn}发生变化`);
  };
  const type = m.type ?? inferredType(m);
  if (type === "transition") {
    const taint = [m.key, m.effect].filter(Boolean).map(value).join(":");
    const taintEn = taint ? `taint ${taint}` : "a taint";
    const taintZh = taint ? `污点 ${taint}` : "一个污点";
    switch (m.kind) {
      case "node-ready":
        if (m.to !== undefined && m.from === undefined) {
          return say(`${aNode} turns Ready=${value(m.to)}`, `${aNode} 变为 Ready=${value(m.to)}`) + by;
        }
        return change(`${aNode}'s Ready`, m.from, m.to, `${aNode} 的 Ready `) + by;
      case "node-condition": {
        const key = m.key ? value(m.key) : say("a condition", "某个状况");
        if (m.to !== undefined && m.from === undefined) {
          return say(`${aNode} turns ${key}=${value(m.to)}`, `${aNode} 变为 ${key}=${value(m.to)}`) + by;
        }
        return change(m.key ? `${aNode}'s ${key}` : `a condition of ${aNode}`, m.from, m.to, `${aNode} 的 ${key} `) + by;
      }
      case "taint-added":
        return say(`${taintEn} added to ${aNode}`, `${aNode} 被加上${taintZh}`) + by;
      case "taint-removed":
        return say(`${taintEn} removed from ${aNode}`, `${aNode} 的${taintZh}被移除`) + by;
      case "pod-terminating":
        return say(`${pod}${onNode} starts terminating`, `${pod}${onNode}开始终止`) + by;
      case "pod-deleted":
        return say(`${pod}${onNode} is deleted`, `${pod}${onNode}被删除`) + by;
      case "pod-created":
        return say(`${pod} is created${onNode}`, `${pod}${onNode}被创建`) + by;
      case "pod-scheduled":
        return (m.to ? say(`${pod} is scheduled to ${value(m.to)}`, `${pod}被调度到 ${value(m.to)}`)
          : say(`${pod} is scheduled${onNode}`, `${pod}${onNode}被调度`)) + by;
      case "pod-ready":
        if (m.to === true || m.to === false) {
          return say(`${pod}${onNode} becomes ${m.to ? "Ready" : "not Ready"}`,
            `${pod}${onNode}变为${m.to ? "就绪" : "未就绪"}`) + by;
        }
        return say(`${pod}${onNode} changes its Ready condition`, `${pod}${onNode}的 Ready 条件发生变化`) + by;
      case "pod-phase":
        return change(`${pod}${onNode}'s phase`, m.from, m.to, `${pod}${onNode}的阶段`) + by;
      case "pod-disruption-target": {
        const reason = m.key ? say(` (reason ${value(m.key)})`, `（原因 ${value(m.key)}）`) : "";
        return say(`${pod}${onNode} gets the DisruptionTarget condition${reason}`,
          `${pod}${onNode}被加上 DisruptionTarget 条件${reason}`) + by;
      }
      case "endpoint": {
        const service = m.key ? value(m.key) : say("a Service", "某个 Service");
        return change(say(`an endpoint of ${service}${onNode}`, ""), m.from, m.to,
          `${service} 的一个端点${onNode}`) + by;
      }
      case "zone-state": {
        const zone = m.key ? value(m.key) : say("a zone", "某个可用区");
        return change(say(`zone ${zone}`, ""), m.from, m.to, `可用区 ${zone} `) + by;
      }
      case "node-created":
        return say(`the Node ${aNode} is created`, `Node ${aNode} 被创建`) + by;
      case "node-deleted":
        return say(`the Node ${aNode} is deleted`, `Node ${aNode} 被删除`) + by;
      case "node-unschedulable":
        if (m.to === true || m.to === false) {
          return say(`${aNode} is ${m.to ? "cordoned" : "uncordoned"}`, `${aNode} 被${m.to ? "封锁（cordon）" : "解除封锁"}`) + by;
        }
        break;
      default:
        break;
    }
  }
  if (type === "decision") {
    const rule = m.rule ? names1(m.rule, names.rule) : null;
    const who = component ?? say("a controller", "控制器");
    const about = [m.pod ? value(m.pod) : null, node].filter(Boolean).join(zh ? "，" : ", ");
    const outcome = m.outcome ? say(`: ${value(m.outcome)}`, `：${value(m.outcome)}`) : "";
    return say(`${who} decides ${rule ? `“${rule}”` : "something"}${about ? ` about ${about}` : ""}${outcome}`,
      `${who}${about ? `就 ${about} ` : ""}做出决定${rule ? `“${rule}”` : ""}${outcome}`);
  }
  if (type === "write" || type === "read" || type === "request-failed" || type === "request") {
    const what = [m.resource ? value(m.resource) + (m.subresource ? `/${value(m.subresource)}` : "") : null,
      m.name ? value(m.name) : null].filter(Boolean).join(" ");
    const verb = m.verb ? value(m.verb).toUpperCase() : null;
    const kind = type === "request" ? say("a request", "一次请求") : EVENT_KINDS[type][zh ? 1 : 0];
    const user = m.user ? say(` by ${value(m.user)}`, `（用户 ${value(m.user)}）`) : "";
    const code = m.code !== undefined ? say(`, answered ${value(m.code)}`, `，返回 ${value(m.code)}`) : "";
    const head = verb ? say(`${verb} of ${what || "an object"}`, `${what || "对象"} 的 ${verb}`)
      : say(`${kind}${what ? ` to ${what}` : ""}`, `${what ? `对 ${what} 的` : ""}${kind}`);
    const failed = type === "request-failed" && verb ? say(" fails", "失败") : "";
    return head + onNode + user + failed + code + (component ? say(` (${component})`, `（${component}）`) : "");
  }
  if (type === "fault") {
    const action = m.action ? names1(m.action, names.action ?? ((id) => id.replaceAll("-", " "))) : say("a fault", "故障");
    const target = [node, m.zone ? value(m.zone) : null, m.name ? value(m.name) : null].filter(Boolean).join(", ");
    return say(`the fault “${action}”${target ? ` on ${target}` : ""}`, `故障“${action}”${target ? `（${target}）` : ""}`);
  }
  // any other matcher: what kind of event, about what, by whom
  const types = type === undefined ? [] : Array.isArray(type) ? type : [type];
  const kinds = types.map((x) => EVENT_KINDS[x]?.[zh ? 1 : 0] ?? x);
  const head = kinds.length ? or(kinds) : say("an event", "一个事件");
  const keyed = [m.key, m.effect].filter((x) => x !== undefined && x !== null).map(value).join(":");
  const about = [m.kind ? value(m.kind) : null, keyed, m.pod ? value(m.pod) : null, node].filter(Boolean);
  const states = [m.from !== undefined ? say(`from ${value(m.from)}`, `从 ${value(m.from)}`) : null,
    m.to !== undefined ? say(`to ${value(m.to)}`, `变为 ${value(m.to)}`) : null].filter(Boolean).join(" ");
  return say(`${head}${about.length ? ` about ${about.join(", ")}` : ""}${states ? ` ${states}` : ""}`
    + `${component ? ` by ${component}` : ""}`,
  `${component ? `${component}的` : ""}${about.length ? `关于 ${about.join("、")} 的` : ""}${head}`
    + `${states ? `（${states}）` : ""}`);
}

/** The event type a matcher without `type` is about, from the fields it names (undefined: any). */
function inferredType(m) {
  if (["kind", "from", "to", "effect"].some((k) => m[k] !== undefined)) return "transition";
  if (m.rule !== undefined || m.outcome !== undefined) return "decision";
  if (m.action !== undefined) return "fault";
  if (["resource", "verb", "user", "subresource", "name", "code"].some((k) => m[k] !== undefined)) return "request";
  return undefined;
}

/**
 * A learner's score alone: how many of the questions (ids) their answer (`answers(id)`, as the
 * server took it) was right in the reveal (`reveals` maps an id to its reveal); an unanswered
 * question counts as wrong. `done` once every question is revealed (and every order known).
 */
export function soloScore(questionIds, answers, reveals) {
  // (an order revealed before its events is scored once the run has shown the order)
  const done = questionIds.every((id) => reveals.has(id)
    && (reveals.get(id).kind !== "order" || orderTimes(reveals.get(id)) !== null));
  const score = questionIds.filter((id) => answerIsRight(answers(id), reveals.get(id))).length;
  return { score, of: questionIds.length, done };
}
