"""Protobuf request bodies: the `k8s\\0` envelope and the kinds clients send that way.

- `decode`: `decode(body) -> dict` for the kinds in `schemas` (Secrets, ConfigMaps, Pods,
  Jobs, DeleteOptions, …), else `ProtobufError` (the server answers 415);
- `schemas`: field numbers and types per kind.

Responses are always JSON (docs/apiserver.md, "What Helm sends"). Invariant: pure.
"""
