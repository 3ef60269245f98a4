// @ts-check
// One time axis for the two sequence diagrams of a comparison (docs/architecture.md §6.9): the same virtual
// second starts at the same height in both. Each diagram draws a row per event (view.js), and the two sides make
// different numbers of events once their settings make a difference (side a's NotReady writes come 10 s before
// side b's), so rows placed one after the other drift apart. Here each virtual second takes as many rows as the
// busier side made in it: a side's rows of that second start where the other side's do, and the quieter side
// leaves blank rows below its own.

const BUCKET = 1; // virtual seconds that start at one height on both sides

export class TimeAxis {
  /** @param {Record<string, import("#js/sequence/model.js").SequenceModel>} models  the sides' row models, by key */
  constructor(models) {
    this.models = models;
    this.slots = Object.fromEntries(Object.keys(models).map((key) => [key, []]));
    this.total = 0; // rows' height of the taller side, in rows: both diagrams scroll the same height
    this.version = 0; // counts the times the placement changed: a view redraws its window then
    this.seen = "";
  }

  /** Places every row again when a side's rows changed (cheap: a few thousand rows, once per frame pass). */
  update() {
    const keys = Object.keys(this.models);
    const signature = keys.map((key) => this.models[key].generation).join(",");
    if (signature === this.seen) return;
    this.seen = signature;
    const buckets = new Map(); // second -> rows per side
    const seconds = {};
    for (const [k, key] of keys.entries()) {
      const model = this.models[key];
      const list = (seconds[key] = new Float64Array(model.length));
      let last = 0;
      for (let i = 0; i < model.length; i++) {
        const t = model.tAt(i) ?? last; // (an event the history let go: its predecessor's time)
        last = t;
        const second = Math.floor(t / BUCKET);
        list[i] = second;
        const counts = buckets.get(second) ?? buckets.set(second, new Array(keys.length).fill(0)).get(second);
        counts[k]++;
      }
    }
    const start = new Map();
    let top = 0;
    for (const second of [...buckets.keys()].sort((x, y) => x - y)) {
      start.set(second, top);
      top += Math.max(...buckets.get(second));
    }
    for (const key of keys) {
      const list = seconds[key];
      const slots = (this.slots[key] = new Array(list.length));
      let rank = 0;
      for (let i = 0; i < list.length; i++) {
        rank = i > 0 && list[i] === list[i - 1] ? rank + 1 : 0;
        slots[i] = start.get(list[i]) + rank;
      }
    }
    this.total = top;
    this.version++;
  }

  /** The height (in rows) of side `key`'s row `i`. */
  slot(key, i) {
    return this.slots[key][i] ?? i;
  }

  /** The rows of side `key` at heights [from, to) (in rows): [first index, last index + 1). */
  rowsIn(key, from, to) {
    const slots = this.slots[key];
    return [lowerBound(slots, from), lowerBound(slots, to)];
  }
}

/** The first index whose value is >= `value` in an increasing array. */
function lowerBound(values, value) {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
