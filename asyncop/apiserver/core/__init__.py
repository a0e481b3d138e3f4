"""The API server's vocabulary: what a resource is, and the rules every layer shares.

- `resources`: `ResourceType`, one per (group, version, plural): kind, scope, verbs,
  subresources, the CRD schema of that version; immutable.
- `registry`: the built-in types and the CRD-served ones; storage types per (group, resource).
- `errors`: kube's Status errors, worded as the real server words them.
- `crds`: CRD validation (with kube's field paths), defaults, and the ResourceTypes a CRD serves.
- `objectmeta`: metadata rules (names, generateName, server-owned fields, generation).
- `eventsv1`: events.k8s.io/v1 ⇄ core/v1 Events (one storage).
- `reviews`: the review kinds (TokenReview, SubjectAccessReview, …) answered without storage.
- `webhookconfig`, `matchconditions`: Validating/MutatingWebhookConfiguration defaults,
  validation and matching (the store validates them on write; `webhooks` calls them).
- `paths`: dotted JSON paths (scale subresource paths).

Invariants: pure functions and immutable values — no I/O, no store, no clock.
"""
