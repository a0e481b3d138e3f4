"""asyncop.testing.chaos's parts, each shown to fail when it must (no soak run here).

The ready-made invariants (created_at_most, live_at_most, expected_children,
observes_generation) over doctored facts; the Checker (a raising check is a violation of
its invariant, the same message is kept once, a `within` bound, convergence timing); the
declarations' validation (Scenario, Workload, SoakConfig); the seeded fault schedule and
workload draws (the same seed, the same sequence); the samples workload's schema-drawn
changes; the World's writes against an embedded API server (a refused change is counted
and forgotten); the Report's failure message.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from asyncop.api import Kind
from asyncop.api.kinds import CONFIGMAP, DEPLOYMENT
from asyncop.apiserver import ApiServer
from asyncop.controllers.kinds import FOO
from asyncop.controllers.registry import OPERATOR
from asyncop.operator import Operator
from asyncop.testing.chaos import (
    FAULT_KINDS,
    Always,
    AtEnd,
    Change,
    Converges,
    History,
    Obj,
    Report,
    Scenario,
    Snapshot,
    SoakConfig,
    SoakFailed,
    Tracked,
    Tracker,
    Violation,
    Workload,
    World,
    created_at_most,
    expected_children,
    live_at_most,
    observes_generation,
)
from asyncop.testing.chaos.checks import Checker
from asyncop.testing.chaos.clock import PacedClock, Pacer
from asyncop.testing.chaos.engine import install_crds
from asyncop.testing.chaos.faults import schedule
from asyncop.testing.chaos.samples import TOUCHED, load_samples, schema_change

NOW = datetime(2026, 1, 1, tzinfo=UTC)
OWNER = Kind("example.com", "v1", "owners", "Owner")


def obj(name: str, uid: str, *, owner: str | None = None, gen: int = 1,
        **fields: Any) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": uid,
                            "generation": gen}
    if owner is not None:
        meta["ownerReferences"] = [{"uid": owner, "controller": True}]
    return {"metadata": meta, **fields}


def snap(**by_plural: list[Obj]) -> Snapshot:
    groups = {"owners": "example.com", "deployments": "apps", "configmaps": ""}
    return Snapshot({(groups[p], p): objs for p, objs in by_plural.items()}, NOW)


def run(invariants: list[Any], facts: Snapshot,
        events: Sequence[tuple[str, Kind, Obj]] = ()) -> list[str]:
    checker = Checker(invariants, elapsed=lambda: 0.0, monotonic=lambda: 0.0)
    history = History()
    for type_, kind, o in events:
        change = Change(type_, kind, o, NOW)
        history.record(change)
        checker.observe(change, history)
    checker.tick(facts, changed={}, last_fault=0.0)
    checker.at_end(facts, history)
    return [str(v) for v in checker.violations]


# -- ready-made invariants ---------------------------------------------------------------------
def test_created_at_most_counts_children_per_owner_uid() -> None:
    rule = created_at_most(OWNER, DEPLOYMENT, 1)
    assert rule.name == "at-most-1-deployment-created-per-owner"
    first, second = obj("a", "d1", owner="o1"), obj("a-2", "d2", owner="o1")
    other = obj("b", "d3", owner="o2")
    events = [("ADDED", OWNER, obj("o", "o1")), ("ADDED", OWNER, obj("p", "o2")),
              ("ADDED", DEPLOYMENT, first), ("DELETED", DEPLOYMENT, first),
              ("ADDED", DEPLOYMENT, other), ("ADDED", DEPLOYMENT, second)]
    assert run([rule], snap(), events) == [
        "at-most-1-deployment-created-per-owner: Owner default/o: 2 deployments created "
        "(a-2 the last), at most 1"]
    assert run([created_at_most(OWNER, DEPLOYMENT, 2)], snap(), events) == []
    # a child of an owner of another kind, or of none, is not counted
    stray = [("ADDED", DEPLOYMENT, obj("x", "d9", owner="nobody")),
             ("ADDED", DEPLOYMENT, obj("y", "d8"))] * 2
    assert run([rule], snap(), stray) == []


def test_a_child_created_after_its_owner_was_deleted_counts_only_when_asked() -> None:
    events = [("ADDED", OWNER, obj("o", "o1")), ("ADDED", DEPLOYMENT, obj("a", "d1", owner="o1")),
              ("DELETED", OWNER, obj("o", "o1")), ("DELETED", DEPLOYMENT, obj("a", "d1")),
              ("ADDED", DEPLOYMENT, obj("a", "d2", owner="o1"))]  # a stale replica
    assert run([created_at_most(OWNER, DEPLOYMENT, 1)], snap(), events) == []
    assert len(run([created_at_most(OWNER, DEPLOYMENT, 1, after_deletion=True)],
                   snap(), events)) == 1


def test_live_at_most_looks_at_every_moment() -> None:
    rule = live_at_most(OWNER, DEPLOYMENT, 1, name="one-deployment")
    owner = obj("o", "o1")
    two = [obj("a", "d1", owner="o1"), obj("b", "d2", owner="o1")]
    assert run([rule], snap(owners=[owner], deployments=two)) == [
        "one-deployment: Owner default/o: 2 live deployments ['a', 'b'], at most 1"]
    deleting = [two[0], dict(two[1], metadata={**two[1]["metadata"],
                                               "deletionTimestamp": "2026-01-01T00:00:00Z"})]
    assert run([rule], snap(owners=[owner], deployments=deleting)) == []


def test_expected_children_finds_duplicates_strangers_and_orphans() -> None:
    rule = expected_children(OWNER, lambda o, _: {CONFIGMAP: [o["metadata"]["name"]]},
                             kinds=[CONFIGMAP, DEPLOYMENT])
    owner = obj("o", "o1")
    ok = snap(owners=[owner], configmaps=[obj("o", "c1", owner="o1")])
    assert run([rule], ok) == []
    bad = snap(owners=[owner],
               configmaps=[obj("o", "c1", owner="o1"), obj("o", "c2", owner="o1"),
                           obj("left", "c3", owner="gone")],
               deployments=[obj("web", "d1", owner="o1")])
    assert run([rule], bad, [("ADDED", OWNER, obj("old", "gone"))]) == [  # by owner uid
        "owner-children-as-expected: orphaned children of Owner default/old: ['left']",
        "owner-children-as-expected: Owner default/o: 2 children configmaps/o",
        "owner-children-as-expected: Owner default/o: foreign child deployments/web"]


def test_observes_generation_is_a_convergence() -> None:
    rule = observes_generation(OWNER)
    behind = obj("o", "o1", gen=3, status={"observedGeneration": 2})
    checker = Checker([rule], elapsed=lambda: 0.0, monotonic=lambda: 0.0)
    problems = checker.tick(snap(owners=[behind]), changed={}, last_fault=0.0)
    assert {str(ref): p for (_, ref), p in problems.items()} == {
        "Owner default/o": "observedGeneration 2, generation 3"}
    caught_up = obj("o", "o1", gen=3, status={"observedGeneration": 3})
    assert checker.tick(snap(owners=[caught_up]), changed={}, last_fault=0.0) == {}


# -- the Checker ---------------------------------------------------------------------------------
def test_a_raising_check_is_a_violation_of_its_invariant_and_kept_once() -> None:
    def boom(_: Snapshot) -> list[str]:
        raise KeyError("spec")

    class Nosy(Tracker):
        def observe(self, change: Change, history: History) -> list[str]:
            return ["same message"]

    checker = Checker([Always("boom", boom), Tracked("nosy", Nosy),
                       Converges("conv", OWNER, lambda o, s: o["spec"]["x"])],
                      elapsed=lambda: 12.0, monotonic=lambda: 0.0)
    checker.continuous = True
    history = History()
    for _ in range(3):
        change = Change("ADDED", OWNER, obj("o", "o1"), NOW)
        history.record(change)
        checker.observe(change, history)
        checker.tick(snap(owners=[obj("o", "o1")]), changed={}, last_fault=0.0)
    assert [str(v) for v in checker.violations] == [
        "at 12s: nosy: same message",
        "at 12s: conv: the check raised KeyError('spec') on Owner default/o",
        "at 12s: boom: the check raised KeyError('spec')"]


def test_within_bounds_each_change_and_convergence_is_timed() -> None:
    now = [0.0]
    rule = Converges("ready", OWNER, lambda o, _: None if o.get("status") else "no status",
                     within=10)
    checker = Checker([rule], elapsed=lambda: now[0], monotonic=lambda: now[0])
    checker.continuous = True
    ref_obj = obj("o", "o1")
    facts = snap(owners=[ref_obj])
    (_, ref), = checker.tick(facts, changed={}, last_fault=0.0)
    changed = {ref: 0.0}
    for t in (5.0, 10.0):  # within the bound
        now[0] = t
        checker.tick(facts, changed=changed, last_fault=0.0)
    assert checker.violations == []
    now[0] = 11.0
    checker.tick(facts, changed=changed, last_fault=0.0)
    now[0] = 12.0
    checker.tick(facts, changed=changed, last_fault=0.0)
    assert [str(v) for v in checker.violations] == [
        "at 11s: ready: Owner default/o not converged 10s after its last change or the last "
        "fault: no status"]
    now[0] = 15.0  # converged: timed once, from the change
    done = snap(owners=[dict(ref_obj, status={"ok": True})])
    assert checker.tick(done, changed=changed, last_fault=0.0) == {}
    checker.tick(done, changed=changed, last_fault=0.0)
    assert checker.latencies == [15.0]
    checker.not_converged({("ready", ref): "no status"}, 150)
    assert str(checker.violations[-1]) == (
        "at 15s: ready: not converged 150s after the last fault: 1 objects, e.g. "
        "['Owner default/o: no status']")


# -- declarations -----------------------------------------------------------------------------
def test_a_scenario_refuses_what_it_cannot_run() -> None:
    always = Always("x", lambda s: [])
    with pytest.raises(ValueError, match="two invariants are named 'x'"):
        Scenario(operator=OPERATOR, invariants=[always, always])
    with pytest.raises(ValueError, match="is a built-in one's"):
        Scenario(operator=OPERATOR, invariants=[Always("one-replica-per-key", lambda s: [])])
    with pytest.raises(ValueError, match="not an invariant"):
        Scenario(operator=OPERATOR, invariants=["x"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="takes an Operator"):
        Scenario(operator="asyncop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="within must be positive"):
        Scenario(operator=OPERATOR, invariants=[Converges("c", FOO, lambda o, s: None,
                                                          within=0)])
    assert Scenario(operator=OPERATOR).name == "asyncop"


def test_for_operator_checks_the_generation_of_every_reconciled_kind_that_reports_it() -> None:
    names = [i.name for i in Scenario.for_operator(OPERATOR).invariants]
    # the bundled kinds whose status has observedGeneration
    assert names == ["at-observes-generation", "foo-observes-generation",
                     "network-observes-generation", "crdkind-observes-generation",
                     "jinghzhu-observes-generation"]
    empty = Scenario.for_operator(Operator(name="empty"))
    assert empty.invariants == [] and empty.workload.ops == {}


def test_soak_config_and_workload_refuse_bad_values() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"faults": {"nope": 1}}, "unknown fault kind 'nope'"),
        ({"faults": {"cut": -1}}, "fault cut: the weight must be"),
        ({"rate": 0}, "SoakConfig.rate must be positive, not 0"),
        ({"replicas": 0}, "SoakConfig.replicas must be at least 1, not 0"),
        ({"shards": 5000}, "SoakConfig.shards must be between 1 and 4096, not 5000"),
        ({"workers": 0}, "SoakConfig.workers must be at least 1, not 0"),
        ({"seconds": -1}, "SoakConfig.seconds must be a number >= 0, not -1")]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            SoakConfig(**bad)
    with pytest.raises(ValueError, match="weights name unknown ops: b"):
        Workload(ops={"a": _noop}, weights={"b": 1})
    with pytest.raises(ValueError, match="must not be negative"):
        Workload(ops={"a": _noop}, weights={"a": -1})


async def _noop(world: World) -> None:
    return None


def test_the_seed_fixes_the_fault_schedule() -> None:
    plan = schedule(random.Random("7/faults"), 300, every=7, kinds=FAULT_KINDS)
    again = schedule(random.Random("7/faults"), 300, every=7, kinds=FAULT_KINDS)
    other = schedule(random.Random("8/faults"), 300, every=7, kinds=FAULT_KINDS)
    assert plan == again and plan != other
    enabled = [k for k, w in FAULT_KINDS.items() if w > 0]
    assert sorted(f.kind for f in plan[:len(enabled)]) == sorted(enabled)  # each kind first
    assert "wipe_hot" not in {f.kind for f in plan}  # weight 0: off
    assert all(0 < f.at < 300 for f in plan) and plan == sorted(plan, key=lambda f: f.at)
    assert schedule(random.Random(1), 300, every=7, kinds={"cut": 0}) == []


class _Rng:
    """What Workload.step needs of a World: its seeded stream."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)


async def test_the_seed_fixes_the_workloads_ops_and_their_own_draws() -> None:
    seen: list[int] = []

    async def pick(world: World) -> None:
        seen.append(world.rng.randint(0, 1000))  # an op draws from the same stream

    work = Workload(ops={"a": pick, "b": pick, "c": pick}, weights={"b": 3, "c": 0})
    runs = []
    for _ in range(2):
        seen.clear()
        ran = await work.step(cast(World, _Rng("7/workload")), 5.0, failed=_fail)
        runs.append((ran, list(seen)))
    assert runs[0] == runs[1] and len(runs[0][0]) >= 4
    many = await work.step(cast(World, _Rng("1")), 1000.0, failed=_fail)
    assert "c" not in many and many.count("b") > 2 * many.count("a")


def _fail(what: str, exc: Exception) -> None:
    raise AssertionError(f"{what} raised {exc!r}")


# -- the samples workload --------------------------------------------------------------------
SCHEMA = {"properties": {"spec": {"type": "object", "properties": {
    "size": {"type": "integer", "minimum": 2, "maximum": 40},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "name": {"type": "string"},
    "nested": {"type": "object", "properties": {"on": {"type": "boolean"}}},
    "step": {"type": "integer", "multipleOf": 2},
}}}}


def test_a_schema_change_sets_one_field_to_a_valid_value() -> None:
    seen: dict[str, set[Any]] = {}
    for seed in range(200):
        body: Obj = {"metadata": {}, "spec": {}}
        schema_change(random.Random(seed), body, SCHEMA)(body)
        (path, value), = _leaves(body["spec"])
        seen.setdefault(path, set()).add(value)
    assert set(seen) == {"size", "mode", "nested.on"}  # never a free string or multipleOf
    assert seen["size"] <= set(range(2, 8)) and len(seen["size"]) > 3  # at most 5 above min
    assert seen["mode"] == {"a", "b"} and seen["nested.on"] == {True, False}
    body = {"metadata": {}, "spec": {}}
    schema_change(random.Random(1), body, {"properties": {"spec": {"type": "object"}}})(body)
    assert list(body["metadata"]["annotations"]) == [TOUCHED] and body["spec"] == {}


def _leaves(spec: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in spec.items():
        if isinstance(value, dict):
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append((prefix + key, value))
    return out


def test_samples_are_read_or_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such directory of samples"):
        load_samples(tmp_path / "none")
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n"
                                     "- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n"
                                     "---\napiVersion: v1\nkind: ConfigMap\n"
                                     "metadata: {name: y}\n")
    assert [d["metadata"]["name"] for d in load_samples(tmp_path)] == ["x", "y"]
    (tmp_path / "b.yaml").write_text("kind: ConfigMap\nmetadata: {name: z}\n")
    with pytest.raises(ValueError, match=r"b\.yaml: a sample needs apiVersion, kind"):
        load_samples(tmp_path)
    (tmp_path / "b.yaml").write_text("a: [\n")
    with pytest.raises(ValueError, match=r"cannot read .*b\.yaml"):
        load_samples(tmp_path)


# -- the World ----------------------------------------------------------------------------------
async def test_the_world_remembers_what_it_wants_and_counts_what_is_refused() -> None:
    clock = PacedClock(NOW)
    async with ApiServer(clock=clock, simulators=False) as server:
        pacer = Pacer(clock, rate=50)
        pacer.start()
        try:
            from asyncop.operator.inspect import inspect

            await install_crds(server, [dict(c) for c in inspect(OPERATOR).crds()], pacer)
            world = World(server, clock, rng=random.Random(1), namespace="default")
            made = await world.create({"apiVersion": FOO.api_version, "kind": "Foo",
                                       "metadata": {"name": "f"},
                                       "spec": {"deploymentName": "w", "replicas": 1}})
            assert made is not None and made["metadata"]["namespace"] == "default"
            assert world.names(FOO) == ["f"]

            def grow(o: Obj) -> None:
                o["spec"]["replicas"] = 3

            def break_it(o: Obj) -> None:
                o["spec"]["replicas"] = "many"  # the CRD's schema says integer

            assert await world.update(FOO, "f", grow)
            assert not await world.update(FOO, "f", break_it)
            assert world.refused == {"update foos": 1}
            assert world.get(FOO, "f")["spec"]["replicas"] == 3  # type: ignore[index]
            assert world.wanted(FOO, "f")["spec"]["replicas"] == 3  # type: ignore[index]
            assert not await world.update(FOO, "missing", grow)
            assert await world.create({"apiVersion": FOO.api_version, "kind": "Foo",
                                       "metadata": {"name": "f"}, "spec": {}}) is None
            assert await world.delete(FOO, "f") and world.names(FOO) == []
            assert world.ops == {"create foos": 1, "update foos": 1, "delete foos": 1}
            with pytest.raises(ValueError, match=r"does not serve example\.com/v9/Thing"):
                await world.create({"apiVersion": "example.com/v9", "kind": "Thing"})
        finally:
            await pacer.stop()


# -- the report ----------------------------------------------------------------------------------
def test_soak_failed_names_the_invariants_the_seed_and_the_rerun() -> None:
    report = Report({"soak": "mine", "seed": 9, "mode": "sharding", "replicas": 3,
                     "reproduce": "asyncop soak t.py --seed 9"},
                    (Violation("b-rule", "x broke", 3.0), Violation("a-rule", "y broke")))
    assert report.violated == ["a-rule", "b-rule"] and not report.ok
    with pytest.raises(SoakFailed) as failed:
        report.check()
    assert str(failed.value).splitlines() == [
        "soak of mine failed: 2 violation(s) of a-rule, b-rule (seed 9, sharding, 3 replicas)",
        "  - at 3s: b-rule: x broke",
        "  - a-rule: y broke",
        "reproduce: asyncop soak t.py --seed 9"]
    fine = Report({"seed": 1}, ())
    assert fine.check() is fine and fine.json() == '{"seed":1}'


def test_invariant_kinds_are_plain_values() -> None:
    at_end = AtEnd("end", lambda s, h: [])
    assert at_end == AtEnd("end", at_end.check) and hash(at_end) == hash(AtEnd("end", at_end.check))
