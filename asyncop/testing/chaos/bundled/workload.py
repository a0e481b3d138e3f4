"""The bundled six operators' workload: Ats due and future, Foos, CrdKinds, Jinghzhus, Networks.

Populated at the start, then about `per_second` changes per virtual second:

- Ats: a third of `live_ats` at the start, then new ones with schedules from 30 s in the
  past to 45 s in the future (a future one is an expected change when it falls due), at most
  `live_ats` live; an At seen DONE is deleted a second later, so thousands go through a long
  run while memory should stay flat.
- Foos: replicas 1-4 changed; churn: one deleted and a new one created.
- Jinghzhus: `desired` changed between 0 and 4.
- CrdKinds: `choice` switched mysql/tomcat (the Deployment and Service change name and
  port), or replicas changed.
- Networks: cidr/gateway changed between valid and invalid; the expected Ready verdict
  travels in an annotation (`EXPECT_READY`).
- A poison At, `schedule: not-a-time`: it must end PENDING with a message and an
  `InvalidSchedule` Warning Event, and block nothing else.

Invariant: the ops and their order come from the workload's seeded stream only.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from asyncop.api import Kind
from asyncop.clock import format_time
from asyncop.controllers.kinds import AT, CRDKIND, FOO, JINGHZHU, NETWORK
from asyncop.testing.chaos.facts import Obj
from asyncop.testing.chaos.world import Workload, World

EXPECT_READY = "soak.asyncop.io/expect-ready"
POISON = "poison-at"
NETWORKS = [  # (cidr, gateway, ready)
    ("10.0.0.0/24", "10.0.0.1", True), ("10.0.0.0/24", "10.0.0.255", False),
    ("10.1.0.0/16", "10.1.3.1", True), ("10.2.0.0/24", "10.3.0.1", False),
]


def body(kind: Kind, name: str, spec: dict[str, Any], **annotations: str) -> Obj:
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": meta, "spec": spec}


def _spec(**fields: Any) -> Any:
    def put(obj: Obj) -> None:
        obj["spec"].update(fields)
    return put


def workload(*, foos: int = 20, crdkinds: int = 10, jinghzhus: int = 8, networks: int = 10,
             live_ats: int = 150, per_second: float = 8.0) -> Workload:
    serial = [0]
    done: set[str] = set()  # Ats seen DONE at the last tidy step

    async def new_at(world: World) -> None:
        serial[0] += 1
        offset = world.rng.uniform(-30, 45)
        when = world.now() + timedelta(seconds=offset)
        name = f"at-{serial[0]}"
        await world.create(body(AT, name, {"schedule": format_time(when),
                                           "command": f"echo {serial[0]}"}))
        if offset > 0:
            world.expect_change(AT, name, after=offset)

    async def populate(world: World) -> None:
        serial[0] = 0
        done.clear()
        rng = world.rng
        for i in range(foos):
            await world.create(body(FOO, f"foo-{i}", {
                "deploymentName": f"web-{i}", "replicas": rng.randint(1, 4)}))
        for i in range(crdkinds):
            await world.create(body(CRDKIND, f"ck-{i}", {
                "choice": rng.choice(["mysql", "tomcat"]), "replicas": rng.randint(1, 3)}))
        for i in range(jinghzhus):
            await world.create(body(JINGHZHU, f"jh-{i}", {"desired": rng.randint(0, 4)}))
        for i in range(networks):
            cidr, gw, ready = rng.choice(NETWORKS)
            await world.create(body(NETWORK, f"net-{i}", {"cidr": cidr, "gateway": gw},
                                    **{EXPECT_READY: str(ready)}))
        await world.create(body(AT, POISON, {"schedule": "not-a-time",
                                             "command": "echo never"}))
        for _ in range(live_ats // 3):
            await new_at(world)

    async def at(world: World) -> None:
        if len(world.names(AT)) < live_ats:
            await new_at(world)

    async def foo(world: World) -> None:
        await world.update(FOO, world.rng.choice(world.names(FOO)),
                           _spec(replicas=world.rng.randint(1, 4)))

    async def foo_churn(world: World) -> None:
        await world.delete(FOO, world.rng.choice(world.names(FOO)))
        serial[0] += 1
        await world.create(body(FOO, f"foo-c{serial[0]}", {
            "deploymentName": f"web-c{serial[0]}", "replicas": world.rng.randint(1, 4)}))

    async def ck(world: World) -> None:
        name = world.rng.choice(world.names(CRDKIND))
        if world.rng.random() < 0.6:
            current = (world.wanted(CRDKIND, name) or {}).get("spec", {}).get("choice")
            other = {"mysql": "tomcat", "tomcat": "mysql"}.get(str(current), "mysql")
            await world.update(CRDKIND, name, _spec(choice=other))
        else:
            await world.update(CRDKIND, name, _spec(replicas=world.rng.randint(1, 3)))

    async def jh(world: World) -> None:
        await world.update(JINGHZHU, world.rng.choice(world.names(JINGHZHU)),
                           _spec(desired=world.rng.randint(0, 4)))

    async def net(world: World) -> None:
        cidr, gw, ready = world.rng.choice(NETWORKS)

        def put(obj: Obj) -> None:
            obj["spec"].update(cidr=cidr, gateway=gw)
            obj["metadata"]["annotations"] = {EXPECT_READY: str(ready)}
        await world.update(NETWORK, world.rng.choice(world.names(NETWORK)), put)

    async def tidy(world: World) -> None:
        """Delete the Ats seen DONE a second ago (their convergence has been timed)."""
        now_done = {str(a["metadata"]["name"])
                    for a in world.objects(AT, namespace=world.namespace)
                    if (a.get("status") or {}).get("phase") == "DONE"}
        gone = done & now_done
        for name in sorted(gone):
            await world.delete(AT, name)
        done.clear()
        done.update(now_done - gone)

    return Workload(populate=populate,
                    ops={"at": at, "foo": foo, "foo_churn": foo_churn, "ck": ck, "jh": jh,
                         "net": net},
                    weights={"at": 6, "foo": 3, "foo_churn": 1, "ck": 2, "jh": 2, "net": 2},
                    per_second=per_second, tidy=tidy)
