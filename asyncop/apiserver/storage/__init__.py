"""The store: objects, the one write pipeline, and watch fan-out.

- `store`: `Store` — MVCC objects by (group, resource), one global resourceVersion, history
  for watch resumes and consistent lists, snapshots for continue tokens, and the in-process
  API the simulators and tests use (same code paths as HTTP);
- `writer`: `Writer` — create, update (main and status), delete: built-in decoding, defaults
  and validation (`asyncop.apiserver.builtin`), CR prune/default/validate, admission hooks,
  metadata and kind validation, generation, finalizers, graceful pod deletion; nothing is
  committed unless every check passed;
- `watch`: `WatchHub` (history ring) and `Watcher`s (bounded per-watch queues), events
  carrying the type they were committed under;
- `crdstate`: a CRD's lifecycle (Established, served types, terminating: its objects go);
- `views`: a stored object as served through another version;
- `objects`: copying stored objects and version views (the package's leaf).

Invariants: stored dicts are never handed out for mutation (copies or read-only views); a
write is all-or-nothing and never awaits between its checks and its commit.
"""
