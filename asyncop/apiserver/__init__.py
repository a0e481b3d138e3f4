"""The embedded Kubernetes API server (imports only asyncop.api, clock, certs, kubespec).

`ApiServer` serves real HTTP on 127.0.0.1 (HTTPS + token on request); `Store` is its
in-process API (simulators, tests). A request flows down through the packages, each layer
importing only the ones below it (import-linter checks it, and that nothing is cyclic):

    main ─ server                 the process / the in-process server: lifecycle, kubeconfig
      http                        URL dispatch, the verbs, watch streams, wire formats, auth,
                                  RBAC mode, faults, metrics, discovery, body limits
      webhooks                    admission and conversion webhooks around the Writer
      storage ─ simulators        the MVCC store, the one write pipeline, watch fan-out;
                                  the controllers kube would run (GC, kubelet, …)
      tables ─ openapi ─ protobuf server-side Tables, OpenAPI documents, protobuf bodies;
      ─ builtin                   built-in kinds decoded, defaulted and validated as kube does
      core                        ResourceType, the registry, errors, CRD and metadata rules
      schema ─ merge              structural schemas and CEL; JSON/merge/strategic patches
                                  and server-side apply

Start reading at `server.py`, then `http/router.py` → `http/objects.py` →
`storage/writer.py` → `storage/store.py` → `storage/watch.py`. Each package's docstring says
what it holds and its invariants; the wire facts behind them are in docs/apiserver.md.
"""

from asyncop.apiserver.server import ApiServer
from asyncop.apiserver.storage.store import Store

__all__ = ["ApiServer", "Store"]
