"""One line for a field type asyncop cannot map, naming the model and the field.

pydantic refuses a field whose type it has no schema for (an arbitrary class, a
kubernetes_asyncio client model such as `V1JobTemplateSpec`) with a long
`PydanticSchemaGenerationError` when the class is made. `Model` catches it and raises
`unmapped_type_error(...)` instead, a `CRDError` of one line:

    CronJobSpec: job_template: V1JobTemplateSpec is a kubernetes_asyncio client model, not a
    type asyncop can map; use asyncop.k8s.batch_v1.JobTemplateSpec instead

The `kubernetes` client's models are pydantic models, so a class using them is made; they
fail when its CRD is generated (`client_model_problem`, through `pydantic_schema`), with the
same line: their schema is not kube's (no descriptions, list types or required fields).

For a client model, the replacement is found from the client's class name
(`V1JobTemplateSpec` → version `v1`, name `JobTemplateSpec`; `AdmissionregistrationV1…`
adds the group) among kube's GA definitions (`asyncop.kubespec`), placed by the one naming
rule of `asyncop.k8s` (`kubetypes.k8s_module`). Invariant: building the message never
raises; an annotation that cannot be inspected is skipped.
"""

from __future__ import annotations

import re
import typing
from typing import Any

from pydantic import BaseModel

from asyncop.crd.errors import CRDError
from asyncop.crd.kubetypes import k8s_module
from asyncop.kubespec import DEFAULT_MINOR, definitions

_CLIENTS = {"kubernetes_asyncio.client.models": "kubernetes_asyncio",
            "kubernetes.client.models": "kubernetes"}
_CLIENT_NAME = re.compile(r"(?P<group>[A-Z][a-z0-9]*)??(?P<version>V\d+(?:alpha\d+|beta\d+)?)"
                          r"(?P<name>[A-Z]\w*)")


def unmapped_type_error(model: type[BaseModel], exc: Exception) -> CRDError:
    """The one-line error for `model`, whose field type pydantic refused with `exc`."""
    text = str(exc)
    for field_name, culprit in _candidates(model):
        if repr(culprit) in text:
            return CRDError(f"{model.__name__}: {field_name}: {_problem(culprit)}")
    first = text.split("\n", 1)[0].split(". ", 1)[0]
    return CRDError(f"{model.__name__}: {first} (use a str/int/float/bool, list[...], "
                    "dict[str, ...] or a Model)")


def _problem(cls: type) -> str:
    return client_model_problem(cls) or (
        f"{cls.__name__} has no OpenAPI mapping (use a str/int/float/bool, list[...], "
        "dict[str, ...] or a Model)")


def client_model_problem(cls: type) -> str | None:
    """What is wrong with a kubernetes_asyncio or kubernetes client model as a field type
    (and the asyncop.k8s class to use instead); None for any other class."""
    client = _CLIENTS.get(cls.__module__.rpartition(".")[0])
    if client is None:
        return None
    homes = replacements(cls.__name__)
    if not homes:
        return (f"{cls.__name__} is a {client} client model, not a type asyncop can map; "
                "asyncop.k8s has Kubernetes' GA types only (use dict[str, Any] for it)")
    return (f"{cls.__name__} is a {client} client model, not a type asyncop can map; use "
            f"{' or '.join(homes)} instead")


def replacements(client_name: str) -> list[str]:
    """The asyncop.k8s classes for a client model's class name (`V1JobTemplateSpec` →
    `asyncop.k8s.batch_v1.JobTemplateSpec`); several when the name is ambiguous."""
    m = _CLIENT_NAME.fullmatch(client_name)
    if m is None:
        return []
    group = (m.group("group") or "").lower()
    suffix = f".{m.group('version').lower()}.{m.group('name')}"
    found = []
    for name in definitions(DEFAULT_MINOR):
        if not name.endswith(suffix):
            continue
        package = name.removesuffix(suffix)
        if group and not package.endswith(f".{group}"):
            continue
        module = k8s_module(name)
        if module is not None:
            found.append(f"asyncop.k8s.{module}.{m.group('name')}")
    return sorted(found)


def _candidates(model: type[BaseModel]) -> list[tuple[str, type]]:
    """(field name, class) for every class inside each field's annotation."""
    out: list[tuple[str, type]] = []
    fields = getattr(model, "__pydantic_fields__", None) or {}
    for name, info in fields.items():
        for cls in _classes(getattr(info, "annotation", None)):
            out.append((name, cls))
    return out


def _classes(annotation: Any, depth: int = 0) -> list[type]:
    if depth > 20:
        return []
    found: list[type] = [annotation] if isinstance(annotation, type) else []
    try:
        args = typing.get_args(annotation)
    except Exception:  # an annotation typing cannot take apart
        return found
    for arg in args:
        found.extend(_classes(arg, depth + 1))
    return found
