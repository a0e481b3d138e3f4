"""Shared test configuration.

The asyncop test kit (`asyncop.testing.fixtures`: `apiserver`, `apiserver_no_sim`, `kubeconfig`,
`fake_clock`) is loaded through the `pytest11` entry point declared in pyproject.toml, so
operator authors who install asyncop get the same fixtures without any conftest.
"""
