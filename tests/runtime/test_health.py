"""Health checks and the event-loop lag probe, on a FakeClock."""

from __future__ import annotations

import asyncio

from asyncop.runtime.health import Health, LoopLagProbe, render
from asyncop.testing import FakeClock


async def test_loop_probe_healthy_while_ticking_and_failing_when_frozen() -> None:
    clock = FakeClock()
    probe = LoopLagProbe(clock, interval=1.0, threshold=5.0)
    task = asyncio.create_task(probe.run())
    await clock.advance(30)
    assert probe.check() is None
    # A loop that no longer runs the ticker: time passes, nobody ticks.
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await clock.advance(5.5)
    assert probe.check() is None  # within interval + threshold
    await clock.advance(1.0)
    error = probe.check()
    assert error is not None and "not responsive" in error


def test_health_registry_renders_like_the_apiserver() -> None:
    health = Health()
    state = {"synced": False}
    health.add_liveness("ping", lambda: None)
    health.add_readiness("caches", lambda: None if state["synced"] else "caches not synced")

    def broken() -> str | None:
        raise RuntimeError("bug")

    health.add_readiness("broken", broken)
    ok, body = render(health.liveness(), verbose=False)
    assert ok and body == "ok"
    ok, body = render(health.readiness(), verbose=False)
    assert not ok
    assert "[-]caches failed: caches not synced" in body
    assert "[-]broken failed: check raised" in body
    state["synced"] = True
    health = Health()
    health.add_readiness("caches", lambda: None if state["synced"] else "x")
    ok, body = render(health.readiness(), verbose=True)
    assert ok and "[+]caches ok" in body
