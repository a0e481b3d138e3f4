"""OpenAPI documents: `/openapi/v2` (JSON and gnostic protobuf) and `/openapi/v3` (index and
per group/version documents), as kube-apiserver serves them, from kube's own definitions.

- `service`: what the HTTP layer calls — content negotiation, ETags, `?hash=`, caching;
- `documents`: the v3 group/version documents and the v2 swagger, from the served types;
- `routes` and `params`: the operations and parameters kube documents per resource;
- `schemas`: kube's definitions (asyncop.kubespec) in their v3 and v2 served forms;
- `crds`: custom resources' schemas as kube's CRD builder publishes them;
- `gnostic`: the protobuf encoding of a v2 document (gnostic's openapi.v2.Document).

Why they matter: `kubectl explain` reads them, and kubectl and Helm leave validation to the
server when the PATCH operation of a kind takes `fieldValidation` (docs/apiserver.md,
"OpenAPI for kubectl"). Invariant: everything but `service`'s cache is pure.
"""
