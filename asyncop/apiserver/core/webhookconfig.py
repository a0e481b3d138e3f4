"""Webhook configurations: which admission webhooks a request goes to.

A ValidatingWebhookConfiguration or MutatingWebhookConfiguration
(admissionregistration.k8s.io/v1) lists webhooks. Each has rules (operations, apiGroups,
apiVersions, resources[/subresource], scope), a namespaceSelector, an objectSelector,
optional matchConditions (CEL over `object`, `oldObject`, `request`), a clientConfig (a `url`,
or a `service` reference), a failurePolicy, a timeout, sideEffects and, for mutating ones, a
reinvocationPolicy. This module applies kube's defaults to stored configurations, validates
them with kube's messages, parses them into `Webhook`s and decides whether a request matches.

Invariants: parsing never raises on a stored configuration (bad ones were refused when
written); `Rule.matches` and `Webhook.selects` are pure; requests for the configuration
kinds themselves never go to webhooks (as in kube, so a broken webhook cannot lock itself in).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

from asyncop.api import StatusCause
from asyncop.api.labels import LabelSelector, SelectorError
from asyncop.api.labels import from_label_selector as selector_from_label_selector
from asyncop.apiserver.core.errors import cause, quote
from asyncop.apiserver.core.matchconditions import compile_error

GROUP = "admissionregistration.k8s.io"
VALIDATING_GR = (GROUP, "validatingwebhookconfigurations")
MUTATING_GR = (GROUP, "mutatingwebhookconfigurations")
CONFIG_GRS = (VALIDATING_GR, MUTATING_GR)
#: resources never sent to webhooks (kube exempts its admission configuration kinds)
EXEMPT_GROUPS = frozenset({GROUP})

OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
DEFAULT_TIMEOUT = 10
_QUALIFIED = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True, slots=True)
class Rule:
    operations: frozenset[str]
    groups: frozenset[str]
    versions: frozenset[str]
    resources: tuple[tuple[str, str], ...]  # (resource, subresource), "*" wildcards
    scope: str  # "*", "Cluster", "Namespaced"

    def matches(self, *, operation: str, group: str, version: str, resource: str,
                subresource: str, namespace: str, exact_version: bool = True) -> bool:
        if "*" not in self.operations and operation not in self.operations:
            return False
        if "*" not in self.groups and group not in self.groups:
            return False
        if exact_version and "*" not in self.versions and version not in self.versions:
            return False
        if self.scope == "Cluster" and namespace:
            return False
        if self.scope == "Namespaced" and not namespace:
            return False
        return any((res in ("*", resource)) and (sub in ("*", subresource))
                   for res, sub in self.resources)


@dataclass(frozen=True, slots=True)
class ServiceRef:
    namespace: str
    name: str
    path: str
    port: int


@dataclass(frozen=True, slots=True)
class Webhook:
    """One webhook of a configuration, with kube's defaults filled in."""

    name: str
    configuration: str
    mutating: bool
    rules: tuple[Rule, ...]
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    match_conditions: tuple[tuple[str, str], ...]  # (name, CEL expression)
    url: str | None
    service: ServiceRef | None
    ca_bundle: bytes | None
    failure_policy: str  # "Fail" | "Ignore"
    match_policy: str  # "Equivalent" | "Exact"
    timeout: float
    side_effects: str
    reinvoke: bool
    review_versions: tuple[str, ...]

    def rule_matches(self, *, operation: str, group: str, version: str, resource: str,
                     subresource: str, namespace: str) -> bool:
        return self.version_for(operation=operation, group=group, version=version,
                                resource=resource, subresource=subresource,
                                namespace=namespace) is not None

    def version_for(self, *, operation: str, group: str, version: str, resource: str,
                    subresource: str, namespace: str) -> str | None:
        """The version the webhook is sent the object in, or None if no rule matches: the
        request's own when a rule names it (or `*`); with matchPolicy Equivalent, else the
        first version a rule for the same group and resource names (kube converts the object
        to it)."""
        def matches(rule: Rule, exact: bool) -> bool:
            return rule.matches(operation=operation, group=group, version=version,
                                resource=resource, subresource=subresource,
                                namespace=namespace, exact_version=exact)

        if any(matches(r, True) for r in self.rules):
            return version
        if self.match_policy != "Equivalent":
            return None
        for rule in self.rules:
            if matches(rule, False):
                return next((v for v in sorted(rule.versions) if v != "*"), version)
        return None

    def selects(self, *, obj: dict[str, Any] | None, old: dict[str, Any] | None,
                namespace_labels: dict[str, str] | None) -> bool:
        """The selectors: the object's (new or old) labels, and its namespace's labels
        (`namespace_labels` None: a cluster-scoped object, which the namespace selector
        does not filter unless it is a Namespace itself — then it is given its own labels)."""
        if not self.object_selector.empty and not any(
                o is not None and self.object_selector.matches_object(o) for o in (obj, old)):
            return False
        if namespace_labels is not None and not self.namespace_selector.empty:
            return self.namespace_selector.matches(namespace_labels)
        return True


@dataclass(frozen=True, slots=True)
class ClientTarget:
    """Where a webhook is and which CA to trust (a parsed `clientConfig`)."""

    url: str | None
    service: ServiceRef | None
    ca_bundle: bytes | None


def client_target(client: Any) -> ClientTarget:
    """A `clientConfig` (admission and CRD conversion webhooks share its shape)."""
    client = client if isinstance(client, dict) else {}
    svc = client.get("service")
    service = None
    if isinstance(svc, dict):
        service = ServiceRef(namespace=str(svc.get("namespace", "")),
                             name=str(svc.get("name", "")), path=str(svc.get("path") or "/"),
                             port=int(svc.get("port") or 443))
    ca = client.get("caBundle")
    try:
        ca_bundle = base64.b64decode(ca) if ca else None
    except ValueError:
        ca_bundle = None
    return ClientTarget(str(client["url"]) if client.get("url") else None, service, ca_bundle)


def _rule(raw: dict[str, Any]) -> Rule:
    resources: list[tuple[str, str]] = []
    for text in raw.get("resources") or ():
        res, _, sub = str(text).partition("/")
        resources.append((res, sub))
    return Rule(operations=frozenset(raw.get("operations") or ()),
                groups=frozenset(raw.get("apiGroups") or ()),
                versions=frozenset(raw.get("apiVersions") or ()),
                resources=tuple(resources), scope=str(raw.get("scope") or "*"))


def _selector(raw: Any) -> LabelSelector:
    try:
        return selector_from_label_selector(raw if isinstance(raw, dict) else None)
    except SelectorError:
        return selector_from_label_selector(None)


def parse(configuration: dict[str, Any], *, mutating: bool) -> list[Webhook]:
    """The webhooks of one stored configuration, in order."""
    out: list[Webhook] = []
    config_name = str((configuration.get("metadata") or {}).get("name", ""))
    for raw in configuration.get("webhooks") or ():
        if not isinstance(raw, dict):
            continue
        client = raw.get("clientConfig") or {}
        target = client_target(client)
        out.append(Webhook(
            name=str(raw.get("name", "")), configuration=config_name, mutating=mutating,
            rules=tuple(_rule(r) for r in raw.get("rules") or () if isinstance(r, dict)),
            namespace_selector=_selector(raw.get("namespaceSelector")),
            object_selector=_selector(raw.get("objectSelector")),
            match_conditions=tuple((str(c.get("name", "")), str(c.get("expression", "")))
                                   for c in raw.get("matchConditions") or ()
                                   if isinstance(c, dict)),
            url=target.url, service=target.service,
            ca_bundle=target.ca_bundle, failure_policy=str(raw.get("failurePolicy") or "Fail"),
            match_policy=str(raw.get("matchPolicy") or "Equivalent"),
            timeout=float(raw.get("timeoutSeconds") or DEFAULT_TIMEOUT),
            side_effects=str(raw.get("sideEffects") or ""),
            reinvoke=raw.get("reinvocationPolicy") == "IfNeeded",
            review_versions=tuple(str(v) for v in raw.get("admissionReviewVersions") or ())))
    return out


# --- defaults and validation (on write of a configuration) -----------------------------------

def defaults(obj: dict[str, Any], mutating: bool) -> None:
    """kube's v1 defaults, filled in only where absent."""
    for hook in obj.get("webhooks") or ():
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        hook.setdefault("namespaceSelector", {})
        hook.setdefault("objectSelector", {})
        hook.setdefault("timeoutSeconds", DEFAULT_TIMEOUT)
        if mutating:
            hook.setdefault("reinvocationPolicy", "Never")
        for rule in hook.get("rules") or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")
        svc = (hook.get("clientConfig") or {}).get("service")
        if isinstance(svc, dict):
            svc.setdefault("port", 443)


def validate(obj: dict[str, Any], mutating: bool) -> list[StatusCause]:
    """The checks kube's admissionregistration validation makes that clients run into."""
    out: list[StatusCause] = []
    seen: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or ()):
        path = f"webhooks[{i}]"
        if not isinstance(hook, dict):
            out.append(cause(path, "FieldValueInvalid", "Invalid value: must be an object"))
            continue
        _validate_hook(out, hook, path, seen, mutating)
    return out


def _validate_hook(out: list[StatusCause], hook: dict[str, Any], path: str, seen: set[str],
                   mutating: bool) -> None:
    name = hook.get("name")
    if not name:
        out.append(cause(f"{path}.name", "FieldValueRequired", "Required value"))
    elif not _QUALIFIED.match(str(name)) or len(str(name).split(".")) < 3:
        out.append(cause(f"{path}.name", "FieldValueInvalid",
                         f"Invalid value: {quote(name)}: should be a domain with at least three "
                         "segments separated by dots"))
    elif name in seen:
        out.append(cause(f"{path}.name", "FieldValueDuplicate",
                         f"Duplicate value: {quote(name)}"))
    else:
        seen.add(str(name))
    versions = hook.get("admissionReviewVersions")
    if not versions:
        out.append(cause(f"{path}.admissionReviewVersions", "FieldValueRequired",
                         "Required value: must specify one of v1, v1beta1"))
    elif not {"v1", "v1beta1"} & set(versions):
        out.append(cause(f"{path}.admissionReviewVersions", "FieldValueInvalid",
                         f"Invalid value: {_go_list(versions)}: must include at least one of "
                         "v1, v1beta1"))
    side = hook.get("sideEffects")
    if side is None:
        out.append(cause(f"{path}.sideEffects", "FieldValueRequired",
                         'Required value: must specify one of "None", "NoneOnDryRun"'))
    elif side not in ("None", "NoneOnDryRun"):
        out.append(cause(f"{path}.sideEffects", "FieldValueNotSupported",
                         f'Unsupported value: {quote(side)}: supported values: "None", '
                         '"NoneOnDryRun"'))
    _enum(out, hook, "failurePolicy", path, ("Fail", "Ignore"))
    _enum(out, hook, "matchPolicy", path, ("Equivalent", "Exact"))
    if mutating:
        _enum(out, hook, "reinvocationPolicy", path, ("IfNeeded", "Never"))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int) or not 1 <= timeout <= 30):
        out.append(cause(f"{path}.timeoutSeconds", "FieldValueInvalid",
                         f"Invalid value: {quote(timeout)}: the timeout value must be between 1 "
                         "and 30 seconds"))
    for j, rule in enumerate(hook.get("rules") or ()):
        _validate_rule(out, rule, f"{path}.rules[{j}]")
    for key in ("namespaceSelector", "objectSelector"):
        try:
            selector_from_label_selector(hook.get(key) or None)
        except SelectorError as exc:
            out.append(cause(f"{path}.{key}.matchExpressions", "FieldValueInvalid",
                             f"Invalid value: {exc}"))
    _validate_client(out, hook.get("clientConfig"), f"{path}.clientConfig")
    _validate_conditions(out, hook.get("matchConditions"), f"{path}.matchConditions")


def _enum(out: list[StatusCause], hook: dict[str, Any], key: str, path: str,
          allowed: tuple[str, ...]) -> None:
    value = hook.get(key)
    if value is not None and value not in allowed:
        out.append(cause(f"{path}.{key}", "FieldValueNotSupported",
                         f"Unsupported value: {quote(value)}: supported values: "
                         + ", ".join(f'"{a}"' for a in allowed)))


def _go_list(values: Any) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def _validate_rule(out: list[StatusCause], rule: Any, path: str) -> None:
    if not isinstance(rule, dict):
        out.append(cause(path, "FieldValueInvalid", "Invalid value: must be an object"))
        return
    for key in ("operations", "apiGroups", "apiVersions", "resources"):
        if not rule.get(key):
            out.append(cause(f"{path}.{key}", "FieldValueRequired", "Required value"))
    for op in rule.get("operations") or ():
        if op != "*" and op not in OPERATIONS:
            out.append(cause(f"{path}.operations", "FieldValueNotSupported",
                             f"Unsupported value: {quote(op)}: supported values: \"*\", "
                             + ", ".join(f'"{o}"' for o in OPERATIONS)))
    scope = rule.get("scope")
    if scope is not None and scope not in ("*", "Cluster", "Namespaced"):
        out.append(cause(f"{path}.scope", "FieldValueNotSupported",
                         f'Unsupported value: {quote(scope)}: supported values: "*", "Cluster", '
                         '"Namespaced"'))


def _validate_client(out: list[StatusCause], client: Any, path: str) -> None:
    if not isinstance(client, dict) or ("url" in client) == ("service" in client):
        out.append(cause(path, "FieldValueRequired",
                         "Required value: exactly one of url or service is required"))
        return
    if "url" in client:
        url = str(client["url"])
        if not url.startswith("https://"):
            out.append(cause(f"{path}.url", "FieldValueInvalid",
                             f"Invalid value: {quote(url)}: 'https' is the only allowed URL "
                             "scheme"))
        return
    svc = client["service"]
    if not isinstance(svc, dict):
        out.append(cause(f"{path}.service", "FieldValueInvalid", "Invalid value: must be an "
                                                                 "object"))
        return
    for key in ("namespace", "name"):
        if not svc.get(key):
            out.append(cause(f"{path}.service.{key}", "FieldValueRequired",
                             "Required value: service " + key + " is required"))
    port = svc.get("port")
    if port is not None and (not isinstance(port, int) or not 1 <= port <= 65535):
        out.append(cause(f"{path}.service.port", "FieldValueInvalid",
                         f"Invalid value: {quote(port)}: port is not valid: must be between 1 "
                         "and 65535, inclusive"))
    svc_path = svc.get("path")
    if svc_path is not None and not str(svc_path).startswith("/"):
        out.append(cause(f"{path}.service.path", "FieldValueInvalid",
                         f"Invalid value: {quote(svc_path)}: must start with a '/'"))


def _validate_conditions(out: list[StatusCause], conditions: Any, path: str) -> None:
    names: set[str] = set()
    for i, cond in enumerate(conditions or ()):
        if not isinstance(cond, dict):
            continue
        name = cond.get("name")
        if not name:
            out.append(cause(f"{path}[{i}].name", "FieldValueRequired", "Required value"))
        elif name in names:
            out.append(cause(f"{path}[{i}].name", "FieldValueDuplicate",
                             f"Duplicate value: {quote(name)}"))
        names.add(str(name))
        expression = cond.get("expression")
        if not expression:
            out.append(cause(f"{path}[{i}].expression", "FieldValueRequired",
                             "Required value"))
            continue
        error = compile_error(str(expression))
        if error:
            out.append(cause(f"{path}[{i}].expression", "FieldValueInvalid",
                             f"Invalid value: {quote(expression)}: compilation failed: {error}"))


__all__ = [
    "CONFIG_GRS",
    "EXEMPT_GROUPS",
    "MUTATING_GR",
    "VALIDATING_GR",
    "ClientTarget",
    "Rule",
    "ServiceRef",
    "Webhook",
    "client_target",
    "defaults",
    "parse",
    "validate",
]
