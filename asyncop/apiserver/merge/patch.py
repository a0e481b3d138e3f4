"""The three PATCH body formats of the Kubernetes API: JSON patch, merge patch, strategic merge.

- `json_patch`: RFC 6902 (add/remove/replace/move/copy/test, JSON pointers with `~0`/`~1`,
  `-` appends to an array).
- `merge_patch`: RFC 7386 (objects merge recursively, `null` deletes, arrays replace whole).
- `strategic_merge_patch`: merge patch plus the list merge keys of built-in kinds
  (`mergeschema`) and the directives `$patch: replace|delete|merge`,
  `$deleteFromPrimitiveList/<list>`, `$setElementOrder/<list>` (the merged list follows the
  given order, server-only items keep their place) and `$retainKeys`, as sent by
  `kubectl apply` (client-side) and `kubectl patch`.
- `apply_merge`: the merge step of server-side apply (`apply.py`): a strategic merge whose
  list items match on all their key fields.

Invariants: pure functions; the input documents are never mutated (the result shares no
structure with them); a malformed patch raises `PatchError` with a readable message (the
server answers 422 for a failed JSON patch operation, 400 for an undecodable body).
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from asyncop.apiserver.merge.mergeschema import Node, schema_for

__all__ = ["PatchError", "apply_merge", "json_patch", "merge_patch", "strategic_merge_patch"]

MAX_JSON_PATCH_OPS: Final = 10_000


class PatchError(ValueError):
    """A patch that cannot be applied; `message` is meant for the client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _q(text: Any) -> str:
    """A string quoted like Go's %q (the server's messages come from Go)."""
    return orjson.dumps(str(text)).decode()


def _go(value: Any) -> str:
    """A JSON value formatted like Go's %v of the decoded value: map[k:v] [a b] <nil>."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _copy(value: Any) -> Any:
    if isinstance(value, dict | list):
        return orjson.loads(orjson.dumps(value))
    return value


# ---------------------------------------------------------------- RFC 6902 JSON patch


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str):
        raise PatchError(f"invalid JSON pointer: {_q(path)}")
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"JSON pointer must be empty or start with a \"/\": {_q(path)}")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _index(token: str, size: int, *, path: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return size
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"invalid array index {_q(token)} in path {_q(path)}")
    idx = int(token)
    if idx > size or (idx == size and not allow_end):
        raise PatchError(f"array index {idx} out of bounds in path {_q(path)}")
    return idx


def _parent(doc: Any, tokens: list[str], path: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"doc is missing path: {_q(path)}: missing value")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), path=path, allow_end=False)]
        else:
            raise PatchError(f"doc is missing path: {_q(path)}: missing value")
    return node


def _get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"doc is missing path: {_q(path)}: missing value")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(last, len(parent), path=path, allow_end=False)]
    raise PatchError(f"doc is missing path: {_q(path)}: missing value")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(last, len(parent), path=path, allow_end=True), value)
    else:
        raise PatchError(f"doc is missing path: {_q(path)}: missing value")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"unable to remove nonexistent key: {last}: missing value")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(last, len(parent), path=path, allow_end=False))
    raise PatchError(f"doc is missing path: {_q(path)}: missing value")


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _value(op: dict[str, Any], name: str) -> Any:
    if "value" not in op:
        raise PatchError(f"{name} operation does not apply: missing value")
    return _copy(op["value"])


def _from(op: dict[str, Any]) -> str:
    source = op.get("from")
    if not isinstance(source, str):
        raise PatchError(f"{op.get('op')} operation does not apply: missing from")
    return source


def json_patch(doc: dict[str, Any], ops: list[Any]) -> dict[str, Any]:
    """Apply an RFC 6902 patch (a list of operations) to a copy of `doc`."""
    if not isinstance(ops, list):
        raise PatchError(
            "error decoding patch: json: cannot unmarshal object into Go value of type "
            "[]handlers.jsonPatchOp"
        )
    if len(ops) > MAX_JSON_PATCH_OPS:
        raise PatchError(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPS}, "
            f"got {len(ops)}"
        )
    result: Any = _copy(doc)
    for op in ops:
        if not isinstance(op, dict):
            raise PatchError(f"invalid JSON patch operation: {_go(op)}")
        kind, path = op.get("op"), op.get("path")
        if not isinstance(path, str):
            raise PatchError(f"{kind} operation does not apply: missing path")
        if kind == "add":
            result = _add(result, path, _value(op, "add"))
        elif kind == "remove":
            result, _ = _remove(result, path)
        elif kind == "replace":
            value = _value(op, "replace")
            if _pointer(path):
                _get(result, path)  # must exist
                result, _ = _remove(result, path)
            result = _add(result, path, value)
        elif kind == "move":
            source = _from(op)
            if path != source and path.startswith(source + "/"):
                raise PatchError(f"cannot move {_q(source)} into its own child {_q(path)}")
            result, moved = _remove(result, source)
            result = _add(result, path, moved)
        elif kind == "copy":
            result = _add(result, path, _copy(_get(result, _from(op))))
        elif kind == "test":
            if not _json_equal(_get(result, path), op.get("value")):
                raise PatchError(f"testing value {path} failed: test failed")
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    if not isinstance(result, dict):
        raise PatchError("the patched document is not a JSON object")
    return result


# ---------------------------------------------------------------- RFC 7386 merge patch


def _merge_into(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            current = target.get(key)
            target[key] = _merge_into(current if isinstance(current, dict) else {}, value)
        else:
            target[key] = _copy(value)
    return target


def merge_patch(doc: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Apply an RFC 7386 JSON merge patch to a copy of `doc`."""
    if not isinstance(patch, dict):
        raise PatchError("a merge patch must be a JSON object")
    return _merge_into(_copy(doc), patch)


# ---------------------------------------------------------------- strategic merge patch

_DELETE: Final = object()
_PRIMITIVE_DELETE = "$deleteFromPrimitiveList/"
_ELEMENT_ORDER = "$setElementOrder/"


def _directive(patch: dict[str, Any]) -> str | None:
    value = patch.get("$patch")
    if value is None:
        return None
    if value not in ("replace", "delete", "merge"):
        raise PatchError(f"unknown patch type: {_go(value)} in map: {_go(patch)}")
    return str(value)


def _merge_struct(orig: dict[str, Any], patch: dict[str, Any], node: Node | None) -> Any:
    directive = _directive(patch)
    if directive == "delete":
        return _DELETE
    if directive == "replace":
        return _merge_struct({}, {k: v for k, v in patch.items() if k != "$patch"}, node)
    result = dict(orig)
    for key, value in patch.items():
        if key.startswith(_PRIMITIVE_DELETE):
            name = key[len(_PRIMITIVE_DELETE):]
            if not isinstance(value, list):
                raise PatchError(f"{key} must be a list, got {_go(value)}")
            current = result.get(name)
            if isinstance(current, list):
                result[name] = [x for x in current if x not in value]
        elif key.startswith(_ELEMENT_ORDER) and not isinstance(value, list):
            raise PatchError(f"{key} must be a list, got {_go(value)}")
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            result.pop(key, None)
            continue
        child = node.child(key) if node is not None else None
        current = result.get(key)
        if isinstance(value, dict):
            merged = _merge_struct(current if isinstance(current, dict) else {}, value, child)
            if merged is _DELETE:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(current if isinstance(current, list) else [], value, child)
        else:
            result[key] = value
    for key, order in patch.items():
        if key.startswith(_ELEMENT_ORDER):
            name = key[len(_ELEMENT_ORDER):]
            child = node.child(name) if node is not None else None
            merged_list, original = result.get(name), orig.get(name)
            if isinstance(merged_list, list) and child is not None:
                result[name] = _reorder(merged_list, order,
                                        original if isinstance(original, list) else [], child)
    retain = patch.get("$retainKeys")
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError(f"$retainKeys must be a list, got {_go(retain)}")
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _reorder(merged: list[Any], order: list[Any], original: list[Any], node: Node) -> list[Any]:
    """Apply `$setElementOrder`: items named in `order` come in that order; items only the
    server had keep their place relative to them (by their position in `original`)."""
    def ident(item: Any) -> Any:
        if node.key is not None:
            return item.get(node.key) if isinstance(item, dict) else None
        return orjson.dumps(item)

    wanted = {ident(x): i for i, x in enumerate(order)}
    before = {ident(x): i for i, x in enumerate(original)}
    listed = sorted((x for x in merged if ident(x) in wanted), key=lambda x: wanted[ident(x)])
    others = sorted((x for x in merged if ident(x) not in wanted),
                    key=lambda x: before.get(ident(x), len(before)))
    out: list[Any] = []
    while listed and others:
        position = before.get(ident(listed[0]))
        if position is None or position < before.get(ident(others[0]), len(before)):
            out.append(listed.pop(0))
        else:
            out.append(others.pop(0))
    return out + listed + others


def _is_replace_marker(item: Any) -> bool:
    return isinstance(item, dict) and item.get("$patch") == "replace" and len(item) == 1


def _merge_list(orig: list[Any], patch: list[Any], node: Node | None) -> list[Any]:
    if node is None or (node.key is None and not node.set_list):
        return [_copy(x) for x in patch]
    if any(_is_replace_marker(x) for x in patch):
        return _merge_list([], [x for x in patch if not _is_replace_marker(x)], node)
    if node.set_list:
        result = list(orig)
        for item in patch:
            if item not in result:
                result.append(_copy(item))
        return result
    key = node.key
    result = list(orig)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError(f"map: {_go(item)} does not contain declared merge key: {key}")
        match = [i for i, x in enumerate(result) if isinstance(x, dict) and x.get(key) == item[key]]
        if _directive(item) == "delete":
            result = [x for i, x in enumerate(result) if i not in match]
            continue
        merged = _merge_struct(result[match[0]] if match else {}, item, node)
        if merged is _DELETE:
            continue
        if match:
            result[match[0]] = merged
        else:
            result.append(merged)
    return result


def strategic_merge_patch(
    doc: dict[str, Any], patch: dict[str, Any], *, kind: str
) -> dict[str, Any]:
    """Apply a strategic merge patch to a copy of `doc`, a built-in object of `kind`."""
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    merged = _merge_struct(_copy(doc), patch, schema_for(kind))
    if merged is _DELETE:
        raise PatchError("a strategic merge patch cannot delete the whole object")
    result: dict[str, Any] = merged
    return result


def apply_merge(live: dict[str, Any], config: dict[str, Any], *, root: Node) -> dict[str, Any]:
    """Merge an applied configuration into a copy of `live` the way server-side apply does:
    maps merge, keyed lists merge item by item on all their key fields (container and service
    ports by port *and* protocol), set lists by union, anything else is replaced. Unlike a
    strategic merge patch, keys starting with `$` are ordinary data, not directives."""
    merged: dict[str, Any] = _apply_struct(_copy(live), config, root)
    return merged


def _apply_struct(
    orig: dict[str, Any], config: dict[str, Any], node: Node | None
) -> dict[str, Any]:
    result = dict(orig)
    for key, value in config.items():
        child = node.child(key) if node is not None else None
        current = result.get(key)
        if isinstance(value, dict):
            result[key] = _apply_struct(current if isinstance(current, dict) else {}, value, child)
        elif isinstance(value, list):
            result[key] = _apply_list(current if isinstance(current, list) else [], value, child)
        else:
            result[key] = value
    return result


def _apply_list(orig: list[Any], config: list[Any], node: Node | None) -> list[Any]:
    if node is not None and node.set_list:
        result = list(orig)
        result += [_copy(x) for x in config if x not in result]
        return result
    key = node.key if node is not None else None
    if node is None or key is None or not all(isinstance(x, dict) and key in x for x in config):
        atomic: list[Any] = _copy(config)
        return atomic
    result = list(orig)
    for item in config:
        ident = node.identity(item, full=True)
        match = next((i for i, x in enumerate(result) if isinstance(x, dict) and key in x
                      and node.identity(x, full=True) == ident), None)
        if match is None:
            result.append(_apply_struct({}, item, node))
        else:
            result[match] = _apply_struct(result[match], item, node)
    return result
