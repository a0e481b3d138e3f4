"""The embedded Kubernetes API server (imports only asyncop.api and asyncop.clock)."""
