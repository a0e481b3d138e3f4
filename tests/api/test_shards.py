"""FNV-1a and shard selectors: the hash kube-apiserver uses, the grammar, the shard space."""

from __future__ import annotations

import pytest

from asyncop.api.shards import SPACE, ShardSelector, ShardSpace, fnv1a64


def test_fnv1a64_standard_vectors() -> None:
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


def test_the_space_splits_evenly_and_merges_adjacent_shards() -> None:
    space = ShardSpace(16)
    assert space.bounds(0) == (0, SPACE // 16) and space.bounds(15)[1] == SPACE
    assert [space.shard_of_hash(space.bounds(i)[0]) for i in range(16)] == list(range(16))
    assert space.shard_of_hash(SPACE - 1) == 15
    sel = space.selector([5, 0, 1, 15])
    assert sel is not None and sel.ranges == (
        (0, SPACE // 8), (5 * SPACE // 16, 6 * SPACE // 16), (15 * SPACE // 16, SPACE))
    assert sel.format().endswith("'0xf000000000000000', '0x10000000000000000')")
    assert ShardSelector.parse(sel.format()) == sel
    assert space.selector([]) is None
    assert ShardSpace(1).selector([0]) == ShardSelector("object.metadata.uid", ((0, SPACE),))


def test_matching_uses_the_named_field() -> None:
    obj = {"metadata": {"uid": "u-1", "namespace": "team-a"}}
    h = fnv1a64(b"u-1")
    assert ShardSelector("object.metadata.uid", ((h, h + 1),)).matches(obj)
    assert not ShardSelector("object.metadata.uid", ((0, h),)).matches(obj)
    hn = fnv1a64(b"team-a")
    assert ShardSelector("object.metadata.namespace", ((hn, hn + 1),)).matches(obj)


@pytest.mark.parametrize("text", [
    "shardRange(object.metadata.uid, '0x0', '0x10') || "
    "shardRange(object.metadata.namespace, '0x10', '0x20')",
    "shardRange(object.metadata.uid, 0x0, 0x10)",
    "shardRange(object.metadata.uid, '0x5', '0x4')",
    "",
])
def test_bad_selectors(text: str) -> None:
    with pytest.raises(ValueError):
        ShardSelector.parse(text)


@pytest.mark.parametrize("shards", [0, 5000])
def test_shard_counts_are_bounded(shards: int) -> None:
    with pytest.raises(ValueError):
        ShardSpace(shards)
