"""List options: resourceVersion/resourceVersionMatch rules, limits and continue tokens.

A continue token is base64url(JSON{"v","rv","start","s","o"}): the list's resourceVersion,
the next key (informational), the id of the stored snapshot and the offset in it. Invariants:
every page of one list is cut from the same snapshot and reports the first page's rv; a
snapshot id is random and a snapshot serves only lists of the scope it was cut for
(resource, namespace, selectors), so a forged or borrowed token reads nothing the request
itself could not (kube's tokens hold a key relative to the requested resource's prefix,
which has the same effect).
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from asyncop.apiserver.core import errors


def check_rvm(rvm: str, rv: str | None, token: str) -> None:
    if not rvm:
        return
    if rvm not in ("NotOlderThan", "Exact"):
        raise errors.invalid_options("ListOptions", [errors.cause(
            "resourceVersionMatch", "FieldValueNotSupported",
            f'Unsupported value: "{rvm}": supported values: "Exact", "NotOlderThan", ""')])
    if token:
        raise errors.invalid_options("ListOptions", [errors.cause(
            "resourceVersionMatch", "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden when continue is provided")])
    if not rv:
        raise errors.invalid_options("ListOptions", [errors.cause(
            "resourceVersionMatch", "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided")])
    if rvm == "Exact" and rv == "0":
        raise errors.invalid_options("ListOptions", [errors.cause(
            "resourceVersionMatch", "FieldValueForbidden",
            'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"')])


def parse_rv(value: str | None) -> int | None:
    if not value:
        return None
    try:
        rv = int(value)
    except ValueError:
        raise errors.bad_request(f'invalid resource version "{value}"') from None
    return rv if rv > 0 else None


def parse_limit(value: str | None) -> int:
    if not value:
        return 0
    try:
        return max(0, int(value))
    except ValueError:
        raise errors.bad_request(f'invalid limit "{value}"') from None


def encode_token(rv: int, snap: str, offset: int, next_meta: dict[str, Any]) -> str:
    start = f"{next_meta.get('namespace') or ''}/{next_meta['name']}"
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start, "s": snap, "o": offset})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_token(token: str) -> tuple[int, str, int]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        rv, snap, offset = int(data["rv"]), str(data["s"]), int(data["o"])
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise errors.bad_request("continue key is not valid: illegal base64 data") from None
    if offset < 0 or rv < 0:
        raise errors.bad_request("continue key is not valid: incorrect encoded start "
                                 "resourceVersion (version meta.k8s.io/v1)")
    return rv, snap, offset
