"""Kubernetes' own OpenAPI definitions, per minor version: the one source of built-in schemas.

`definitions(minor)` answers kube's component schemas (`io.k8s.api.core.v1.PodSpec`, …) for
Kubernetes 1.<minor>, in the form kube-apiserver serves them under `/openapi/v3`:
`$ref`s point at `#/components/schemas/<name>`, `IntOrString` is `format: int-or-string`
with `oneOf: [integer, string]`, `Quantity` is `oneOf: [string, number]`, no type is
nullable. Everything that needs a built-in schema reads it here: the embedded API server
(typed decoding, OpenAPI documents, `kubectl explain`), `asyncop.k8s` (kube's types as
fields of typed resources) and CRD generation (embedded kube types). docs/kubespec.md says
where the data comes from and why.

The data is the `kubernetes-validate` package's `v1.<minor>.0-local/_definitions.json`
(Apache-2.0; kube's OpenAPI converted to JSON Schema by openapi2jsonschema). That
conversion made every optional field nullable (`type: [string, "null"]`), rewrote
IntOrString and Quantity as `oneOf`s and pinned `apiVersion`/`kind` with an `enum`;
`_normalise` undoes exactly those three changes and nothing else, so what remains is kube's
text (descriptions, formats, `required`, `x-kubernetes-*` list and map types, group/version/
kind tags).

Invariants: a `Definitions` is immutable and shared (never mutate a schema it returns; copy
first); loading a minor is done once per process; a minor without data is a `KubeSpecError`
naming the minors there are. A leaf module: it imports nothing from asyncop.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "DEFAULT_MINOR",
    "INT_OR_STRING",
    "QUANTITY",
    "Definitions",
    "KubeSpecError",
    "definitions",
    "minors",
    "ref_name",
]

DEFAULT_MINOR = 33
"""The Kubernetes minor the embedded API server reports by default (kubectl 1.33 talks to it)
and the one `asyncop.k8s` types and generated CRDs follow."""

INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_REF_PREFIX = "#/components/schemas/"
_DATA_PACKAGE = "kubernetes_validate"
_DATA_DIR = "kubernetes-json-schema"
_VERSION_DIR = re.compile(r"v1\.(\d+)\.0-local")

Schema = dict[str, Any]


class KubeSpecError(LookupError):
    """No definitions for the requested minor (the message lists the available ones)."""


def ref_name(ref: str) -> str:
    """The definition name a `$ref` points at (`#/components/schemas/X` or `#/definitions/X`)."""
    return ref.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Definitions:
    """kube's component schemas of one minor version, and their group/version/kind index."""

    minor: int
    schemas: Mapping[str, Schema]
    _by_gvk: Mapping[tuple[str, str, str], str] = field(repr=False)

    def __getitem__(self, name: str) -> Schema:
        return self.schemas[name]

    def __contains__(self, name: object) -> bool:
        return name in self.schemas

    def __iter__(self) -> Iterator[str]:
        return iter(self.schemas)

    def __len__(self) -> int:
        return len(self.schemas)

    def for_kind(self, group: str, version: str, kind: str) -> str | None:
        """The definition name of a top-level kind (`("apps", "v1", "Deployment")` →
        `io.k8s.api.apps.v1.Deployment`), or None when this minor has no such kind."""
        return self._by_gvk.get((group, version, kind))

    def kinds(self) -> Mapping[tuple[str, str, str], str]:
        """(group, version, kind) → definition name, for every kind of this minor."""
        return self._by_gvk

    def resolve(self, schema: Schema) -> Schema:
        """`schema`, or the definition its `$ref` names (one level; never a copy)."""
        ref = schema.get("$ref")
        return self.schemas[ref_name(ref)] if isinstance(ref, str) else schema


def minors() -> tuple[int, ...]:
    """The minor versions whose definitions are installed, ascending."""
    return _available()


@functools.cache
def _available() -> tuple[int, ...]:
    root = importlib.resources.files(_DATA_PACKAGE).joinpath(_DATA_DIR)
    found = []
    for entry in root.iterdir():
        m = _VERSION_DIR.fullmatch(entry.name)
        if m:
            found.append(int(m.group(1)))
    return tuple(sorted(found))


def definitions(minor: int = DEFAULT_MINOR) -> Definitions:
    """kube 1.<minor>'s definitions, loaded and normalised once per process."""
    if minor not in _available():
        have = ", ".join(f"1.{m}" for m in _available())
        raise KubeSpecError(f"no Kubernetes OpenAPI definitions for 1.{minor} (have {have})")
    return _load(minor)


@functools.cache
def _load(minor: int) -> Definitions:
    path = (importlib.resources.files(_DATA_PACKAGE).joinpath(_DATA_DIR)
            .joinpath(f"v1.{minor}.0-local").joinpath("_definitions.json"))
    raw = orjson.loads(path.read_bytes())["$defs"]
    schemas: dict[str, Schema] = {}
    by_gvk: dict[tuple[str, str, str], str] = {}
    for name, schema in raw.items():
        schemas[name] = _definition(name, schema)
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            by_gvk.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return Definitions(minor=minor, schemas=schemas, _by_gvk=by_gvk)


def _definition(name: str, schema: Schema) -> Schema:
    if name == INT_OR_STRING:
        # kube's /openapi/v3 form of intstr.IntOrString
        return {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]}
    if name == QUANTITY:
        return {"oneOf": [{"type": "string"}, {"type": "number"}]}
    out: Schema = _normalise(schema)
    props = out.get("properties")
    if isinstance(props, dict) and out.get("x-kubernetes-group-version-kind"):
        for key in ("apiVersion", "kind"):  # the converter pinned them with an enum
            if isinstance(props.get(key), dict):
                props[key].pop("enum", None)
    return out


def _normalise(value: Any) -> Any:
    """Undo openapi2jsonschema's nullable types and `#/$defs/` refs, recursively."""
    if isinstance(value, dict):
        out: Schema = {}
        for key, item in value.items():
            if key == "type" and isinstance(item, list):
                types = [t for t in item if t != "null"]
                out[key] = types[0] if len(types) == 1 else types
            elif key == "$ref" and isinstance(item, str):
                out[key] = _REF_PREFIX + ref_name(item)
            elif key in ("properties", "patternProperties", "definitions"):
                # names here are field names, not keywords
                out[key] = {k: _normalise(v) for k, v in item.items()}
            else:
                out[key] = _normalise(item)
        return out
    if isinstance(value, list):
        return [_normalise(item) for item in value]
    return value
