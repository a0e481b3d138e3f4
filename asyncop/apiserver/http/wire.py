"""HTTP plumbing shared by the route modules: parsed request target, bodies, responses.

`Target` is the parsed resource URL (type, namespace, name, subresource, verb). Bodies are
decoded by Content-Type (JSON by default, YAML for apply/yaml, protobuf through the protobuf
helper); responses are orjson bytes with a trailing newline. Invariant: every error leaves
this layer as a metav1.Status body with the ApiError's code.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from asyncop.api import ApiError
from asyncop.apiserver.builtin.gofmt import go_quote
from asyncop.apiserver.core import errors
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.http import bodylimits, yamlbody
from asyncop.apiserver.protobuf.decode import ProtobufError, decode

JSON_CT = "application/json"
TABLE_MARK = "as=Table"
TABLE_CT = "application/json;as=Table;v=v1;g=meta.k8s.io"


@dataclass(frozen=True, slots=True)
class Target:
    rt: ResourceType
    namespace: str | None  # None: all namespaces (or cluster-scoped)
    name: str | None
    subresource: str
    watch_path: bool  # the deprecated /watch/ prefix


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def json_response(obj: Any, *, status: int = 200, warnings: list[str] | None = None,
                  content_type: str = JSON_CT) -> web.Response:
    resp = web.Response(body=dumps(obj), status=status)
    resp.headers["Content-Type"] = content_type
    if warnings:
        for warning in warnings:
            resp.headers.add("Warning", f'299 - "{_escape(warning)}"')
    return resp


def _escape(text: str) -> str:
    """Warning text as a quoted header value: control characters (a field name in an
    "unknown field" warning may hold a newline) become spaces, as kube's warning recorder
    does, so the header can be written at all."""
    text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text) \
        if not text.isprintable() else text
    return text.replace("\\", "\\\\").replace('"', '\\"')


def error_response(err: ApiError) -> web.Response:
    status = dict(err.status)
    status.setdefault("code", err.code)
    resp = json_response(status, status=err.code or 500)
    retry = (status.get("details") or {}).get("retryAfterSeconds")
    if retry is None and err.retry_after is not None:
        retry = int(err.retry_after)
    if retry is not None and (err.code == 429 or err.code >= 500):
        resp.headers["Retry-After"] = str(retry)
    return resp


def wants_table(request: web.Request) -> bool:
    return TABLE_MARK in request.headers.get("Accept", "")


def wants_metadata(request: web.Request) -> bool:
    """Accept `as=PartialObjectMetadata[List]` (metadata-only clients and informers)."""
    return "as=PartialObjectMetadata" in request.headers.get("Accept", "")


def partial_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {}}


def check_acceptable(request: web.Request) -> None:
    """406 when the client accepts only media types we cannot produce (T-2)."""
    accept = request.headers.get("Accept", "")
    if not accept:
        return
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in ("application/json", "*/*", "application/*", "application/yaml", "") or \
                media.endswith("+json"):
            return
    raise errors.not_acceptable()


async def read_body(request: web.Request, *, allow_yaml: bool = False) -> Any:
    raw = await request.read()
    content_type = request.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
    return decode_body(raw, content_type, allow_yaml=allow_yaml)


YAML_TYPES = ("application/yaml", "application/apply-patch+yaml")
_KEY_TOKEN = re.compile(rb'"\s*:')


def decode_yaml_checked(raw: bytes, content_type: str, *, allow_yaml: bool = False,
                        ) -> tuple[Any, list[str]]:
    """`decode_body`, plus go-yaml's duplicate-key lines (`line 3: key "a" already set in
    map`) when the body is YAML. A YAML body that is JSON takes the fast JSON parse; only when
    it holds more key tokens than the parsed value has keys (a repeated key) is it decoded
    again as YAML to name them, so the common case costs one key count."""
    if not (content_type in YAML_TYPES or allow_yaml):
        return decode_body(raw, content_type), []
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        decoded = yamlbody.load(raw, max_bytes=bodylimits.MAX_DECODED_BYTES)
        return decoded.value, decoded.duplicates
    bodylimits.check_json(raw, value)
    if len(_KEY_TOKEN.findall(raw)) > _count_keys(value):
        return value, yamlbody.load(raw, max_bytes=bodylimits.MAX_DECODED_BYTES).duplicates
    return value, []


def _count_keys(value: Any) -> int:
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += len(node)
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))
    return count


def decode_body(raw: bytes, content_type: str, *, allow_yaml: bool = False) -> Any:
    """The decoded body; a 400 Status for malformed or too deeply nested input (bodylimits)."""
    if content_type == "application/vnd.kubernetes.protobuf":
        try:
            value = decode(raw)
        except ProtobufError as exc:
            raise errors.unsupported_media_type(
                "application/json, application/yaml, application/vnd.kubernetes.protobuf"
            ) from exc
        bodylimits.check_value(value)
        return value
    if content_type in ("application/yaml", "application/apply-patch+yaml") or allow_yaml:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return yamlbody.load(raw, max_bytes=bodylimits.MAX_DECODED_BYTES).value
        bodylimits.check_json(raw, value)
        return value
    if content_type not in ("", "application/json", "application/json-patch+json",
                            "application/merge-patch+json",
                            "application/strategic-merge-patch+json", "*/*", "text/plain"):
        raise errors.unsupported_media_type(
            "application/json, application/yaml, application/vnd.kubernetes.protobuf")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit exceeded" in str(exc):
            raise bodylimits.too_deep() from exc
        raise errors.bad_request(
            f"couldn't get version/kind; json parse error: {exc}") from exc
    bodylimits.check_json(raw, value)
    return value


def query_bool(request: web.Request, key: str) -> bool:
    return request.query.get(key, "").lower() in ("true", "1")


def dry_run(request: web.Request) -> bool:
    values = request.query.getall("dryRun", [])
    for value in values:
        if value != "All":
            raise errors.bad_request(f'dryRun: Unsupported value: "{value}": supported values: '
                                     '"All"')
    return bool(values)


FIELD_MANAGER_MAX = 128
_OPTIONS_KIND = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions"}


def field_manager(request: web.Request) -> str:
    """`?fieldManager=` (checked as kube checks it), else the User-Agent's product name (as
    the real server does)."""
    manager = request.query.get("fieldManager")
    if manager:
        check_field_manager(manager, _OPTIONS_KIND.get(request.method, "PatchOptions"))
        return manager
    agent = request.headers.get("User-Agent", "")
    return agent.split("/", 1)[0][:FIELD_MANAGER_MAX] or "unknown"


def check_field_manager(manager: str, options_kind: str) -> None:
    """kube's ValidateFieldManager: at most 128 bytes, printable characters only — a 422 on
    the request's options (`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long:
    may not be more than 128 bytes`), on create, update, patch and apply alike."""
    causes = []
    if len(manager.encode()) > FIELD_MANAGER_MAX:
        causes.append(errors.cause("fieldManager", "FieldValueTooLong",
                                   f"Too long: may not be more than {FIELD_MANAGER_MAX} bytes"))
    position = 0
    for char in manager:
        if not char.isprintable():
            causes.append(errors.cause(
                "fieldManager", "FieldValueInvalid",
                f"Invalid value: {go_quote(manager)}: invalid character "
                f"U+{ord(char):04X} (at position {position})"))
        position += len(char.encode())
    if causes:
        raise errors.invalid_options(options_kind, causes)


def field_validation(request: web.Request) -> str:
    value = request.query.get("fieldValidation", "Warn") or "Warn"
    if value not in ("Ignore", "Warn", "Strict"):
        raise errors.bad_request(
            f'fieldValidation: Unsupported value: "{value}": supported values: "Ignore", '
            '"Strict", "Warn"')
    return value
