"""Server-side sharded list and watch (Kubernetes KEP-5866, feature gate ShardedListAndWatch).

`shard_selector(query, enabled)` reads the `shardSelector` list option; an invalid one is a
422 naming `shardSelector` (like other ListOptions errors). LIST keeps only the objects whose
hash lies in the selector's ranges and echoes the selector, as given, in
`metadata.shardInfo.selector`; WATCH sends only their events (uid and namespace never change,
so an object never moves in or out of a shard). With the gate off the option is ignored and
nothing is echoed, as an older kube-apiserver does — which is how clients tell the two apart.
The hash and the grammar live in `asyncop.api.shards` (shared with the client side).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from asyncop.api.shards import ShardSelector
from asyncop.apiserver.core import errors

GATE = "ShardedListAndWatch"

Match = Callable[[dict[str, Any]], bool]


def shard_selector(query: Mapping[str, str], *, enabled: bool) -> ShardSelector | None:
    text = query.get("shardSelector")
    if not text or not enabled:
        return None
    try:
        return ShardSelector.parse(text)
    except ValueError as exc:
        raise errors.invalid_options("ListOptions", [errors.cause(
            "shardSelector", "FieldValueInvalid",
            f"Invalid value: {text!r}: {exc}")]) from None


def with_shard(match: Match | None, selector: ShardSelector | None) -> Match | None:
    """`match` narrowed to the selector's shards."""
    if selector is None:
        return match
    if match is None:
        return selector.matches
    return lambda obj: match(obj) and selector.matches(obj)


def shard_info(query: Mapping[str, str], selector: ShardSelector | None) -> dict[str, Any]:
    """The ListMeta addition for an honoured selector (the selector as the client sent it)."""
    return {} if selector is None else {"shardInfo": {"selector": query.get("shardSelector")}}
