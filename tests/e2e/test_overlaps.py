"""The trace check used by the sharding tests finds overlaps, including hidden ones."""

from tests.e2e.overlaps import concurrent_keys


def test_sequential_runs_on_different_replicas_are_fine() -> None:
    assert concurrent_keys({"k": [(0.0, 1.0, "a"), (1.0, 2.0, "b"), (2.5, 3.0, "a")]}) == []


def test_an_overlap_is_found_even_behind_a_short_span() -> None:
    spans = {"k": [(0.0, 10.0, "a"), (1.0, 2.0, "a"), (3.0, 4.0, "b")], "j": [(0.0, 1.0, "a")]}
    assert concurrent_keys(spans) == ["k"]
