"""Patches applied to an object as the API server applies them, so that what a patch changes can be read off
the result (``writes.py`` maps the change onto a command).

- a JSON merge patch (RFC 7386): objects merge, ``null`` removes a field, anything else replaces;
- a strategic merge patch (``k8s.io/apimachinery/pkg/util/strategicpatch``) differs only for lists with a
  merge key and for its ``$`` directives. The Node fields a write may change (``spec.unschedulable``,
  ``spec.taints``) are a boolean and a list without a merge key (``k8s.io/api/core/v1`` ``NodeSpec``), which
  it replaces whole as a merge patch does; a directive is refused, naming it;
- a JSON patch (RFC 6902): ``add``, ``remove``, ``replace``, ``test``, ``copy`` and ``move`` on JSON pointers.

A patch that cannot be applied is a ``PatchError`` naming the field or operation (the caller answers 422
Invalid, as the API server does); a body that is not a patch at all is a 400.
"""

from __future__ import annotations

import copy
from typing import Any

from heartbeat_site.k8sapi.status import K8sError


class PatchError(ValueError):
    """A patch that cannot be applied: ``field`` (a field path or a JSON patch operation) and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def merge_patch(target: dict, patch: Any, strategic: bool = False) -> dict:
    """``target`` with the merge patch ``patch`` applied (a new object; ``target`` is left as it was)."""
    if not isinstance(patch, dict):
        raise K8sError(400, "a merge patch must be a JSON object")
    return _merge(target, patch, strategic, "")


def _merge(target: Any, patch: dict, strategic: bool, path: str) -> dict:
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        where = f"{path}.{key}" if path else key
        if strategic and key.startswith("$"):
            raise PatchError(where, "strategic merge patch directives are not supported here")
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            out[key] = _merge(out.get(key), value, strategic, where)
        else:
            out[key] = copy.deepcopy(value)
    return out


def json_patch(target: dict, operations: Any) -> dict:
    """``target`` with the JSON patch ``operations`` applied, or a 422 naming the operation that cannot be."""
    if not isinstance(operations, list):
        raise K8sError(400, "a JSON patch must be a list of operations")
    doc: Any = copy.deepcopy(target)
    for index, op in enumerate(operations):
        if not isinstance(op, dict) or not isinstance(op.get("op"), str) or not isinstance(op.get("path"), str):
            raise K8sError(400, f"JSON patch operation {index}: needs an \"op\" and a \"path\" string")
        try:
            doc = _operation(doc, op)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            why = exc.args[0] if exc.args else type(exc).__name__
            raise PatchError(f"JSON patch operation {index} ({op['op']} {op['path']})", why) from None
    if not isinstance(doc, dict):
        raise PatchError("JSON patch", "it replaced the whole object")
    return doc


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError("a path is a JSON pointer starting with /")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _child(doc: Any, part: str) -> Any:
    if isinstance(doc, list):
        return doc[_index(doc, part, existing=True)]
    if not isinstance(doc, dict):
        raise TypeError(f"{part!r} is below a value that is neither an object nor a list")
    if part not in doc:
        raise KeyError(f"{part!r} is missing")
    return doc[part]


def _parent(doc: Any, parts: list[str]) -> Any:
    for part in parts[:-1]:
        doc = _child(doc, part)
    return doc


def _index(items: list, part: str, *, existing: bool) -> int:
    if part == "-" and not existing:
        return len(items)
    if not part.isdigit():
        raise ValueError(f"{part!r} is not a list index")
    index = int(part)
    if index > len(items) or (existing and index == len(items)):
        raise IndexError(f"index {index} is out of the list's {len(items)} items")
    return index


def _get(doc: Any, path: str) -> Any:
    for part in _pointer(path):
        doc = _child(doc, part)
    return doc


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        raise ValueError("cannot remove the whole object")
    parent = _parent(doc, parts)
    if isinstance(parent, list):
        return parent.pop(_index(parent, parts[-1], existing=True))
    _child(parent, parts[-1])
    return parent.pop(parts[-1])


def _add(doc: Any, path: str, value: Any, *, replace: bool) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts)
    if isinstance(parent, list):
        index = _index(parent, parts[-1], existing=replace)
        if replace:
            parent[index] = value
        else:
            parent.insert(index, value)
    elif isinstance(parent, dict):
        if replace and parts[-1] not in parent:
            raise KeyError(f"{parts[-1]!r} is missing")
        parent[parts[-1]] = value
    else:
        raise TypeError(f"{'/'.join(parts[:-1]) or 'the object'} is neither an object nor a list")
    return doc


def _operation(doc: Any, op: dict) -> Any:
    kind, path = op["op"], op["path"]
    if kind in ("add", "replace", "test") and "value" not in op:
        raise ValueError("needs a \"value\"")
    if kind in ("copy", "move") and not isinstance(op.get("from"), str):
        raise ValueError("needs a \"from\" path")
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op["value"]), replace=False)
    if kind == "replace":
        return _add(doc, path, copy.deepcopy(op["value"]), replace=True)
    if kind == "remove":
        _remove(doc, path)
        return doc
    if kind == "test":
        if _get(doc, path) != op["value"]:
            raise ValueError("the value is not the one tested for")
        return doc
    if kind == "copy":
        return _add(doc, path, copy.deepcopy(_get(doc, op["from"])), replace=False)
    if kind == "move":
        return _add(doc, path, _remove(doc, op["from"]), replace=False)
    raise ValueError(f"unknown operation {kind!r} (add, remove, replace, test, copy, move)")


def changed_fields(before: dict, after: dict) -> list[str]:
    """The fields ``after`` differs from ``before`` in, as ``spec.taints`` (two levels deep), sorted."""
    changed = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict | None) and isinstance(new, dict | None):
            old, new = old or {}, new or {}
            changed += [f"{key}.{sub}" for sub in sorted(set(old) | set(new)) if old.get(sub) != new.get(sub)]
        else:
            changed.append(key)
    return changed
