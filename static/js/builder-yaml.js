// @ts-check
// The scenario builder's YAML view: one parsed YAML document is the builder's state. The form edits it in
// place (a value, an item added or removed), so the author's comments, key order and flow style survive a
// form edit; the text area edits it by being parsed again. Parsed with YAML 1.1 rules, as PyYAML reads
// the document on the server (`on`, `yes` are booleans there too; a version must be quoted: "1.30").
import { LineCounter, isCollection, isMap, isScalar, isSeq, parseDocument } from "yaml";

/** @typedef {import("yaml").YAMLMap} YAMLMap */
/** @typedef {import("yaml").YAMLSeq} YAMLSeq */

/** @type {import("yaml").ParseOptions & import("yaml").DocumentOptions} */
const OPTIONS = { version: "1.1", prettyErrors: false };

export class YamlSource {
  /** @param {string} text */
  constructor(text) {
    /** @type {import("yaml").Document} the form's edits go in; the text's parses replace it */
    this.doc = parseDocument("", OPTIONS);
    this.lines = new LineCounter();
    this.parse(text);
  }

  /** A source holding `data` (a document from the server) written out as YAML. */
  static of(data) {
    const source = new YamlSource("");
    source.doc.contents = source.doc.createNode(data);
    source.#reparse();
    return source;
  }

  /** Reads `text`: null when it parsed, else its first syntax error {line, message} (the state is kept). */
  parse(text) {
    const lines = new LineCounter();
    const doc = parseDocument(text, { ...OPTIONS, lineCounter: lines });
    if (doc.errors.length) {
      const error = doc.errors[0];
      return { line: lines.linePos(error.pos[0]).line, message: error.message.split("\n")[0] };
    }
    this.doc = doc;
    this.lines = lines;
    this.text = text;
    return null;
  }

  /** The document as data (what the server checks). */
  get data() {
    return this.doc.toJS() ?? {};
  }

  /** The document as a mapping, for the form ({} when the text is something else). */
  get mapping() {
    const data = this.data;
    return data && typeof data === "object" && !Array.isArray(data) ? data : {};
  }

  /** Sets the value at `path` (keys and list indices), creating the mappings on the way. */
  set(path, value) {
    /** @type {YAMLMap | YAMLSeq} */
    let node = this.#root();
    let at = 0;
    for (; at < path.length - 1; at += 1) {
      const next = node.get(path[at], true);
      if (!isCollection(next)) break;
      node = next;
    }
    let rest = value;
    for (let i = path.length - 1; i > at; i -= 1) rest = { [path[i]]: rest };
    const old = node.get(path[at], true);
    if (isScalar(old) && (rest === null || typeof rest !== "object")) old.value = rest; // keeps its comment
    else node.set(path[at], this.doc.createNode(rest));
    this.#reparse();
  }

  /** Removes the value at `path`, and the mappings it leaves empty (`kubelet: {}`). */
  remove(path) {
    if (this.doc.hasIn(path)) this.doc.deleteIn(path);
    for (let end = path.length - 1; end > 0; end -= 1) {
      const parent = this.doc.getIn(path.slice(0, end), true);
      const inList = typeof path[end - 1] === "number";
      if (!isMap(parent) || parent.items.length || inList) break;
      this.doc.deleteIn(path.slice(0, end));
    }
    this.#reparse();
  }

  /** Inserts `value` in the list at `path` at `index` (the end by default), creating the list if needed. */
  insert(path, value, index) {
    const list = this.doc.getIn(path, true);
    if (!isSeq(list)) {
      this.set(path, [value]);
      return;
    }
    list.items.splice(index ?? list.items.length, 0, this.doc.createNode(value));
    this.#reparse();
  }

  /** The line (1-based) of the value at `path`, else of the nearest of its parents that the text has. */
  lineOf(path) {
    for (let end = path.length; end > 0; end -= 1) {
      const node = /** @type {import("yaml").Node | undefined} */ (this.doc.getIn(path.slice(0, end), true));
      if (node?.range) return this.lines.linePos(node.range[0]).line;
    }
    return 1;
  }

  /** The character offset where `line` starts. */
  offsetOf(line) {
    return this.lines.lineStarts[Math.max(0, line - 1)] ?? 0;
  }

  /** @returns {YAMLMap} the document's top mapping (made one if it is something else) */
  #root() {
    if (!isMap(this.doc.contents)) this.doc.contents = this.doc.createNode({});
    return /** @type {YAMLMap} */ (this.doc.contents);
  }

  #reparse() {
    this.parse(this.doc.toString());
  }
}

/** "cluster.zones[1].nodes" -> ["cluster", "zones", 1, "nodes"] (the validator's field paths). */
export function pathParts(text) {
  const parts = [];
  for (const [, key, index] of String(text).matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    parts.push(index !== undefined ? Number(index) : key);
  }
  return parts;
}

/** ["cluster", "zones", 1, "nodes"] -> "cluster.zones[1].nodes". */
export function pathText(parts) {
  return parts.reduce(
    (text, part) => (typeof part === "number" ? `${text}[${part}]` : text ? `${text}.${part}` : part), "");
}
