"""Serving `/openapi/v2` and `/openapi/v3` as kube-apiserver does, from cached documents.

kube-openapi's handlers (kube: handler.OpenAPIService and handler3.OpenAPIService) answer:

- `/openapi/v2`: JSON or gnostic protobuf by the Accept header (`*/*` and no header: JSON;
  `application/com.github.proto-openapi.spec.v2[@.]v1.0+protobuf`: protobuf, answered with
  the `.v1.0` Content-Type), else 406; an `ETag` (the SHA-512 of the JSON, upper-case hex,
  quoted) and `Vary: Accept`, and 304 when `If-None-Match` names it;
- `/openapi/v3`: the index, `{"paths": {"apis/apps/v1": {"serverRelativeURL":
  "/openapi/v3/apis/apps/v1?hash=<etag>"}}}`;
- `/openapi/v3/<gv>`: the JSON document; with `?hash=` equal to its ETag it is marked
  `Cache-Control: public, immutable` for a year; with a stale hash, a 301 to the current
  URL; 304 on a matching `If-None-Match`; an unknown group/version is 404.

Cost: a document is built when the served types it depends on change
(a CRD comes or goes), never per request; one group/version's document is rebuilt only when
its own types change, the v2 protobuf only when asked for after a change. A state is
recognised by the identity of the registry's ResourceTypes (immutable; a re-registered CRD
yields new ones), kept referenced so identities are never reused.

Invariants: `OpenAPIService` is used from the event loop only; answers are `Served` values
(status, headers, body) the HTTP layer writes out unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime

import orjson

from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.openapi.documents import (
    group_versions,
    gv_key,
    kube_minor,
    v2_document,
    v3_document,
)
from asyncop.apiserver.openapi.gnostic import encode_document

__all__ = ["PROTO_CONTENT_TYPE", "OpenAPIService", "Served"]

PROTO_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_PROTO_SUBTYPES = ("com.github.proto-openapi.spec.v2@v1.0+protobuf",
                   "com.github.proto-openapi.spec.v2.v1.0+protobuf")
_JSON = "application/json"


@dataclass(frozen=True, slots=True)
class Served:
    status: int
    headers: Mapping[str, str]
    body: bytes = b""


@dataclass(slots=True)
class _Doc:
    """One serialized document and the types it was built from (identity-compared)."""

    types: tuple[ResourceType, ...]
    key: tuple[object, ...]
    body: bytes
    etag: str
    proto: bytes | None = field(default=None)


def _etag(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


def _accepts(accept: str) -> list[tuple[str, str]]:
    """Accept clauses as (type, subtype), by descending q, as goautoneg orders them."""
    clauses: list[tuple[float, int, str, str]] = []
    for index, part in enumerate((accept or "*/*").split(",")):
        media, *params = (s.strip() for s in part.split(";"))
        kind, _, sub = media.partition("/")
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if kind and q > 0:
            clauses.append((-q, index, kind, sub or "*"))
    return [(k, s) for _, _, k, s in sorted(clauses)]


def _not_modified(doc: _Doc, if_none_match: str) -> bool:
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return f'"{doc.etag}"' in tags or "*" in tags


class OpenAPIService:
    """The OpenAPI documents of one server, rebuilt only when the served types change."""

    def __init__(self) -> None:
        self._gv: dict[str, _Doc] = {}
        self._v2: _Doc | None = None

    @staticmethod
    def _key(types: Sequence[ResourceType], minor: int, server_version: str
             ) -> tuple[object, ...]:
        return (minor, server_version, *map(id, types))

    def _group(self, types: Sequence[ResourceType], group: str, version: str, *, minor: int,
               server_version: str) -> _Doc:
        mine = tuple(t for t in types if t.group == group and t.version == version)
        key = self._key(mine, minor, server_version)
        name = gv_key(group, version)
        doc = self._gv.get(name)
        if doc is None or doc.key != key:
            body = orjson.dumps(v3_document(mine, group, version, minor=minor,
                                            server_version=server_version),
                                option=orjson.OPT_SORT_KEYS)
            doc = self._gv[name] = _Doc(mine, key, body, _etag(body))
        return doc

    def _groups(self, types: Sequence[ResourceType], minor: int, server_version: str
                ) -> dict[str, _Doc]:
        docs = {gv_key(g, v): self._group(types, g, v, minor=minor,
                                          server_version=server_version)
                for g, v in group_versions(types, minor)}
        for stale in set(self._gv) - set(docs):
            del self._gv[stale]
        return docs

    def v3_index(self, types: Sequence[ResourceType], *, minor: str,
                 server_version: str) -> Served:
        docs = self._groups(types, kube_minor(minor), server_version)
        paths = {name: {"serverRelativeURL": f"/openapi/v3/{name}?hash={doc.etag}"}
                 for name, doc in sorted(docs.items())}
        body = orjson.dumps({"paths": paths})
        return Served(200, {"Content-Type": _JSON, "Etag": f'"{_etag(body)}"'}, body)

    def v3_group(self, types: Sequence[ResourceType], name: str, *, minor: str,
                 server_version: str, query_hash: str | None = None, if_none_match: str = "",
                 now: datetime | None = None) -> Served | None:
        """One group/version's document, or None when nothing is documented there."""
        docs = self._groups(types, kube_minor(minor), server_version)
        doc = docs.get(name)
        if doc is None:
            return None
        headers = {"Content-Type": _JSON, "Etag": f'"{doc.etag}"', "Vary": "Accept"}
        if query_hash:
            if query_hash != doc.etag:
                location = f"/openapi/v3/{name}?hash={doc.etag}"
                return Served(301, {"Location": location, "Vary": "Accept"})
            headers["Cache-Control"] = "public, immutable"
            if now is not None:
                headers["Expires"] = format_datetime(now + timedelta(days=365), usegmt=True)
        if if_none_match and _not_modified(doc, if_none_match):
            return Served(304, headers)
        return Served(200, headers, doc.body)

    def _swagger(self, types: Sequence[ResourceType], minor: int, server_version: str
                 ) -> _Doc:
        key = self._key(types, minor, server_version)
        doc = self._v2
        if doc is None or doc.key != key:
            body = orjson.dumps(v2_document(types, minor=minor, server_version=server_version),
                                option=orjson.OPT_SORT_KEYS)
            doc = self._v2 = _Doc(tuple(types), key, body, _etag(body))
        return doc

    def v2(self, types: Sequence[ResourceType], *, minor: str, server_version: str,
           accept: str = "", if_none_match: str = "") -> Served:
        """`/openapi/v2`, JSON or protobuf as the Accept header asks (406 otherwise)."""
        for kind, sub in _accepts(accept):
            if kind not in ("application", "*"):
                continue
            proto = sub in _PROTO_SUBTYPES
            if not (proto or sub in ("json", "*")):
                continue
            doc = self._swagger(types, kube_minor(minor), server_version)
            headers = {"Content-Type": PROTO_CONTENT_TYPE if proto else _JSON,
                       "Etag": f'"{doc.etag}"', "Vary": "Accept"}
            if if_none_match and _not_modified(doc, if_none_match):
                return Served(304, headers)
            if not proto:
                return Served(200, headers, doc.body)
            if doc.proto is None:
                doc.proto = encode_document(orjson.loads(doc.body))
            return Served(200, headers, doc.proto)
        return Served(406, {"Vary": "Accept"})
