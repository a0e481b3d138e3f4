"""run_operator: an operator's controllers running against an embedded API server, for tests.

```python
async def test_memcached(apiserver):                    # the fixture: a fresh API server
    async with run_operator(operator, apiserver) as mgr:
        await mgr.client.create(Memcached.KIND, sample)
        await eventually(deployment_has_two_replicas, timeout=20)
```

It installs the operator's CRDs (generated from its typed resources, exactly what
`asyncop generate` writes), builds its controllers (all, or `controllers=`), starts a Manager
(optionally on a FakeClock: `clock=`, by default the clock of an in-process server that runs
on one, such as the `apiserver_on_fake_clock` fixture's) and stops it on exit.

On a FakeClock the exit keeps virtual time moving until the Manager has stopped: a reconcile
still waiting on the clock (a requeue backoff, a client retry, `clock.sleep`) would otherwise
hold the Manager's graceful shutdown for ever, since its grace period is on that clock too.

`idle(mgr)` says whether the operator has caught up: no controller has a key queued or being
reconciled (keys waiting for a `requeue_after` do not count). Tests on a FakeClock wait for it
before they move time again (`advance_until(..., caught_up=lambda: idle(mgr))`), so nothing
the operator was about to do at one instant happens at a later one.

Invariants: the Manager has no probe or metrics server and no signal handlers; nothing is
left running after the `async with`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from asyncop.apiserver import ApiServer
from asyncop.client import Client, load_config
from asyncop.clock import Clock
from asyncop.operator import Operator
from asyncop.operator.inspect import Inspection
from asyncop.operator.install import install_crds
from asyncop.runtime.manager import Manager
from asyncop.testing.clock import FakeClock

#: Real seconds between the virtual seconds a FakeClock is moved while the Manager stops.
_STOP_POLL = 0.05


@asynccontextmanager
async def run_operator(
    operator: Operator,
    apiserver: ApiServer | str,
    *,
    clock: Clock | None = None,
    namespaces: Sequence[str] | None = None,
    controllers: Sequence[str] | None = None,
    workers: int | None = None,
    install: bool = True,
) -> AsyncIterator[Manager]:
    """Yield a started Manager running `operator` against `apiserver` (or a server URL), on
    `clock` (by default: the server's own clock if it is a FakeClock, else real time)."""
    url = apiserver if isinstance(apiserver, str) else apiserver.url
    if clock is None and isinstance(apiserver, ApiServer) and isinstance(apiserver.clock,
                                                                          FakeClock):
        clock = apiserver.clock
    config = await load_config(url=url)
    mgr = Manager(config=config, clock=clock,
                  namespaces=list(namespaces) if namespaces is not None else None)
    built = operator.install(mgr, names=controllers, workers=workers)
    if install:
        crds = Inspection(operator, tuple(built)).crds()
        if crds:
            async with Client(config) as client:  # real time: a FakeClock would not move
                await install_crds(client, crds, field_manager="asyncop-test")
    await mgr.start()
    try:
        yield mgr
    finally:
        if isinstance(clock, FakeClock):
            await _stop_on(clock, mgr)
        else:
            await mgr.stop()


async def _stop_on(clock: FakeClock, mgr: Manager) -> None:
    """Stop `mgr`, moving `clock` one virtual second per poll until it has stopped."""
    stopping = asyncio.ensure_future(mgr.stop())
    while not (await asyncio.wait({stopping}, timeout=_STOP_POLL))[0]:
        await clock.advance(1.0)
    await stopping


def idle(mgr: Manager) -> bool:
    """True when every controller of `mgr` runs and has no key queued or being reconciled
    (keys waiting for a `requeue_after` do not count)."""
    for controller in mgr.controllers:
        queue = getattr(controller, "queue", None)
        if queue is None or len(queue) or queue.processing:
            return False
    return True
