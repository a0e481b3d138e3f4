"""ConfigMaps and Secrets: keys, `immutable`, Secret `type` and `stringData`.

Invariant: defaults fill only absent fields (Secret `stringData` is write-only and folded
into `data`); validation is pure.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from asyncop.api import StatusCause
from asyncop.apiserver.builtin.fields import Obj
from asyncop.apiserver.core.errors import cause, quote

CONFIGMAPS = ("", "configmaps")
SECRETS = ("", "secrets")
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


def _secret_defaults(obj: Obj, old: Obj | None) -> None:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        if not isinstance(data, dict):
            data = obj["data"] = {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


def _config(obj: Obj, old: Obj | None, *, secret: bool) -> list[StatusCause]:
    out: list[StatusCause] = []
    data = obj.get("data") or {}
    binary = obj.get("binaryData") or {}
    for field, values in (("data", data), ("binaryData", binary)):
        if not isinstance(values, dict):
            out.append(cause(field, "FieldValueTypeInvalid", "Invalid value: must be a map"))
            continue
        for key in values:
            if len(key) > 253 or not _CONFIG_KEY.match(key):
                out.append(cause(f"{field}[{key}]", "FieldValueInvalid",
                                 f"Invalid value: {quote(key)}: a valid config key must consist "
                                 "of alphanumeric characters, '-', '_' or '.'"))
    if isinstance(data, dict) and isinstance(binary, dict):
        for key in set(data) & set(binary):
            out.append(cause(f"data[{key}]", "FieldValueInvalid",
                             f"Invalid value: {quote(key)}: duplicate of key present in "
                             "binaryData"))
    if old is None:
        return out
    if old.get("immutable") is True:
        if obj.get("immutable") is not True:
            out.append(cause("immutable", "FieldValueForbidden",
                             "Forbidden: field is immutable when `immutable` is set"))
        for field in ("data", "binaryData"):
            if (old.get(field) or {}) != (obj.get(field) or {}):
                out.append(cause(field, "FieldValueForbidden",
                                 "Forbidden: field is immutable when `immutable` is set"))
    if secret and old.get("type") != obj.get("type"):
        out.append(cause("type", "FieldValueInvalid",
                         f"Invalid value: {quote(obj.get('type'))}: field is immutable"))
    return out


DEFAULTS: dict[tuple[str, str], Any] = {SECRETS: _secret_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {
    CONFIGMAPS: lambda obj, old: _config(obj, old, secret=False),
    SECRETS: lambda obj, old: _config(obj, old, secret=True),
}
