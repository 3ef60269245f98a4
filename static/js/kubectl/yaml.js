// @ts-check
// `kubectl get -o yaml` output for plain JSON objects: keys sorted (kubectl marshals a map),
// list items at their parent's indentation, and strings quoted only where YAML would read
// them as something else (numbers, booleans, timestamps...), as sigs.k8s.io/yaml does.

const PLAIN_UNSAFE = /^[\s\-?:,[\]{}#&*!|>'"%@`]|[\s]$|: | #|^$/;
const RESERVED =
  /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;
const NUMBER = /^[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$|^0x[0-9a-fA-F_]+$|^0o?[0-7_]+$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$/;
const TIMESTAMP =
  /^\d{4}-\d\d?-\d\d?(?:(?:[Tt]|[ \t]+)\d\d?:\d\d:\d\d(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?$/;

function scalar(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  const text = String(value);
  if (text.includes("\n")) return JSON.stringify(text);
  if (PLAIN_UNSAFE.test(text) || RESERVED.test(text) || NUMBER.test(text) || TIMESTAMP.test(text)) {
    return JSON.stringify(text);
  }
  return text;
}

const isMap = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function emit(value, indent, lines) {
  const pad = " ".repeat(indent);
  if (isMap(value)) {
    for (const key of Object.keys(value).sort()) {
      const child = value[key];
      if (isMap(child) && Object.keys(child).length) {
        lines.push(`${pad}${scalar(key)}:`);
        emit(child, indent + 2, lines);
      } else if (Array.isArray(child) && child.length) {
        lines.push(`${pad}${scalar(key)}:`);
        emit(child, indent, lines);
      } else {
        lines.push(`${pad}${scalar(key)}: ${inline(child)}`);
      }
    }
  } else if (Array.isArray(value)) {
    for (const item of value) {
      if (isMap(item) && Object.keys(item).length) {
        const nested = [];
        emit(item, indent + 2, nested);
        nested[0] = `${pad}- ${nested[0].slice(indent + 2)}`;
        lines.push(...nested);
      } else if (Array.isArray(item) && item.length) {
        const nested = [];
        emit(item, indent + 2, nested);
        nested[0] = `${pad}- ${nested[0].slice(indent + 2)}`;
        lines.push(...nested);
      } else {
        lines.push(`${pad}- ${inline(item)}`);
      }
    }
  }
}

function inline(value) {
  if (isMap(value)) return "{}";
  if (Array.isArray(value)) return "[]";
  return scalar(value);
}

/** Serialises an object the way `kubectl get ... -o yaml` prints it (managedFields hidden). */
export function toYaml(object) {
  const clean = structuredClone(object);
  if (clean?.metadata) delete clean.metadata.managedFields;
  const lines = [];
  emit(clean, 0, lines);
  return lines.join("\n") + "\n";
}
