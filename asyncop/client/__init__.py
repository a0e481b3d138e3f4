"""Client layer: configuration loading and the raw-JSON Kubernetes Client.

`load_config()` resolves where the cluster is (kubectl's order); `Client` talks to it with
plain JSON dicts, typed errors, retries and timeouts; `Client.watch()` streams raw events.
"""

from asyncop.client.client import CONTENT_TYPES, Client, PatchType, WriteListener
from asyncop.client.config import (
    ClientConfig,
    ConfigError,
    in_cluster_config,
    load_config,
    resolve_config,
)
from asyncop.client.errors import RequestTimeout, TransportError
from asyncop.client.retry import Backoff
from asyncop.client.watch import WatchEvent

__all__ = [
    "CONTENT_TYPES",
    "Backoff",
    "Client",
    "ClientConfig",
    "ConfigError",
    "PatchType",
    "RequestTimeout",
    "TransportError",
    "WatchEvent",
    "WriteListener",
    "in_cluster_config",
    "load_config",
    "resolve_config",
]
