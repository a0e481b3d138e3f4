"""run_operator: an operator's controllers running against an embedded API server, for tests.

```python
async def test_memcached(apiserver):                    # the fixture: a fresh API server
    async with run_operator(operator, apiserver) as mgr:
        await mgr.client.create(Memcached.KIND, sample)
        await eventually(deployment_has_two_replicas, timeout=20)
```

It installs the operator's CRDs (generated from its typed resources, exactly what
`asyncop generate` writes), builds its controllers (all, or `controllers=`), starts a Manager
(optionally on a FakeClock) and stops it on exit. Invariants: the Manager has no probe or
metrics server and no signal handlers; nothing is left running after the `async with`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from asyncop.apiserver import ApiServer
from asyncop.client import Client, load_config
from asyncop.clock import Clock
from asyncop.operator import Operator
from asyncop.operator.inspect import Inspection
from asyncop.operator.install import install_crds
from asyncop.runtime.manager import Manager


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
    """Yield a started Manager running `operator` against `apiserver` (or a server URL)."""
    url = apiserver if isinstance(apiserver, str) else apiserver.url
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
        await mgr.stop()
