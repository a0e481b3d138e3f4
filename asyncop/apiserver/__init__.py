"""The embedded Kubernetes API server (imports only asyncop.api and asyncop.clock).

`ApiServer` serves real HTTP on 127.0.0.1 (HTTPS + token on request); `Store` is its
in-process API (simulators, tests). Reading order:

- `server` (lifecycle, kubeconfig) → `routes` (URL dispatch, faults, discovery, OpenAPI) →
  `routes_objects` / `routes_watch` (the verbs) → `views` (a stored object as served through
  one version: apiVersion, per-version pruning and defaults) → `http` (bodies, responses,
  negotiation);
- `storage` (MVCC store, in-process API) → `writes` (the one write pipeline: create, update,
  status, delete, finalizers, generation) → `watch` (history ring, per-watcher queues);
- rules: `objectmeta`, `builtins` (defaults), `validation`, `selectors`, `listing`, `errors`;
- types: `resources` (ResourceType), `registry` (built-ins + CRD-served), `crdstate` (CRD
  lifecycle), `discovery`, `eventsv1`, `reviews`;
- pure helpers behind `extensions`: `schema*`, `crds`, `tables*`, `openapi*`, `patch`,
  `apply`, `protobuf`; plus `faults`, `tlsmode`, `main` (own process), `simulators/`.
"""

from asyncop.apiserver.server import ApiServer
from asyncop.apiserver.storage import Store

__all__ = ["ApiServer", "Store"]
