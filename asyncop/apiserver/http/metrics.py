"""Request counting and `GET /metrics`, as kube-apiserver exposes it (a subset).

kube-apiserver counts every resource request in `apiserver_request_total` with the labels
verb (GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION), group, version,
resource, subresource, scope (resource, namespace, cluster) and code; this server does the
same. Because a benchmark needs to tell an operator's requests from the load driver's, it
also counts `asyncop_apiserver_requests_by_client_total` with the product token of the
User-Agent (`asyncop/0.1 ...` → `asyncop`, `kubectl/v1.33.0 ...` → `kubectl`) in place of
group/version/scope — a metric kube-apiserver does not have, named so nobody mistakes it
for one.

Invariants: counting is one dict increment per request, off the response path's I/O; the
counters only grow; `render()` is valid Prometheus text exposition.
"""

from __future__ import annotations

from collections import Counter

from asyncop.apiserver.http.wire import Target

_Key = tuple[str, str, str, str, str, str, str]
_ClientKey = tuple[str, str, str, str, str]


def kube_verb(verb: str, content_type: str) -> str:
    """The verb label kube uses: the request verb upper-cased, APPLY for server-side apply."""
    if verb == "patch" and content_type.startswith("application/apply-patch"):
        return "APPLY"
    return {"create": "POST", "update": "PUT"}.get(verb, verb.upper())


def client_of(user_agent: str) -> str:
    """The User-Agent's product name: `kopf/1.45 (aiohttp)` → `kopf`; `` → `unknown`."""
    token = user_agent.split(" ", 1)[0].split("/", 1)[0].strip()
    return token or "unknown"


class RequestMetrics:
    def __init__(self) -> None:
        self.requests: Counter[_Key] = Counter()
        self.by_client: Counter[_ClientKey] = Counter()

    def count(self, *, verb: str, target: Target, code: int, user_agent: str,
              content_type: str) -> None:
        v = kube_verb(verb, content_type)
        rt = target.rt
        if target.name:
            scope = "resource"
        elif target.namespace and rt.namespaced:
            scope = "namespace"
        else:
            scope = "cluster"
        status = str(code)
        self.requests[(v, rt.group, rt.version, rt.plural, target.subresource, scope,
                       status)] += 1
        self.by_client[(client_of(user_agent), v, rt.plural, target.subresource, status)] += 1

    def render(self) -> str:
        lines = [
            "# HELP apiserver_request_total Counter of apiserver requests broken out for each "
            "verb, group, version, resource, scope, component, and HTTP response code.",
            "# TYPE apiserver_request_total counter",
        ]
        for (verb, group, version, resource, sub, scope, code), n in sorted(
                self.requests.items()):
            lines.append(
                f'apiserver_request_total{{code="{code}",component="apiserver",'
                f'group="{group}",resource="{resource}",scope="{scope}",'
                f'subresource="{sub}",verb="{verb}",version="{version}"}} {n}'
            )
        lines += [
            "# HELP asyncop_apiserver_requests_by_client_total Requests by the User-Agent's "
            "product name (not a kube-apiserver metric).",
            "# TYPE asyncop_apiserver_requests_by_client_total counter",
        ]
        for (client, verb, resource, sub, code), n in sorted(self.by_client.items()):
            lines.append(
                f'asyncop_apiserver_requests_by_client_total{{client="{_escape(client)}",'
                f'code="{code}",resource="{resource}",subresource="{sub}",verb="{verb}"}} {n}'
            )
        return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
