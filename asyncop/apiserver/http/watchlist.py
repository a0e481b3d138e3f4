"""Streaming lists (KEP-3157, the WatchList feature): a watch's list options, as kube checks them.

`watch_start(query, minor=, enabled=)` reads and validates `sendInitialEvents` and
`resourceVersionMatch` of a WATCH the way kube-apiserver of that minor does:

- before 1.27 there is no streaming list: `sendInitialEvents` is an unknown option (ignored)
  and `resourceVersionMatch` is refused on a watch (kube: ValidateListOptions, apimachinery
  pkg/apis/meta/internalversion/validation);
- from 1.27, `validateWatchOptions`: `sendInitialEvents` needs `resourceVersionMatch=
  NotOlderThan` and the WatchList feature gate, `resourceVersionMatch` needs
  `sendInitialEvents`, only NotOlderThan is supported, never with `continue`; every error of
  the request is reported at once (one 422 Invalid on `ListOptions.meta.k8s.io`);
- with the gate on, a watch from resourceVersion ""/"0" that names neither option is a
  streaming list too (kube: SetListOptionsDefaults), so its initial ADDED events end with the
  annotated bookmark when bookmarks are allowed.

The WatchList gate's default follows kube-apiserver's (pkg/features/kube_features.go): alpha
and off 1.27-1.31, beta and on in 1.32, off again in 1.33 ("the json and proto streaming
encoders appear to work better"), on from 1.34 (`watch_list_default`).

`sendInitialEvents` parses as kube parses a bool query parameter: absent is unset, "false" and
"0" are false, anything else (the empty string included) is true. The initial-events-end
bookmark is sent only when bookmarks are allowed (kube's cacher:
setInitialEventsEndBookmarkIfRequested).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from asyncop.apiserver.core import errors

GATE = "WatchList"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
NOT_OLDER_THAN = "NotOlderThan"


def watch_list_default(minor: int) -> bool:
    """Whether kube-apiserver 1.<minor> enables the WatchList gate by default."""
    return minor == 32 or minor >= 34


@dataclass(frozen=True, slots=True)
class WatchStart:
    send_initial: bool | None
    """`sendInitialEvents` as given (None: not given, and not defaulted)."""
    end_bookmark: bool
    """A streaming list: the initial events end with the annotated bookmark."""


def watch_start(query: Mapping[str, str], *, minor: int, enabled: bool) -> WatchStart:
    """The validated streaming-list options of a watch (422 Invalid as kube words it)."""
    match = query.get("resourceVersionMatch") or ""
    rv = query.get("resourceVersion") or ""
    token = query.get("continue") or ""
    if minor < 27:
        _legacy(match, rv, token)
        return WatchStart(None, end_bookmark=False)
    raw = query.get("sendInitialEvents")
    send = None if raw is None else not (raw == "0" or raw.lower() == "false")
    if enabled and send is None and not match and rv in ("", "0"):
        send, match = True, NOT_OLDER_THAN  # kube: SetListOptionsDefaults
    causes = []
    if send is not None:
        if match != NOT_OLDER_THAN:
            causes.append(errors.cause(
                "resourceVersionMatch", "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                "NotOlderThan"))
        if not enabled:
            causes.append(errors.cause(
                "sendInitialEvents", "FieldValueForbidden",
                "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList "
                "feature gate is enabled"))
    if match:
        if send is None:
            causes.append(errors.cause(
                "resourceVersionMatch", "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden for watch unless "
                "sendInitialEvents is provided"))
        if match != NOT_OLDER_THAN:
            causes.append(errors.cause(
                "resourceVersionMatch", "FieldValueNotSupported",
                f'Unsupported value: "{match}": supported values: "NotOlderThan"'))
        if token:
            causes.append(errors.cause(
                "resourceVersionMatch", "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden when continue is provided"))
    if causes:
        raise errors.invalid_options("ListOptions", causes)
    allow_bookmarks = query.get("allowWatchBookmarks", "").lower() in ("true", "1")
    return WatchStart(send, end_bookmark=bool(send) and allow_bookmarks)


def _legacy(match: str, rv: str, token: str) -> None:
    """ValidateListOptions before 1.27, for a watch."""
    if not match:
        return
    causes = [errors.cause("resourceVersionMatch", "FieldValueForbidden",
                           "Forbidden: resourceVersionMatch is forbidden for watch")]
    if not rv:
        causes.append(errors.cause(
            "resourceVersionMatch", "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"))
    if token:
        causes.append(errors.cause(
            "resourceVersionMatch", "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden when continue is provided"))
    if match not in ("Exact", NOT_OLDER_THAN):
        causes.append(errors.cause(
            "resourceVersionMatch", "FieldValueNotSupported",
            f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan", ""'))
    if match == "Exact" and rv == "0":
        causes.append(errors.cause(
            "resourceVersionMatch", "FieldValueForbidden",
            'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    raise errors.invalid_options("ListOptions", causes)
