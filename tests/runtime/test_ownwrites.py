"""OwnWrites bookkeeping: records filed per reconcile key, bounded, kept in time order."""

from __future__ import annotations

from asyncop.api.kinds import CONFIGMAP
from asyncop.runtime.ownwrites import MAX_PENDING, OwnWrites
from asyncop.testing import FakeClock


def _write(ow: OwnWrites, clock: FakeClock, key: str) -> None:
    with ow.recording(key, clock):
        ow.listener(CONFIGMAP, {"metadata": {"resourceVersion": "7"}}, f"default/{key}")


async def test_records_are_bounded_by_age_once_there_are_many() -> None:
    clock = FakeClock()
    ow = OwnWrites(timeout=10.0)
    for i in range(MAX_PENDING + 500):  # all within one timeout: every record is kept
        _write(ow, clock, f"k{i}")
    assert len(ow.pending) == MAX_PENDING + 500
    await clock.advance(5)
    _write(ow, clock, "k0")  # rewritten later: moves to the young end
    await clock.advance(6)  # the first batch is now 11 s old, k0 only 6 s
    _write(ow, clock, "new")
    assert set(ow.pending) == {"k0", "new"}
    assert ow.pending["k0"][1] == {(CONFIGMAP, "default/k0"): "7"}


async def test_few_records_are_kept_however_old() -> None:
    clock = FakeClock()
    ow = OwnWrites(timeout=1.0)
    _write(ow, clock, "a")
    await clock.advance(100)
    _write(ow, clock, "b")
    assert list(ow.pending) == ["a", "b"]


def test_writes_outside_a_reconcile_are_not_recorded() -> None:
    ow = OwnWrites(timeout=1.0)
    ow.listener(CONFIGMAP, {"metadata": {"resourceVersion": "1"}}, "default/x")
    assert ow.pending == {}
