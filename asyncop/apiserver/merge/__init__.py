"""Patches and server-side apply over raw JSON objects.

- `patch`: RFC 6902 JSON patch, RFC 7386 merge patch, strategic merge patch (list merge keys
  and directives), each raising `PatchError` with kube's text;
- `apply`: server-side apply — merge an applied configuration, track field ownership in
  `managedFields`, report conflicts (`ApplyConflict`), record non-apply writes;
- `fieldset`: managedFields' `f:`/`k:`/`v:` field sets;
- `mergeschema`: the merge keys and list types of the built-in kinds.

Invariants: inputs are never mutated; results share no structure with them.
"""
