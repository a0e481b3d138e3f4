"""The bundled operators, one module each, and the explicit name -> factory registry.

- `at` (cnat At: run a command once, at a time), `foo` (sample-controller), `network`
  (validate a CIDR and gateway), `crdkind` (mysql/tomcat Deployment + NodePort Service),
  `jinghzhu` (ReplicaSet-like, with expectations), `podlogger` (the minimal example);
- `kinds` (their Kinds), `crds` (the CRDs shipped as package data), `common` (status writes,
  conditions, expectations, RBAC rules), `registry` (`CONTROLLERS`, `RBAC_RULES`).

Invariant: the six controller modules never import each other; this package's `__init__`
imports none of them, so importing one controller does not load the rest.
"""
