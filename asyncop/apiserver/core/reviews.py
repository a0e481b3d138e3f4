"""Access and identity reviews: create-only resources answered, never stored.

`kubectl auth can-i` (SelfSubjectAccessReview), `kubectl auth can-i --list`
(SelfSubjectRulesReview), `kubectl auth whoami` (SelfSubjectReview), webhooks' and
controllers' SubjectAccessReviews and TokenReviews are answered by the `Authority` of the
request: the one the HTTP layer builds from the server's authentication mode. With no mode
(`OPEN`) the server is anonymous and allows everything, and the answers say so; with a token
or the RBAC mode they tell the truth of that mode (an unknown token is not authenticated, a
denied request is not allowed). Invariants: an answer agrees with what the same request
would get from the server; the answer echoes the request's spec and never touches the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from asyncop.apiserver.core.resources import ResourceType

AUTHZ = "authorization.k8s.io"
AUTHN = "authentication.k8s.io"
_CREATE = ("create",)

TYPES: tuple[ResourceType, ...] = (
    ResourceType(AUTHZ, "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHZ, "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHZ, "v1", "subjectaccessreviews", "SubjectAccessReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHZ, "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview",
                 namespaced=True, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHN, "v1", "selfsubjectreviews", "SelfSubjectReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
    ResourceType(AUTHN, "v1", "tokenreviews", "TokenReview",
                 namespaced=False, verbs=_CREATE, storage_version="v1"),
)
GRS = frozenset(rt.gr for rt in TYPES)
SELF_REVIEWS = frozenset({(AUTHZ, "selfsubjectaccessreviews"),
                          (AUTHZ, "selfsubjectrulesreviews"), (AUTHN, "selfsubjectreviews")})
"""What kube's `system:basic-user` role lets every authenticated user create."""


@dataclass(frozen=True, slots=True)
class UserInfo:
    username: str
    groups: tuple[str, ...] = ()

    def wire(self) -> dict[str, Any]:
        return {"username": self.username, "groups": list(self.groups)}


@dataclass(frozen=True, slots=True)
class Attributes:
    """What an access review asks about: a resource request or a non-resource path."""

    verb: str
    group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str | None = None  # set: a non-resource request


class Authority(Protocol):
    """The authentication mode's answers, for the user who sent the review."""

    def whoami(self) -> UserInfo: ...

    def review_token(self, token: str) -> UserInfo | None:
        """The user a bearer token authenticates as, or None."""
        ...

    def allowed(self, user: UserInfo | None, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason) for `user` (None: the requester)."""
        ...

    def rules(self, namespace: str) -> dict[str, Any]:
        """The requester's SelfSubjectRulesReview status in `namespace`."""
        ...


ANONYMOUS = UserInfo("system:anonymous", ("system:unauthenticated", "system:masters"))
_ALL_RULES = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
              "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
              "incomplete": False}


class _Open:
    """No authentication mode: everyone is anonymous and everything is allowed."""

    def whoami(self) -> UserInfo:
        return ANONYMOUS

    def review_token(self, token: str) -> UserInfo | None:
        return ANONYMOUS

    def allowed(self, user: UserInfo | None, attrs: Attributes) -> tuple[bool, str]:
        return True, "the embedded API server allows everything"

    def rules(self, namespace: str) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, list) else v) for k, v in _ALL_RULES.items()}


OPEN: Authority = _Open()


def is_review(rt: ResourceType) -> bool:
    return rt.gr in GRS


def answer(rt: ResourceType, body: dict[str, Any], namespace: str | None,
           authority: Authority = OPEN) -> dict[str, Any]:
    """The review with its status filled in by `authority`."""
    meta = dict(body.get("metadata") or {})
    if namespace:
        meta["namespace"] = namespace
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    out: dict[str, Any] = {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta,
                           "spec": spec}
    if rt.plural == "selfsubjectrulesreviews":
        out["status"] = authority.rules(str(spec.get("namespace") or ""))
    elif rt.plural == "selfsubjectreviews":
        out["status"] = {"userInfo": authority.whoami().wire()}
    elif rt.plural == "tokenreviews":
        user = authority.review_token(str(spec.get("token") or ""))
        out["status"] = ({"authenticated": True, "user": user.wire()} if user is not None
                         else {"authenticated": False, "user": {},
                               "error": "invalid bearer token"})
    else:
        subject: UserInfo | None = None
        if rt.plural in ("subjectaccessreviews", "localsubjectaccessreviews"):
            subject = UserInfo(str(spec.get("user") or ""),
                               tuple(str(g) for g in spec.get("groups") or ()
                                     if isinstance(g, str)))
        allowed, reason = authority.allowed(subject, _attributes(spec, namespace))
        out["status"] = {"allowed": allowed, **({"reason": reason} if reason else {})}
    return out


def _attributes(spec: dict[str, Any], namespace: str | None) -> Attributes:
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        return Attributes(
            verb=str(resource.get("verb") or ""), group=str(resource.get("group") or ""),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            namespace=namespace or str(resource.get("namespace") or ""),
            name=str(resource.get("name") or ""))
    other = spec.get("nonResourceAttributes")
    other = other if isinstance(other, dict) else {}
    return Attributes(verb=str(other.get("verb") or ""), path=str(other.get("path") or ""))
