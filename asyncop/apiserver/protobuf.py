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

Supported: Namespace, Secret, ConfigMap, ServiceAccount, core/v1 Event, coordination/v1 Lease and
DeleteOptions (the body of a protobuf DELETE), each with the full ObjectMeta. Any other kind
raises `ProtobufError` (the server answers 415). Unknown field numbers are skipped, as protobuf
requires.

No encoder: every client we serve (Helm, kubectl, client-go) accepts JSON responses to an
`Accept: application/vnd.kubernetes.protobuf,application/json` request (helm-wire.md §2), so
responses are always JSON.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

import orjson

__all__ = ["MAGIC", "ProtobufError", "decode", "supported_kinds"]

MAGIC: Final = b"k8s\x00"


class ProtobufError(ValueError):
    """A protobuf body the server cannot decode; `message` is meant for the client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# A field type is a scalar name or a tuple: ("msg", Schema), ("map", scalar), ("rep", type).
# Scalars: str (omit empty), bytes (base64), int (keep zero), int0 (omit zero), bool,
# time, microtime (omit zero), fieldsv1 (raw JSON).
Schema = Mapping[int, tuple[str, Any]]

_TIME: Schema = {1: ("seconds", "int"), 2: ("nanos", "int")}
_OWNER_REF: Schema = {
    1: ("kind", "str"), 3: ("name", "str"), 4: ("uid", "str"), 5: ("apiVersion", "str"),
    6: ("controller", "bool"), 7: ("blockOwnerDeletion", "bool"),
}
_MANAGED: Schema = {
    1: ("manager", "str"), 2: ("operation", "str"), 3: ("apiVersion", "str"),
    4: ("time", "time"), 6: ("fieldsType", "str"), 7: ("fieldsV1", "fieldsv1"),
    8: ("subresource", "str"),
}
OBJECT_META: Schema = {
    1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str"),
    4: ("selfLink", "str"), 5: ("uid", "str"), 6: ("resourceVersion", "str"),
    7: ("generation", "int0"), 8: ("creationTimestamp", "time"),
    9: ("deletionTimestamp", "time"), 10: ("deletionGracePeriodSeconds", "int"),
    11: ("labels", ("map", "str")), 12: ("annotations", ("map", "str")),
    13: ("ownerReferences", ("rep", ("msg", _OWNER_REF))),
    14: ("finalizers", ("rep", "str")), 17: ("managedFields", ("rep", ("msg", _MANAGED))),
}
_META: Final = ("metadata", ("msg", OBJECT_META))
_OBJECT_REF: Schema = {
    1: ("kind", "str"), 2: ("namespace", "str"), 3: ("name", "str"), 4: ("uid", "str"),
    5: ("apiVersion", "str"), 6: ("resourceVersion", "str"), 7: ("fieldPath", "str"),
}
_LOCAL_REF: Schema = {1: ("name", "str")}

NAMESPACE: Schema = {
    1: _META,
    2: ("spec", ("msg", {1: ("finalizers", ("rep", "str"))})),
    3: ("status", ("msg", {1: ("phase", "str")})),
}
SECRET: Schema = {
    1: _META, 2: ("data", ("map", "bytes")), 3: ("type", "str"),
    4: ("stringData", ("map", "str")), 5: ("immutable", "bool"),
}
CONFIG_MAP: Schema = {
    1: _META, 2: ("data", ("map", "str")), 3: ("binaryData", ("map", "bytes")),
    4: ("immutable", "bool"),
}
SERVICE_ACCOUNT: Schema = {
    1: _META, 2: ("secrets", ("rep", ("msg", _OBJECT_REF))),
    3: ("imagePullSecrets", ("rep", ("msg", _LOCAL_REF))),
    4: ("automountServiceAccountToken", "bool"),
}
EVENT: Schema = {
    1: _META, 2: ("involvedObject", ("msg", _OBJECT_REF)), 3: ("reason", "str"),
    4: ("message", "str"), 5: ("source", ("msg", {1: ("component", "str"), 2: ("host", "str")})),
    6: ("firstTimestamp", "time"), 7: ("lastTimestamp", "time"), 8: ("count", "int0"),
    9: ("type", "str"), 10: ("eventTime", "microtime"),
    11: ("series", ("msg", {1: ("count", "int0"), 2: ("lastObservedTime", "microtime")})),
    12: ("action", "str"), 13: ("related", ("msg", _OBJECT_REF)),
    14: ("reportingComponent", "str"), 15: ("reportingInstance", "str"),
}
LEASE: Schema = {
    1: _META,
    2: ("spec", ("msg", {
        1: ("holderIdentity", "str"), 2: ("leaseDurationSeconds", "int"),
        3: ("acquireTime", "microtime"), 4: ("renewTime", "microtime"),
        5: ("leaseTransitions", "int"), 6: ("strategy", "str"), 7: ("preferredHolder", "str"),
    })),
}
DELETE_OPTIONS: Schema = {
    1: ("gracePeriodSeconds", "int"),
    2: ("preconditions", ("msg", {1: ("uid", "str"), 2: ("resourceVersion", "str")})),
    3: ("orphanDependents", "bool"), 4: ("propagationPolicy", "str"),
    5: ("dryRun", ("rep", "str")),
    6: ("ignoreStoreReadErrorWithClusterBreakingPotential", "bool"),
}

_KINDS: Final[Mapping[str, tuple[frozenset[str], Schema]]] = {
    "Namespace": (frozenset({"v1"}), NAMESPACE),
    "Secret": (frozenset({"v1"}), SECRET),
    "ConfigMap": (frozenset({"v1"}), CONFIG_MAP),
    "ServiceAccount": (frozenset({"v1"}), SERVICE_ACCOUNT),
    "Event": (frozenset({"v1"}), EVENT),
    "Lease": (frozenset({"coordination.k8s.io/v1"}), LEASE),
    "DeleteOptions": (frozenset({"v1", "meta.k8s.io/v1", ""}), DELETE_OPTIONS),
}


def supported_kinds() -> frozenset[str]:
    return frozenset(_KINDS)


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
    parts = _message(raw, _TIME)
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


def _scalar(kind: str, wire: int, value: Any) -> Any:
    if kind in ("str", "bytes", "time", "microtime", "fieldsv1"):
        if wire != 2:
            raise ProtobufError("expected a length-delimited protobuf field")
    elif wire != 0:
        raise ProtobufError("expected a varint protobuf field")
    if kind == "str":
        return _text(value)
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind in ("int", "int0"):
        return _signed(value)
    if kind == "bool":
        return bool(value)
    if kind in ("time", "microtime"):
        return _format_time(value, micro=kind == "microtime")
    if kind == "fieldsv1":
        raw = _message(value, {1: ("raw", "bytes")}).get("raw")
        try:
            return orjson.loads(base64.b64decode(raw)) if raw else {}
        except orjson.JSONDecodeError as exc:
            raise ProtobufError("managedFields fieldsV1 is not JSON") from exc
    raise ProtobufError(f"unknown field type {kind}")  # pragma: no cover


def _omit(kind: Any, value: Any) -> bool:
    return value is None or (kind == "str" and value == "") or (kind == "int0" and value == 0)


def _message(buf: bytes, schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, wire, value in _fields(buf):
        spec = schema.get(number)
        if spec is None:
            continue  # unknown fields are skipped
        name, kind = spec
        if isinstance(kind, tuple) and kind[0] == "rep":
            elem = kind[1]
            item = (_message(_bytes(wire, value), elem[1]) if isinstance(elem, tuple)
                    else _scalar(elem, wire, value))
            out.setdefault(name, []).append(item)
        elif isinstance(kind, tuple) and kind[0] == "map":
            entry = _fields(_bytes(wire, value))
            key = next((_text(v) for n, _, v in entry if n == 1), "")
            val = next((_scalar(kind[1], w, v) for n, w, v in entry if n == 2), "")
            out.setdefault(name, {})[key] = val
        elif isinstance(kind, tuple) and kind[0] == "msg":
            out[name] = _message(_bytes(wire, value), kind[1])
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


_TYPE_META: Schema = {1: ("apiVersion", "str"), 2: ("kind", "str")}


def decode(body: bytes) -> dict[str, Any]:
    """Decode a `k8s\\x00` protobuf request body into the object's JSON dict."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body is not a Kubernetes protobuf message (no k8s\\x00 prefix)")
    type_meta: dict[str, Any] = {}
    raw = b""
    encoding = ""
    for number, wire, value in _fields(body[len(MAGIC):]):
        if number == 1:
            type_meta = _message(_bytes(wire, value), _TYPE_META)
        elif number == 2:
            raw = _bytes(wire, value)
        elif number == 3:
            encoding = _text(_bytes(wire, value))
    if encoding:
        raise ProtobufError(f"protobuf content encoding {encoding!r} is not supported")
    kind = str(type_meta.get("kind", ""))
    api_version = str(type_meta.get("apiVersion", ""))
    known = _KINDS.get(kind)
    if known is None or api_version not in known[0]:
        name = kind or "objects without a kind"
        raise ProtobufError(f"protobuf bodies are not supported for {name}; send JSON")
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind} if api_version else {
        "kind": kind}
    obj.update(_message(raw, known[1]))
    return obj
