"""ConfigMaps and Secrets: kube's defaults, ValidateConfigMap(Update), ValidateSecret(Update).

- Keys are config keys (IsConfigMapKey), each problem a `data[key]` cause; a ConfigMap key
  may not be in both data and binaryData; all values together are at most 1 MiB (counted in
  bytes, binary values decoded).
- Secrets default to type Opaque; write-only `stringData` is folded into `data` (its values
  win, as kube's v1 conversion does) before validation, so its keys and size count there.
  Each built-in type has kube's requirements (tls.crt and tls.key, a `.dockerconfigjson` Go
  can unmarshal into a map, the service-account annotation, basic-auth's username or
  password, ssh-auth's key). `type` never changes.
- `immutable: true` freezes data, binaryData and itself.
Keys are visited in sorted order (kube walks a Go map, in no fixed order).
Invariant: defaults fill only absent fields (stringData aside, documented above);
validation is pure and reads a value of the wrong shape as empty.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.checks import IMMUTABLE_MSG, is_config_map_key
from asyncop.apiserver.builtin.fields import (
    Obj,
    as_dict,
    as_str,
    each,
    forbidden,
    invalid,
    required,
    too_long,
)
from asyncop.apiserver.builtin.gojson import unmarshal_map_error
from asyncop.apiserver.core.errors import cause

CONFIGMAPS = ("", "configmaps")
SECRETS = ("", "secrets")
MAX_SIZE = 1024 * 1024  # core.MaxSecretSize, also the ConfigMap limit
IMMUTABLE = "field is immutable when `immutable` is set"
REDACTED = "<secret contents redacted>"
SA_NAME = "kubernetes.io/service-account.name"


def _secret_defaults(obj: Obj, old: Obj | None) -> None:
    """SetDefaults_Secret, then Convert_v1_Secret_To_core_Secret's stringData merge."""
    if not obj.get("type"):
        obj["type"] = "Opaque"
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        data = obj["data"] = dict(data) if isinstance(data, dict) else {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def decoded(value: Any) -> bytes:
    """The bytes of a base64 data value (a value that is not base64 counts as its text)."""
    text = as_str(value)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text.encode()


def _maps(obj: Obj, fields: tuple[str, ...]) -> tuple[dict[str, Obj], list[StatusCause]]:
    """The key/value maps, and a refusal for one that is not a map (a shape kube's decoder
    refuses first)."""
    maps: dict[str, Obj] = {}
    out: list[StatusCause] = []
    for field in fields:
        value = obj.get(field)
        if value is not None and not isinstance(value, dict):
            out.append(cause(field, "FieldValueTypeInvalid", "Invalid value: must be a map"))
        maps[field] = as_dict(value)
    return maps, out


def validate_config_map(obj: Obj) -> list[StatusCause]:
    """ValidateConfigMap (after ValidateObjectMeta, which the Writer runs)."""
    maps, out = _maps(obj, ("data", "binaryData"))
    data, binary = maps["data"], maps["binaryData"]
    size = 0
    for key in sorted(data):
        out += each(f"data[{key}]", key, is_config_map_key(key))
        if key in binary:
            out.append(invalid(f"data[{key}]", key,
                               "duplicate of key present in binaryData"))
        size += len(as_str(data[key]).encode())
    for key in sorted(binary):
        out += each(f"binaryData[{key}]", key, is_config_map_key(key))
        size += len(decoded(binary[key]))
    if size > MAX_SIZE:
        out.append(too_long("[]", MAX_SIZE))  # kube's path: the root, printed "[]"
    return out


def validate_secret(obj: Obj) -> list[StatusCause]:
    """ValidateSecret (after ValidateObjectMeta)."""
    maps, out = _maps(obj, ("data",))
    data = maps["data"]
    size = 0
    for key in sorted(data):
        out += each(f"data[{key}]", key, is_config_map_key(key))
        size += len(decoded(data[key]))
    if size > MAX_SIZE:
        out.append(too_long("data", MAX_SIZE))
    return out + _secret_type_rules(obj, data)


def _secret_type_rules(obj: Obj, data: Obj) -> list[StatusCause]:
    stype = obj.get("type")
    if stype == "kubernetes.io/service-account-token":
        annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        if not as_str(annotations.get(SA_NAME)):
            return [required(f"metadata.annotations[{SA_NAME}]")]
    elif stype in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if stype == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        if key not in data:
            return [required(f"data[{key}]")]
        problem = unmarshal_map_error(decoded(data[key]))
        if problem is not None:
            return [invalid(f"data[{key}]", REDACTED, problem)]
    elif stype == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [required("data[username]"), required("data[password]")]
    elif stype == "kubernetes.io/ssh-auth":
        if not decoded(data.get("ssh-privatekey")):
            return [required("data[ssh-privatekey]")]
    elif stype == "kubernetes.io/tls":
        return [required(f"data[{key}]") for key in ("tls.crt", "tls.key")
                if key not in data]
    return []


def _immutable(obj: Obj, old: Obj, fields: tuple[str, ...]) -> list[StatusCause]:
    """The `immutable: true` rules of ValidateConfigMapUpdate / ValidateSecretUpdate."""
    if old.get("immutable") is not True:
        return []
    out: list[StatusCause] = []
    if obj.get("immutable") is not True:
        out.append(forbidden("immutable", IMMUTABLE))
    for field in fields:
        if as_dict(old.get(field)) != as_dict(obj.get(field)):
            out.append(forbidden(field, IMMUTABLE))
    return out


def _config_map(obj: Obj, old: Obj | None) -> list[StatusCause]:
    out = _immutable(obj, old, ("data", "binaryData")) if old is not None else []
    return out + validate_config_map(obj)


def _secret(obj: Obj, old: Obj | None) -> list[StatusCause]:
    out: list[StatusCause] = []
    if old is not None:
        if old.get("type") != obj.get("type"):  # ValidateImmutableField
            out.append(invalid("type", obj.get("type"), IMMUTABLE_MSG))
        out += _immutable(obj, old, ("data",))
    return out + validate_secret(obj)


DEFAULTS: dict[tuple[str, str], Any] = {SECRETS: _secret_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {CONFIGMAPS: _config_map, SECRETS: _secret}
