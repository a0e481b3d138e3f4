"""Tests of the benchmark and soak tooling in bench/."""
