"""Runs a client library's own test module against a fresh embedded API server; prints one
JSON line: tests run, and the ids of the failed ones with their last error line.

`python tests/compat/client_suite.py kubernetes_asyncio.dynamic.client_test`: the module's
`kubernetes_asyncio.e2e_test.base.get_e2e_configuration()` (its cluster hook, not shipped in
the wheel) is provided here and points at the embedded server, which runs in a thread of its
own so that the suite's event loops are the suite's.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import threading
import types
import unittest

from asyncop.apiserver import ApiServer


def main(module: str) -> None:
    loop = asyncio.new_event_loop()
    server = ApiServer(port=0)
    loop.run_until_complete(server.start())
    threading.Thread(target=loop.run_forever, daemon=True).start()
    from kubernetes_asyncio.client.configuration import Configuration

    package = types.ModuleType("kubernetes_asyncio.e2e_test")
    package.__path__ = []
    base = types.ModuleType("kubernetes_asyncio.e2e_test.base")
    base.get_e2e_configuration = lambda: Configuration(host=server.url)  # type: ignore[attr-defined]
    sys.modules.setdefault("kubernetes_asyncio.e2e_test", package)
    sys.modules.setdefault("kubernetes_asyncio.e2e_test.base", base)
    suite = unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(module))
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite)
    failed = {test.id().rsplit(".", 1)[-1]: trace.strip().splitlines()[-1]
              for test, trace in result.failures + result.errors}
    print(json.dumps({"run": result.testsRun, "failed": failed}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
