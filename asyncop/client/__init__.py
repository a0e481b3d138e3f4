"""Client layer: configuration loading and the raw-JSON Kubernetes Client."""
