"""bench/store_memory.py, the store's bytes per object and the compactor's time per object.

A quick run of its cases (a few hundred objects each) pins that it measures what its table
says: the stored objects' heap (an At is a fraction of a Pod; a Pod from one template, its
parts shared, a fraction of a Pod whose env values are its own) and a positive time.
"""

from __future__ import annotations

from store_memory import at, measure, pod, template_pod

N = 300


def test_the_store_memory_cases_measure_the_store() -> None:
    ats = measure(N, "cnat.programming-kubernetes.info", "v1alpha1", "ats", lambda i: at(i, 1))
    shared = measure(N, "", "v1", "pods", template_pod)
    unique = measure(N, "", "v1", "pods", lambda i: pod(f"p-{i}", i))
    for result in (ats, shared, unique):
        assert result["bytes_per_object"] > 0 and result["share_us"] > 0
    # 30 env values of its own keep a Pod ~17 KB; one template's Pods share all but ~1 KB
    assert ats["bytes_per_object"] < shared["bytes_per_object"] * 3
    assert shared["bytes_per_object"] * 5 < unique["bytes_per_object"]
