"""GcPolicy on the fake clock: survivors of a full collection are frozen, the whole heap is
unfrozen every `full_every`, and stopping leaves the collector as it found it."""

from __future__ import annotations

import asyncio
import gc

from asyncop.gcpolicy import CHECK_EVERY, GcPolicy
from asyncop.testing import FakeClock


async def test_freezes_after_full_collections_and_unfreezes_periodically() -> None:
    clock = FakeClock()
    policy = GcPolicy(clock=clock, full_every=60.0)
    gc.unfreeze()
    task = asyncio.create_task(policy.run())
    try:
        await clock.advance(CHECK_EVERY)
        assert policy.freezes == 0 and gc.get_freeze_count() == 0  # no full collection yet
        kept = [[i] for i in range(1000)]  # tracked survivors
        gc.collect()
        await clock.advance(CHECK_EVERY)
        assert policy.freezes == 1 and gc.get_freeze_count() >= len(kept)
        await clock.advance(CHECK_EVERY)
        assert policy.freezes == 1  # nothing new: no second freeze
        gc.collect(0)  # a young collection is not a reason
        await clock.advance(CHECK_EVERY)
        assert policy.freezes == 1
        await clock.advance(60.0)
        assert policy.unfreezes == 1 and gc.get_freeze_count() == 0
        gc.collect()
        await clock.advance(CHECK_EVERY)
        assert policy.freezes == 2 and gc.get_freeze_count() > 0
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert gc.get_freeze_count() == 0
    assert policy._callback not in gc.callbacks


async def test_the_manager_runs_it_only_when_asked() -> None:
    from asyncop.apiserver import ApiServer
    from asyncop.client import ClientConfig
    from asyncop.runtime.manager import Manager

    async with ApiServer(simulators=False) as srv:
        assert Manager(config=ClientConfig(host=srv.url)).gc_policy is None
        mgr = Manager(config=ClientConfig(host=srv.url), gc_freeze=True)
        async with mgr:
            await asyncio.sleep(0)  # its task starts
            assert mgr.gc_policy is not None
            assert mgr.gc_policy._callback in gc.callbacks
        assert mgr.gc_policy._callback not in gc.callbacks
