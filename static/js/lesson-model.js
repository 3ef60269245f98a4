// The pure parts of a lesson or drill page (docs/lessons.md): the event matcher the pages wait
// for a reveal's evidence with, the tally's bars, and whether an answer was right. No DOM here,
// so tests/js runs it under Node.

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

/** Whether a viewer's answer (`{choice}`, `{value}` or `{choice, node}`) is the revealed one. */
export function answerIsRight(answer, reveal) {
  if (!answer || !reveal) return false;
  if (typeof reveal.correct === "number") {
    return typeof answer.value === "number"
      && Math.abs(answer.value - reveal.correct) <= (reveal.tolerance ?? 0) + 1e-9;
  }
  if (answer.choice !== reveal.correct) return false;
  return reveal.node === undefined || reveal.node === null || answer.node === reveal.node;
}

/** A matcher as a line of `field=value` pairs (what the pages wait for, shown before it comes). */
export function matcherText(matcher) {
  const value = (v) => (Array.isArray(v) ? v.map(value).join("|") : v !== null && typeof v === "object"
    ? `{${Object.entries(v).map(([k, x]) => `${k}:${value(x)}`).join(",")}}` : String(v));
  return Object.entries(matcher ?? {}).map(([k, v]) => `${k}=${value(v)}`).join(" ");
}
