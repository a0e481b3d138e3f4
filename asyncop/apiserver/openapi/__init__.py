"""OpenAPI documents: `/openapi/v2` (protobuf, minimal) and `/openapi/v3` (index and per
group/version documents), built from the served types.

- `documents`: the documents and the v2 protobuf envelope;
- `schemas`: the per-kind schemas and the PATCH operations kubectl looks for
  (`x-kubernetes-group-version-kind`, the `fieldValidation` parameter).

Why they matter: docs/apiserver.md, "OpenAPI for kubectl". Invariant: pure.
"""
