"""The chaos soak's short variant (the bundled scenario on asyncop.testing.chaos, a fixed seed).

One run of the bundled six operators' scenario on a deterministic seed: three replicas
against the embedded API server over real HTTP (each through its own cuttable link), a
seeded fault schedule with every fault kind (SIGKILL/SIGTERM of the work's owner, restarts
with and without state, watch cuts, 410 storms, 429s, 5xx bursts, 409s on status writes,
slow responses, clock jumps and wall-clock steps) and a poison At, on a paced fake clock (4
virtual seconds per real second). The run's own verdict is the assertion: no violation (the
checkers are shown to fail in test_soak_invariants.py), and the run did real work under
real trouble. bench/soak.py's line keeps the fields it always had.
"""

from __future__ import annotations

import pytest
from soak import line as bench_line

from asyncop.testing.chaos import FAULT_KINDS, SoakConfig, soak
from asyncop.testing.chaos.bundled import scenario

# The fields of bench/soak.py's JSON line before the soak became a public API.
LINE_FIELDS = {
    "bench", "seed", "mode", "replicas", "virtual_s", "real_s", "faults", "faults_total",
    "http_faults_injected", "objects_created", "objects_at_end", "changes", "reconciles",
    "ats_run", "ats_run_twice", "ats_due_not_run", "convergence_s", "rss_mb", "tasks",
    "errors_logged", "warnings_logged", "errors_by_event", "warnings_by_event", "violations",
    "violation_count", "ok"}


@pytest.mark.timeout(150)
@pytest.mark.parametrize("sharded", [False, True], ids=["leader-election", "sharding"])
async def test_short_soak_keeps_every_invariant(sharded: bool) -> None:
    cfg = SoakConfig(seed=7, seconds=100.0, rate=4.0, replicas=3, sharded=sharded,
                     fault_every=7.0, converge_within=120.0, workers=2)
    small = scenario(foos=6, crdkinds=4, jinghzhus=3, networks=4, live_ats=30, per_second=3.0)
    report = await soak(small, cfg)
    result = bench_line(report)
    assert result["violations"] == [], result
    assert result["ok"] and report.ok
    assert LINE_FIELDS <= set(result), LINE_FIELDS - set(result)
    assert result["mode"] == ("sharding" if sharded else "leader-election")
    enabled = {k for k, w in FAULT_KINDS.items() if w > 0}
    assert set(result["faults"]) == enabled, result["faults"]  # every kind at least once
    assert result["http_faults_injected"] > 10
    assert result["ats_run"] >= 20 and result["ats_run_twice"] == 0
    assert result["ats_due_not_run"] == 0
    assert result["convergence_s"]["changes_measured"] > 50
    assert result["convergence_s"]["after_last_fault"] is not None
    assert result["reconciles"] > 200
    assert set(result["objects_created"]) >= {"ats", "foos", "crdplural", "jinghzhus",
                                              "networks", "pods", "deployments", "services"}
