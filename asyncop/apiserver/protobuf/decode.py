"""Decode Kubernetes protobuf request bodies into the JSON dicts the server stores.

client-go typed clientsets (kubectl >= 1.32 `create namespace|configmap|secret…`, Helm's release
storage, leader election, event recorders) send `Content-Type: application/vnd.kubernetes.protobuf`
and never fall back to JSON. The body is the envelope `k8s\\x00` followed by a `runtime.Unknown`
message {1: typeMeta {1: apiVersion, 2: kind}, 2: raw (the object message), 3: contentEncoding,
4: contentType}. A hand-written reader of the protobuf wire format (varint, 64-bit,
length-delimited, 32-bit) walks the object with a field-number table per message type
(k8s.io/api and apimachinery `generated.proto`), producing exactly the JSON the same object
would have in `application/json`: bytes fields are base64 strings, Time is RFC 3339 seconds,
MicroTime has 6 fractional digits, and zero values Go omits from JSON (`omitempty`) are dropped.

Supported: Namespace, Secret, ConfigMap, ServiceAccount, Event (core/v1 and events.k8s.io/v1),
coordination/v1 Lease and DeleteOptions (the body of a protobuf DELETE), each with the full
ObjectMeta, where unknown field numbers are skipped as protobuf requires; and Deployment,
Service, Job, CronJob, Role, ClusterRole, RoleBinding and ClusterRoleBinding with the fields
`kubectl create ...` sends, where any other field is an error rather than silently lost data
(tables in `schemas`). Any other kind raises `ProtobufError` (the server answers 415).

No encoder: every client we serve (Helm, kubectl, client-go) accepts JSON responses to an
`Accept: application/vnd.kubernetes.protobuf,application/json` request (docs/apiserver.md,
"What Helm sends"), so responses are always JSON.
"""

from __future__ import annotations

import base64
import struct
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from asyncop.apiserver.protobuf.schemas import KINDS, TIME, TYPE_META, Schema

__all__ = ["MAGIC", "ProtobufError", "decode", "supported_kinds"]

MAGIC: Final = b"k8s\x00"


class ProtobufError(ValueError):
    """A protobuf body the server cannot decode; `message` is meant for the client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def supported_kinds() -> frozenset[tuple[str, str]]:
    """The (apiVersion, kind) pairs `decode` understands."""
    return frozenset(KINDS)


# ---------------------------------------------------------------- wire format


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated protobuf varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("protobuf varint is too long")


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) triples; value is int or bytes."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            if pos + 8 > len(buf):
                raise ProtobufError("truncated protobuf fixed64")
            value, pos = struct.unpack_from("<Q", buf, pos)[0], pos + 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise ProtobufError("truncated protobuf length-delimited field")
            value, pos = buf[pos:pos + size], pos + size
        elif wire == 5:
            if pos + 4 > len(buf):
                raise ProtobufError("truncated protobuf fixed32")
            value, pos = struct.unpack_from("<I", buf, pos)[0], pos + 4
        else:
            raise ProtobufError(f"unsupported protobuf wire type {wire}")
        if number == 0:
            raise ProtobufError("invalid protobuf field number 0")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _format_time(raw: bytes, *, micro: bool) -> str | None:
    parts = _message(raw, TIME)
    seconds, nanos = int(parts.get("seconds", 0)), int(parts.get("nanos", 0))
    if seconds == 0 and nanos == 0:
        return None
    moment = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _text(value: Any) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a length-delimited string field")
    try:
        return value.decode()
    except UnicodeDecodeError as exc:
        raise ProtobufError("invalid UTF-8 in a protobuf string field") from exc


_LENGTH_DELIMITED: Final = frozenset(
    {"str", "strk", "bytes", "time", "microtime", "fieldsv1", "intorstr", "quantity"})


class _UnknownField(ProtobufError):
    def __init__(self, number: int) -> None:
        super().__init__(f"unknown protobuf field {number}")
        self.number = number


def _scalar(kind: str, wire: int, value: Any) -> Any:
    if kind in _LENGTH_DELIMITED:
        if wire != 2:
            raise ProtobufError("expected a length-delimited protobuf field")
    elif wire != 0:
        raise ProtobufError("expected a varint protobuf field")
    if kind in ("str", "strk"):
        return _text(value)
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind in ("int", "int0"):
        return _signed(value)
    if kind in ("bool", "bool0"):
        return bool(value)
    if kind in ("time", "microtime"):
        return _format_time(value, micro=kind == "microtime")
    if kind == "quantity":
        return _message(value, {1: ("string", "str")}).get("string", "")
    if kind == "intorstr":
        parts = _message(value, {1: ("type", "int"), 2: ("intVal", "int"),
                                 3: ("strVal", "str")})
        return parts.get("strVal", "") if parts.get("type") == 1 else parts.get("intVal", 0)
    if kind == "fieldsv1":
        raw = _message(value, {1: ("raw", "bytes")}).get("raw")
        try:
            return orjson.loads(base64.b64decode(raw)) if raw else {}
        except orjson.JSONDecodeError as exc:
            raise ProtobufError("managedFields fieldsV1 is not JSON") from exc
    raise ProtobufError(f"unknown field type {kind}")  # pragma: no cover


def _omit(kind: Any, value: Any) -> bool:
    return (value is None or (kind == "str" and value == "") or (kind == "int0" and value == 0)
            or (kind == "bool0" and value is False))


def _message(buf: bytes, schema: Schema, *, strict: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, wire, value in _fields(buf):
        spec = schema.get(number)
        if spec is None:
            if strict:
                raise _UnknownField(number)
            continue  # unknown fields are skipped
        name, kind = spec
        if isinstance(kind, tuple) and kind[0] == "rep":
            elem = kind[1]
            item = (_message(_bytes(wire, value), elem[1], strict=strict)
                    if isinstance(elem, tuple) else _scalar(elem, wire, value))
            out.setdefault(name, []).append(item)
        elif isinstance(kind, tuple) and kind[0] == "map":
            entry = _fields(_bytes(wire, value))
            key = next((_text(v) for n, _, v in entry if n == 1), "")
            val = next((_scalar(kind[1], w, v) for n, w, v in entry if n == 2), "")
            out.setdefault(name, {})[key] = val
        elif isinstance(kind, tuple) and kind[0] == "msg":
            out[name] = _message(_bytes(wire, value), kind[1], strict=strict)
        else:
            decoded = _scalar(kind, wire, value)
            if _omit(kind, decoded):
                out.pop(name, None)
            else:
                out[name] = decoded
    return out


def _bytes(wire: int, value: Any) -> bytes:
    if wire != 2 or not isinstance(value, bytes):
        raise ProtobufError("expected a length-delimited protobuf field")
    return value


def decode(body: bytes) -> dict[str, Any]:
    """Decode a `k8s\\x00` protobuf request body into the object's JSON dict."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body is not a Kubernetes protobuf message (no k8s\\x00 prefix)")
    type_meta: dict[str, Any] = {}
    raw = b""
    encoding = ""
    for number, wire, value in _fields(body[len(MAGIC):]):
        if number == 1:
            type_meta = _message(_bytes(wire, value), TYPE_META)
        elif number == 2:
            raw = _bytes(wire, value)
        elif number == 3:
            encoding = _text(_bytes(wire, value))
    if encoding:
        raise ProtobufError(f"protobuf content encoding {encoding!r} is not supported")
    kind = str(type_meta.get("kind", ""))
    api_version = str(type_meta.get("apiVersion", ""))
    known = KINDS.get((api_version, kind))
    if known is None:
        name = kind or "objects without a kind"
        raise ProtobufError(f"protobuf bodies are not supported for {name}; send JSON")
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind} if api_version else {
        "kind": kind}
    try:
        obj.update(_message(raw, known.schema, strict=known.strict))
    except _UnknownField as exc:
        raise ProtobufError(f"protobuf field {exc.number} of a {kind} body is not supported; "
                            "send JSON") from exc
    return obj
