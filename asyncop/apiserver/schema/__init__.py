"""OpenAPI v3 structural schemas of custom resources, as kube-apiserver applies them.

- `checks`: validation of an object against a version's schema (kube's causes and messages);
- `mutate`: pruning of unknown fields (returning their paths, for warnings and strict
  decoding) and defaulting;
- `structural`: is a CRD's schema structural (the rules a CRD create/update is checked with);
- `formats`: `format:` checkers and `pattern` compilation;
- `cel`: `x-kubernetes-validations` rules with cel-python (`self`, `oldSelf`, messages);
- `text`: how values and paths are rendered in messages (Go's quoting).

Invariants: pure; nothing here knows about HTTP, storage or resources beyond the schema dict.
"""
