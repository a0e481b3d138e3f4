"""The HTTP layer: from a request to the store's terms and back.

- `router`: URL dispatch (`/api`, `/apis`, discovery, OpenAPI, health, `/metrics`), the kube
  verb of a request, faults, authentication and the RBAC hook; every failure is a Status;
- `objects`: get, list, create, update, patch, delete,
  deletecollection, status/scale; writes go through `webhooks.pipeline`;
- `patching`: JSON, merge and strategic merge patches and server-side apply, kube's errors;
- `watches`: watch streams — start points, resume, bookmarks, timeouts, Table lines;
- `wire`: bodies (JSON, YAML, protobuf), content negotiation, responses, query options;
- `listing` (limit/continue, resourceVersion semantics), `selectors` (field selectors; label
  selectors are `asyncop.api.labels`), `sharding` (KEP-5866 shard selectors);
- `discovery`, `metrics` (`apiserver_request_total`), `faults` (test fault injection),
  `auth` (HTTPS mode, bearer tokens), `rbac` (opt-in RBAC mode), `bodylimits` (size, depth).

Invariants: handlers never touch stored dicts except to serialize them; every answer,
including unexpected exceptions, is a Kubernetes Status with kube's wording.
"""
