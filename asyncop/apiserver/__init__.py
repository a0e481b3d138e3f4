"""The embedded Kubernetes API server (imports only asyncop.api and asyncop.clock).

`ApiServer` serves real HTTP on 127.0.0.1; `Store` is its in-process API (simulators, tests).
"""

from asyncop.apiserver.server import ApiServer
from asyncop.apiserver.storage import Store

__all__ = ["ApiServer", "Store"]
