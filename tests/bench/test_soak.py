"""The chaos soak's short variant (bench/soak.py's engine, a fixed seed): every invariant.

One run of bench/soak_run.soak on a deterministic seed: three replicas of all six bundled
operators against the embedded API server over real HTTP (each through its own cuttable
link), a seeded fault schedule with every fault kind (SIGKILL/SIGTERM of the work's owner,
restarts with and without state, watch cuts, 410 storms, 429s, 5xx bursts, 409s on status
writes, slow responses, clock jumps and wall-clock steps) and a poison At, on a paced fake
clock (4 virtual seconds per real second). The run's own verdict is the assertion: its
`violations` list is empty (the checkers are shown to fail in test_soak_invariants.py),
and the run did real work under real trouble.
"""

from __future__ import annotations

import pytest
from soak_chaos import FAULT_KINDS
from soak_run import SoakConfig, soak


@pytest.mark.timeout(150)
@pytest.mark.parametrize("sharded", [False, True], ids=["leader-election", "sharding"])
async def test_short_soak_keeps_every_invariant(sharded: bool) -> None:
    cfg = SoakConfig(seed=7, seconds=100.0, rate=4.0, replicas=3, sharded=sharded,
                     foos=6, crdkinds=4, jinghzhus=3, networks=4, live_ats=30,
                     ops_per_second=3.0, fault_every=7.0, converge_bound=120.0, workers=2)
    result = await soak(cfg)
    assert result["violations"] == [], result
    assert result["ok"]
    enabled = {k for k, w in FAULT_KINDS.items() if w > 0}
    assert set(result["faults"]) == enabled, result["faults"]  # every kind at least once
    assert result["http_faults_injected"] > 10
    assert result["ats_run"] >= 20 and result["ats_run_twice"] == 0
    assert result["ats_due_not_run"] == 0
    assert result["convergence_s"]["changes_measured"] > 50
    assert result["convergence_s"]["after_last_fault"] is not None
    assert result["reconciles"] > 200
