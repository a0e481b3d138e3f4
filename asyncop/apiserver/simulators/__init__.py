"""Cluster simulators: GC, namespaces, deployments, pods, services (each switchable)."""
