// @ts-check
// The page's record of the live events: what the sequence diagram rebuilds its scroll-back from
// when the focus moves, and where "why" looks for the decision behind a write. It keeps the
// newest `max` to `max + trim` events (the oldest `trim` go at once), stored as columns: typed
// arrays allocated once at the start, strings as indices into a table of the distinct ones.
// So a class's page takes its memory when it opens and keeps it flat while the history fills.
//
// Requests (write, read, request-failed: nearly all of the traffic) live in the columns alone.
// The rarer kinds (decisions, transitions, faults, watches) keep their other fields in a small
// object each; a monitor pass keeps its per-node records as compact arrays (PassRecords).

export const TYPES = ["write", "read", "request-failed", "watch", "decision", "transition", "fault"];
const TYPE_CODE = new Map(TYPES.map((type, i) => [type, i]));
const OTHER = TYPES.length; // an event type this page does not know (kept by its name, in `rest`)

// Fields stored as string-table indices, in every event.
const STRINGS = ["component", "node", "user", "verb", "resource", "subresource", "name", "message"];
// Fields the page never reads back from the history (the store keeps the written object).
const LEFT_OUT = new Set(["seq", "t", "type", "code", "object", "time", "summary", "requestReceivedTimestamp",
  "watchers", "namespace", "removed", ...STRINGS]);

/** Distinct strings, each kept once; index 0 stands for null. */
class StringTable {
  constructor() {
    this.list = [null];
    this.index = new Map();
  }

  id(text) {
    if (text === null || text === undefined) return 0;
    const s = String(text);
    let id = this.index.get(s);
    if (id === undefined) {
      id = this.list.length;
      this.list.push(s);
      this.index.set(s, id);
    }
    return id;
  }
}

// Words of the monitor-pass records (branches, Ready states: a handful), shared by every pass.
const WORDS = new StringTable();
// The node list of the last pass: consecutive passes list the same nodes and share it.
let lastNames = { key: "", index: new Map() };

/**
 * The per-node records of one monitor pass (`nodes` of an `nlc.monitor-pass` decision), as
 * arrays, about a kilobyte for 100 nodes. Only what the sequence diagram prints is kept:
 * branch, deadline and the current Ready.
 */
export class PassRecords {
  constructor(nodes) {
    const names = Object.keys(nodes ?? {});
    const key = names.join("\n");
    if (key !== lastNames.key) lastNames = { key, index: new Map(names.map((name, i) => [name, i])) };
    this.index = lastNames.index;
    this.branch = new Uint8Array(names.length);
    this.current = new Uint8Array(names.length);
    this.deadline = new Float64Array(names.length).fill(NaN);
    names.forEach((name, i) => {
      const r = nodes[name] ?? {};
      this.branch[i] = Math.min(255, WORDS.id(r.branch));
      this.current[i] = Math.min(255, WORDS.id(r.current));
      if (typeof r.deadline === "number") this.deadline[i] = r.deadline;
    });
  }

  /** `{branch, deadline, current}` of one node (the fields it had), or null. */
  get(name) {
    const i = this.index.get(name);
    if (i === undefined) return null;
    const record = {};
    if (this.branch[i]) record.branch = WORDS.list[this.branch[i]];
    if (this.current[i]) record.current = WORDS.list[this.current[i]];
    if (!Number.isNaN(this.deadline[i])) record.deadline = this.deadline[i];
    return record;
  }
}

export class EventHistory {
  constructor({ max = 6000, trim = 1000 } = {}) {
    this.max = max;
    this.trim = trim;
    this.capacity = max + trim;
    this.length = 0;
    this.dropped = 0; // events let go since the start
    this.strings = new StringTable();
    this.seq = new Float64Array(this.capacity);
    this.t = new Float64Array(this.capacity);
    this.type = new Uint8Array(this.capacity);
    this.code = new Uint16Array(this.capacity);
    this.columns = Object.fromEntries(STRINGS.map((field) => [field, new Uint32Array(this.capacity)]));
    this.rest = new Array(this.capacity).fill(null);
  }

  /** Adds an event (newer than every one kept); the oldest `trim` go when it is full. */
  push(event) {
    if (this.length === this.capacity) this.#drop(this.trim);
    const i = this.length++;
    const type = TYPE_CODE.get(event.type) ?? OTHER;
    this.seq[i] = event.seq;
    this.t[i] = event.t;
    this.type[i] = type;
    this.code[i] = Number.isInteger(event.code) ? event.code : 0;
    for (const field of STRINGS) this.columns[field][i] = this.strings.id(event[field]);
    this.rest[i] = type <= 2 ? null : this.#restOf(event, type);
  }

  /** The fields of a rarer event that the columns do not hold, its strings shared. */
  #restOf(event, type) {
    const rest = {};
    for (const [key, value] of Object.entries(event)) {
      if (LEFT_OUT.has(key)) continue;
      rest[key] = typeof value === "string" ? this.strings.list[this.strings.id(value)] : value;
    }
    if (type === OTHER) rest.type = event.type;
    if (rest.nodes && event.rule === "nlc.monitor-pass") rest.nodes = new PassRecords(rest.nodes);
    delete rest.zones; // the controllers' state read them on arrival; nothing reads them back
    return rest;
  }

  /** Forgets every event (a replay seeking back); the columns stay allocated. */
  clear() {
    this.rest.fill(null, 0, this.length);
    this.length = 0;
  }

  /** Seq of the oldest event kept (Infinity when empty). */
  firstSeq() {
    return this.length ? this.seq[0] : Infinity;
  }

  typeAt(i) {
    return TYPES[this.type[i]] ?? this.rest[i]?.type;
  }

  /** The event at index `i` (0 the oldest), as an object like the one that came in. */
  at(i) {
    const event = { seq: this.seq[i], t: this.t[i], type: TYPES[this.type[i]] };
    for (const field of STRINGS) event[field] = this.strings.list[this.columns[field][i]];
    if (this.code[i]) event.code = this.code[i];
    if (this.rest[i]) Object.assign(event, this.rest[i]);
    return event;
  }

  /** Index of the newest event with a seq below `seq` (-1 when none). */
  before(seq) {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.seq[mid] < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /** The event with this seq, or null when it is not (or no longer) kept. */
  get(seq) {
    const i = this.before(seq) + 1;
    return i < this.length && this.seq[i] === seq ? this.at(i) : null;
  }

  /** Lets the oldest `n` events go and rebuilds the string table from the ones that stay. */
  #drop(n) {
    const keep = this.length - n;
    this.seq.copyWithin(0, n, this.length);
    this.t.copyWithin(0, n, this.length);
    this.type.copyWithin(0, n, this.length);
    this.code.copyWithin(0, n, this.length);
    this.rest.copyWithin(0, n, this.length);
    this.rest.fill(null, keep);
    const old = this.strings.list;
    this.strings = new StringTable();
    const remap = new Map();
    for (const field of STRINGS) {
      const column = this.columns[field];
      column.copyWithin(0, n, this.length);
      for (let i = 0; i < keep; i++) {
        let id = remap.get(column[i]);
        if (id === undefined) {
          id = this.strings.id(old[column[i]]);
          remap.set(column[i], id);
        }
        column[i] = id;
      }
    }
    this.length = keep;
    this.dropped += n;
  }
}
