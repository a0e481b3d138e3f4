"""Pure parts of the controllers: schedule parsing, network validation, expectations, RBAC."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from asyncop.controllers.at import parse_schedule
from asyncop.controllers.common import PolicyRule, condition, merge_rules, set_condition
from asyncop.controllers.common.expectations import Expectations
from asyncop.controllers.network import validate
from asyncop.controllers.registry import CONTROLLERS, RBAC_RULES, rbac_rules
from asyncop.testing import FakeClock


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019-04-12T10:12:00Z", datetime(2019, 4, 12, 10, 12, tzinfo=UTC)),
        ("2019-04-12T12:12:00+02:00", datetime(2019, 4, 12, 10, 12, tzinfo=UTC)),
        ("2019-04-12t10:12:00z", datetime(2019, 4, 12, 10, 12, tzinfo=UTC)),
        ("2019-04-12T05:12:00.5-05:00", datetime(2019, 4, 12, 10, 12, 0, 500000, tzinfo=UTC)),
        ("2019-04-12T10:12:00.123456789Z",
         datetime(2019, 4, 12, 10, 12, 0, 123456, tzinfo=UTC)),
    ],
)
def test_schedule_accepts_utc_and_rfc3339_offsets(text: str, expected: datetime) -> None:
    assert parse_schedule(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "tomorrow", "2019-04-12", "2019-04-12T10:12:00", "2019-13-12T10:12:00Z",
     "2019-04-12 10:12:00Z", "2019-04-12T25:00:00Z", "2019-04-12T10:12:00+2:00"],
)
def test_schedule_rejects_everything_else(text: str) -> None:
    with pytest.raises(ValueError, match="schedule"):
        parse_schedule(text)


@pytest.mark.parametrize(
    ("cidr", "gateway", "reason"),
    [
        ("192.168.0.0/16", "192.168.0.1", "Valid"),
        ("10.0.0.0/31", "10.0.0.0", "Valid"),
        ("fd00:10::/64", "fd00:10::1", "Valid"),
        ("fd00:10::/64", "fd00:10::ffff:ffff:ffff:ffff", "Valid"),
        ("192.168.0.0/33", "192.168.0.1", "InvalidCIDR"),
        ("192.168.0.1/16", "192.168.0.1", "InvalidCIDR"),
        ("not-a-cidr", "192.168.0.1", "InvalidCIDR"),
        ("192.168.0.0/16", "192.168.1.300", "InvalidGateway"),
        ("192.168.0.0/16", "10.0.0.1", "GatewayOutsideCIDR"),
        ("192.168.0.0/16", "192.168.0.0", "GatewayOutsideCIDR"),
        ("192.168.0.0/16", "192.168.255.255", "GatewayOutsideCIDR"),
        ("fd00:10::/64", "fd00:10::", "GatewayOutsideCIDR"),
        ("192.168.0.0/16", "fd00::1", "GatewayOutsideCIDR"),
    ],
)
def test_network_validation(cidr: str, gateway: str, reason: str) -> None:
    verdict = validate(cidr, gateway)
    assert verdict.reason == reason
    assert verdict.valid == (reason == "Valid")
    assert verdict.message


async def test_expectations_wait_for_the_cache_and_expire() -> None:
    clock = FakeClock()
    exp = Expectations(clock=clock, ttl=60)
    cache: dict[str, dict] = {"old": {"metadata": {"name": "old"}}}
    assert exp.satisfied("ns/a", cache.get)
    exp.expect_create("ns/a", "new")
    exp.expect_delete("ns/a", "old")
    assert not exp.satisfied("ns/a", cache.get)
    cache["new"] = {"metadata": {"name": "new"}}
    assert exp.unobserved_creates("ns/a", cache.get) == set()
    assert not exp.satisfied("ns/a", cache.get)  # "old" is still there
    cache["old"] = {"metadata": {"name": "old", "deletionTimestamp": "x"}}
    assert exp.satisfied("ns/a", cache.get)
    assert len(exp) == 0

    exp.expect_create("ns/b", "ghost")
    assert exp.unobserved_creates("ns/b", cache.get) == {"ghost"}
    exp.observe_gone("ns/b", "ghost")
    assert exp.satisfied("ns/b", cache.get)

    exp.expect_create("ns/c", "never")
    await clock.advance(59)
    assert not exp.satisfied("ns/c", cache.get)
    await clock.advance(1)
    assert exp.satisfied("ns/c", cache.get)


def test_conditions_keep_transition_time_while_status_holds() -> None:
    first = condition("Ready", False, reason="X", message="m", generation=1, now="t1")
    conds = set_condition([], first)
    same = condition("Ready", False, reason="Y", message="m2", generation=2, now="t2")
    conds = set_condition(conds, same)
    assert conds[0]["lastTransitionTime"] == "t1" and conds[0]["reason"] == "Y"
    flipped = condition("Ready", True, reason="Valid", message="", generation=3, now="t3")
    conds = set_condition([*conds, {"type": "Other", "status": "True"}], flipped)
    assert conds[0]["lastTransitionTime"] == "t3" and len(conds) == 2


def test_registry_and_rbac() -> None:
    assert set(CONTROLLERS) == set(RBAC_RULES) == {
        "at", "foo", "network", "crdkind", "jinghzhu", "podlogger"}
    rules = rbac_rules()
    pods = [r for r in rules if r["resources"] == ["pods"]]
    assert pods == [{"apiGroups": [""], "resources": ["pods"],
                     "verbs": ["create", "delete", "get", "list", "update", "watch"]}]
    assert rbac_rules(["podlogger"]) == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    assert {"apiGroups": ["cnat.programming-kubernetes.info"], "resources": ["ats/status"],
            "verbs": ["update"]} in rbac_rules(["at"])  # status is only PUT (write_status)
    with pytest.raises(KeyError):
        rbac_rules(["nope"])
    merged = merge_rules([PolicyRule(("a", "b"), ("x",), ("get",)),
                          PolicyRule(("a",), ("x",), ("list", "get"))])
    assert merged == [PolicyRule(("a",), ("x",), ("get", "list")),
                      PolicyRule(("b",), ("x",), ("get",))]
