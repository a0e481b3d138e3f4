"""A small operator project for the chaos tests: the files a user adds to a scaffold.

`asyncop init --name memcached-operator` + `asyncop create api --kind Memcached` give the
layout; these texts replace the model and the controller (a Deployment of spec.size pods per
Memcached) and add a scenario next to the tests (`tests/test_chaos_memcached.py`, the example of
docs/soak.md, read from there so that the documented scenario is the one tested). `BROKEN` is
the controller with the classic bug: it remembers its child in its status and, when that
status write fails (a 409 because the object changed meanwhile, an injected 5xx), the retry
creates a second child. `write(root)` writes the package alone (for in-process tests).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = "memcached_operator"

MODEL = '''"""Memcached (cache.example.com/v1alpha1): the typed resource."""

from __future__ import annotations

from typing import Annotated

from asyncop.crd import CustomResource, Int64, Model
from pydantic import Field


class MemcachedSpec(Model):
    """MemcachedSpec is the desired state of a Memcached."""

    size: Annotated[int, Field(ge=0, le=5)] = 1
    """Number of memcached pods."""


class MemcachedStatus(Model):
    """MemcachedStatus is the observed state of a Memcached."""

    child: str | None = None
    """The name of its Deployment."""
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""


class Memcached(CustomResource, group="cache.example.com", version="v1alpha1",
                plural="memcacheds"):
    """Memcached runs a Deployment of spec.size pods."""

    spec: MemcachedSpec
    status: MemcachedStatus | None = None
'''

_CONTROLLER_HEAD = '''"""memcached: a Deployment of spec.size pods per Memcached."""

from __future__ import annotations

from asyncop import (
    Cache,
    Client,
    Controller,
    Manager,
    PolicyRule,
    RawObject,
    Request,
    Result,
    for_,
    owns,
)
from asyncop.api import AlreadyExists, deep_copy, owner_reference
from asyncop.api.kinds import DEPLOYMENT

from memcached_operator.api.v1alpha1.memcached import Memcached, MemcachedStatus

RBAC_RULES = (
    PolicyRule.for_(DEPLOYMENT, "create", "update"),
    PolicyRule.for_(Memcached, "update", "patch", subresource="status"),
)


def deployment(mc: Memcached, *, name: str = "", generate_name: str = "") -> RawObject:
    labels = {"cache.example.com/memcached": mc.metadata.name or ""}
    body: RawObject = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"namespace": mc.metadata.namespace or "default",
                     "labels": labels, "ownerReferences": [owner_reference(mc.raw)]},
        "spec": {"replicas": mc.spec.size, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                     {"name": "memcached", "image": "memcached:1.6-alpine"}]}}},
    }
    if name:
        body["metadata"]["name"] = name
    else:
        body["metadata"]["generateName"] = generate_name
    return body


class MemcachedReconciler:
    def __init__(self, *, client: Client, cache: Cache) -> None:
        self.client = client
        self.cache = cache

    async def scale(self, mc: Memcached, child: str, namespace: str) -> None:
        dep = self.cache.get(DEPLOYMENT, child, namespace)
        if dep is not None and dep["spec"]["replicas"] != mc.spec.size:
            body = deep_copy(dep)
            body["spec"]["replicas"] = mc.spec.size
            await self.client.update(DEPLOYMENT, body)
'''

_CONTROLLER_TAIL = '''

def memcached_controller(mgr: Manager, *, workers: int = 4) -> Controller:
    """The `memcached` controller."""
    r = MemcachedReconciler(client=mgr.client, cache=mgr.cache)
    return Controller("memcached", r, watches=[for_(Memcached), owns(DEPLOYMENT)],
                      workers=workers, rbac=RBAC_RULES)
'''

CONTROLLER = _CONTROLLER_HEAD + '''
    async def reconcile(self, req: Request) -> Result:
        mc = Memcached.from_cache(self.cache, req)
        if mc is None:
            return Result()  # deleted: its Deployment goes with it
        if self.cache.get(DEPLOYMENT, req.name, req.namespace) is None:
            try:  # the child's name is the owner's: a second create is refused
                await self.client.create(DEPLOYMENT, deployment(mc, name=req.name))
            except AlreadyExists:
                pass
            return Result()  # the new Deployment's event brings us back
        await self.scale(mc, req.name, req.namespace)
        status = MemcachedStatus(child=req.name, observed_generation=mc.metadata.generation)
        await mc.write_status(self.client, status)
        return Result()
''' + _CONTROLLER_TAIL

BROKEN = _CONTROLLER_HEAD.replace("AlreadyExists, ", "") + '''
    async def reconcile(self, req: Request) -> Result:
        mc = Memcached.from_cache(self.cache, req)
        if mc is None:
            return Result()
        child = mc.status.child if mc.status is not None else None
        if child is None:  # the bug: the child is only known once the status says so
            made = await self.client.create(
                DEPLOYMENT, deployment(mc, generate_name=f"{req.name}-"))
            child = made["metadata"]["name"]
        await self.scale(mc, child, req.namespace)
        status = MemcachedStatus(child=child, observed_generation=mc.metadata.generation)
        await mc.write_status(self.client, status)  # a 409 here: the retry makes another
        return Result()
''' + _CONTROLLER_TAIL

OPERATOR = '''"""The memcached-operator operator."""

from asyncop.operator import Operator

from memcached_operator.api.v1alpha1.memcached import Memcached
from memcached_operator.controllers.memcached import memcached_controller

operator = Operator(
    name="memcached-operator",
    controllers={"memcached": memcached_controller},
    resources=(Memcached,),
)
'''

DOCS = Path(__file__).resolve().parents[2] / "docs" / "soak.md"


def _docs_example() -> str:
    """The scenario docs/soak.md shows (between its chaos-example markers): it runs here."""
    text = DOCS.read_text(encoding="utf-8")
    start, end = "<!-- chaos-example:start -->", "<!-- chaos-example:end -->"
    block = text[text.index(start):text.index(end)]
    return block.split("```python\n", 1)[1].rsplit("```", 1)[0]


SCENARIO = _docs_example()

CAUGHT = "at-most-1-deployment-created-per-memcached"
"""The invariant the broken controller violates."""


def write(root: Path, *, broken: bool = False) -> Path:
    """The package and the scenario under `root` (as a scaffold + these edits would have
    them); returns the scenario file."""
    pkg = root / PACKAGE
    for d in (pkg, pkg / "api", pkg / "api" / "v1alpha1", pkg / "controllers"):
        d.mkdir(parents=True, exist_ok=True)
        (d / "__init__.py").write_text('"""package"""\n')
    (pkg / "api" / "v1alpha1" / "memcached.py").write_text(MODEL)
    (pkg / "controllers" / "memcached.py").write_text(BROKEN if broken else CONTROLLER)
    (pkg / "operator.py").write_text(OPERATOR)
    (root / "tests").mkdir(exist_ok=True)
    scenario = root / "tests" / "test_chaos_memcached.py"
    scenario.write_text(SCENARIO)
    return scenario
