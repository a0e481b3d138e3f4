"""RBAC-enforcing mode (opt-in): bearer tokens name users, users hold PolicyRules.

`ApiServer(authorizer=Authorizer({token: Subject(...)}))` makes the server authenticate every
request by its bearer token (401 for an unknown or missing one, except /version and the
health probes) and authorize it as kube's RBAC authorizer does: a request is allowed when
one of the user's rules matches its verb, API group, resource (`plural` or
`plural/subresource`), and name (`resourceNames`); ClusterRole-like rules hold in every
namespace, Role-like ones (`Subject.namespaced`) only in theirs. Discovery, OpenAPI,
/version and the health paths are open to every authenticated user (kube binds
system:discovery and system:public-info-viewer to system:authenticated); other paths need a
`nonResourceURLs` rule. A denied request gets kube's 403 Status wording, e.g.
`pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace
"default"`.

Invariants: without an authorizer the request path pays one `is None` test; every allowed
request adds one to `usage[(user, group, resource, verb)]` and every denied one is kept in
`denied` (the last `DENIED_KEPT`), so a test can show that a role is sufficient (nothing
denied) and minimal (every granted triple was used).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from asyncop.api import ApiError, Forbidden, Unauthorized, status_body
from asyncop.apiserver.core.resources import ResourceType
from asyncop.apiserver.core.reviews import AUTHN, AUTHZ, Attributes, UserInfo
from asyncop.apiserver.http.auth import same_secret
from asyncop.apiserver.http.selectors import parse_field_selector
from asyncop.apiserver.http.wire import Target

OPEN_PATHS = ("/api", "/apis", "/openapi", "/version", "/healthz", "/livez", "/readyz")
"""Non-resource paths (and everything under them) every authenticated user may GET."""
PUBLIC_PATHS = frozenset({"/version", "/healthz", "/livez", "/readyz"})
"""Paths served without authentication (as with a single `token`)."""
DENIED_KEPT = 1000

Triple = tuple[str, str, str]
"""(apiGroup, resource or resource/subresource, verb)."""

_SUBJECT = web.RequestKey("asyncop.rbac.subject", object)


@dataclass(frozen=True, slots=True)
class Rule:
    """One rbac.authorization.k8s.io/v1 PolicyRule (`*` is a wildcard in every list)."""

    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, rule: Mapping[str, Any]) -> Rule:
        """From the wire form: {"apiGroups": [...], "resources": [...], "verbs": [...]}."""
        return cls(tuple(rule.get("apiGroups") or ()), tuple(rule.get("resources") or ()),
                   tuple(rule.get("verbs") or ()), tuple(rule.get("resourceNames") or ()),
                   tuple(rule.get("nonResourceURLs") or ()))

    def triples(self) -> set[Triple]:
        return {(g, r, v) for g in self.api_groups for r in self.resources for v in self.verbs}

    def allows(self, verb: str, group: str, resource: str, name: str) -> bool:
        verbs, groups, resources = self.verbs, self.api_groups, self.resources
        if not (verb in verbs or "*" in verbs) or not (group in groups or "*" in groups):
            return False
        if not (resource in resources or "*" in resources):
            head, sep, sub = resource.partition("/")
            if not sep or not (f"*/{sub}" in resources or f"{head}/*" in resources):
                return False
        return not self.resource_names or name in self.resource_names

    def allows_path(self, verb: str, path: str) -> bool:
        if not (verb in self.verbs or "*" in self.verbs):
            return False
        return any(path == url or (url.endswith("*") and path.startswith(url[:-1]))
                   for url in self.non_resource_urls)


def rules(wire: Iterable[Mapping[str, Any]]) -> tuple[Rule, ...]:
    return tuple(Rule.from_dict(r) for r in wire)


@dataclass(frozen=True, slots=True)
class Subject:
    """A user: its name, cluster-wide rules, and rules that hold in one namespace each."""

    name: str
    rules: tuple[Rule, ...] = ()
    namespaced: Mapping[str, tuple[Rule, ...]] = field(default_factory=dict)


ADMIN_RULES = (Rule(("*",), ("*",), ("*",)), Rule(verbs=("*",), non_resource_urls=("*",)))
"""cluster-admin's rules."""


@dataclass(frozen=True, slots=True)
class Denied:
    user: str
    verb: str
    group: str
    resource: str
    namespace: str
    name: str
    path: str


class Authorizer:
    """Token → Subject authentication and RBAC authorization (see the module docstring)."""

    def __init__(self, tokens: Mapping[str, Subject]) -> None:
        self.tokens = dict(tokens)
        self.usage: Counter[tuple[str, str, str, str]] = Counter()
        """Allowed requests by (user, apiGroup, resource[/subresource], verb)."""
        self.denied: deque[Denied] = deque(maxlen=DENIED_KEPT)

    def subject_for(self, token: str) -> Subject | None:
        """The user `token` names; every known token is compared in constant time."""
        found = None
        for known, subject in self.tokens.items():
            if same_secret(token, known):
                found = subject
        return found

    def authority(self, request: web.Request) -> RBACAuthority:
        """What the review APIs answer for the user who sent `request`."""
        subject = request.get(_SUBJECT)
        if not isinstance(subject, Subject):
            raise Unauthorized(status_body(401, "Unauthorized"))
        return RBACAuthority(self, subject)

    def used(self, user: str) -> set[Triple]:
        """The (apiGroup, resource, verb) triples the user's allowed requests exercised."""
        return {(g, r, v) for (u, g, r, v) in self.usage if u == user}

    # --- the hooks (asyncop.apiserver.http.router) ----------------------------------------------

    def authenticate(self, request: web.Request) -> None:
        """401 unless the bearer token names a user (public paths need none)."""
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        subject = self.subject_for(value.strip()) if scheme.lower() == "bearer" else None
        if subject is None:
            if request.path in PUBLIC_PATHS:
                return
            raise Unauthorized(status_body(401, "Unauthorized"))
        request[_SUBJECT] = subject

    def check(self, request: web.Request, verb: str, t: Target) -> None:
        """403 unless the user may `verb` the target (a resource request)."""
        subject = request.get(_SUBJECT)
        if not isinstance(subject, Subject):
            raise Unauthorized(status_body(401, "Unauthorized"))
        rt = t.rt
        resource = f"{rt.plural}/{t.subresource}" if t.subresource else rt.plural
        name = t.name or ""
        if not name and verb in ("list", "watch"):
            # kube's RequestInfo: a list or watch selecting one name (fieldSelector
            # metadata.name=X) is authorised as a request for X, so resourceNames apply
            name = _selected_name(request, rt)
        namespace = t.namespace or ""
        if rt.gr == ("", "namespaces") and name:
            namespace = name  # kube's RequestInfo: a namespace is in itself
        if permits(subject, verb, rt.group, resource, namespace, name):
            self.usage[(subject.name, rt.group, resource, verb)] += 1
            return
        self.denied.append(Denied(subject.name, verb, rt.group, resource, namespace, name,
                                  request.path))
        raise Forbidden(forbidden_body(subject.name, verb, rt.group, rt.plural,
                                       t.subresource, namespace, name))

    def check_path(self, request: web.Request, path: str) -> None:
        """403 unless the user may `get` a non-resource path (discovery is always open)."""
        if path in PUBLIC_PATHS:
            return
        subject = request.get(_SUBJECT)
        if not isinstance(subject, Subject):
            raise Unauthorized(status_body(401, "Unauthorized"))
        verb = request.method.lower()
        if permits_path(subject, verb, path):
            return
        self.denied.append(Denied(subject.name, verb, "", "", "", "", path))
        raise Forbidden(status_body(
            403, f'forbidden: User "{subject.name}" cannot {verb} path "{path}"'))


BASIC_USER = (
    Rule((AUTHZ,), ("selfsubjectaccessreviews", "selfsubjectrulesreviews"), ("create",)),
    Rule((AUTHN,), ("selfsubjectreviews",), ("create",)),
)
"""kube's system:basic-user ClusterRole, bound to every authenticated user."""


def permits(subject: Subject, verb: str, group: str, resource: str, namespace: str,
            name: str) -> bool:
    """Whether one of the subject's rules (or basic-user's) allows the resource request."""
    ruleset = subject.namespaced.get(namespace, ()) + subject.rules if namespace \
        else subject.rules
    return any(rule.allows(verb, group, resource, name)
               for rule in ruleset + BASIC_USER)


def permits_path(subject: Subject, verb: str, path: str) -> bool:
    """Whether the subject may `verb` a non-resource path (discovery is open to all)."""
    if path in PUBLIC_PATHS:
        return True
    if verb == "get" and any(path == p or path.startswith(p + "/") for p in OPEN_PATHS):
        return True
    return any(rule.allows_path(verb, path) for rule in subject.rules)


class RBACAuthority:
    """Review answers in the RBAC mode, for the user who sent the review: the truth of the
    same rules `Authorizer.check` enforces."""

    def __init__(self, authorizer: Authorizer, requester: Subject) -> None:
        self.authorizer = authorizer
        self.requester = requester

    def _info(self, subject: Subject) -> UserInfo:
        return UserInfo(subject.name, ("system:authenticated",))

    def whoami(self) -> UserInfo:
        return self._info(self.requester)

    def review_token(self, token: str) -> UserInfo | None:
        subject = self.authorizer.subject_for(token)
        return self._info(subject) if subject is not None else None

    def allowed(self, user: UserInfo | None, attrs: Attributes) -> tuple[bool, str]:
        if user is None:
            subject: Subject | None = self.requester
        else:
            subject = next((s for s in self.authorizer.tokens.values()
                            if s.name == user.username), None)
        if subject is None:
            return False, ""
        if attrs.path is not None:
            ok = permits_path(subject, attrs.verb, attrs.path)
        else:
            resource = (f"{attrs.resource}/{attrs.subresource}" if attrs.subresource
                        else attrs.resource)
            ok = permits(subject, attrs.verb, attrs.group, resource, attrs.namespace,
                         attrs.name)
        return (True, f'RBAC: allowed by the rules of User "{subject.name}"') if ok \
            else (False, "")

    def rules(self, namespace: str) -> dict[str, Any]:
        subject = self.requester
        ruleset = subject.namespaced.get(namespace, ()) + subject.rules + BASIC_USER
        resource_rules = [
            {"verbs": list(r.verbs), "apiGroups": list(r.api_groups),
             "resources": list(r.resources),
             **({"resourceNames": list(r.resource_names)} if r.resource_names else {})}
            for r in ruleset if r.resources]
        non_resource = [{"verbs": ["get"], "nonResourceURLs": [p, p + "/*"]}
                        for p in OPEN_PATHS]
        non_resource += [{"verbs": list(r.verbs), "nonResourceURLs": list(r.non_resource_urls)}
                         for r in subject.rules if r.non_resource_urls]
        return {"resourceRules": resource_rules, "nonResourceRules": non_resource,
                "incomplete": False}


def _selected_name(request: web.Request, rt: ResourceType) -> str:
    """The name an exact `metadata.name` field selector requires ("" if none or unparsable)."""
    text = request.query.get("fieldSelector")
    if not text:
        return ""
    try:
        return parse_field_selector(text, rt).value_of("metadata.name") or ""
    except ApiError:
        return ""


def forbidden_body(user: str, verb: str, group: str, plural: str, subresource: str,
                   namespace: str, name: str) -> dict[str, Any]:
    """kube's 403 Status for a resource request RBAC denied (responsewriters.Forbidden)."""
    resource = f"{plural}/{subresource}" if subresource else plural
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    reason = (f'User "{user}" cannot {verb} resource "{resource}" in API group "{group}" '
              f"{where}")
    qualified = f"{plural}.{group}" if group else plural
    head = f'{qualified} "{name}"' if name else qualified
    return status_body(403, f"{head} is forbidden: {reason}", name=name or None,
                       group=group or None, kind=plural)


def user_of(request: web.Request) -> str | None:
    """The name of the user the RBAC mode authenticated for `request` (None: mode off)."""
    subject = request.get(_SUBJECT)
    return subject.name if isinstance(subject, Subject) else None
