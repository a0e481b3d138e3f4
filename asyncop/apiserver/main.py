"""`serve()`: run the embedded API server as its own process until SIGINT/SIGTERM.

Prints exactly `asyncop apiserver listening on http://127.0.0.1:PORT` as the first stdout
line (flushed) once the listener is bound, CRDs from `crds_dir` are applied and the kubeconfig
is written. `python -m asyncop.apiserver.main --port 0` runs it directly (used by the bench).
Invariant: the server is stopped cleanly on either signal.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import structlog
import yaml

from asyncop.apiserver.bindpolicy import InsecureBind, check_bind
from asyncop.apiserver.core.registry import CRD_GR
from asyncop.apiserver.server import ApiServer
from asyncop.apiserver.storage.store import Store
from asyncop.gcpolicy import GcPolicy


def apply_crd_dir(store: Store, crds_dir: str) -> int:
    """Create (or update) every CustomResourceDefinition found in the YAML files of a dir."""
    crd_rt = store.registry.storage_type(CRD_GR)
    assert crd_rt is not None
    applied = 0
    for path in sorted(Path(crds_dir).glob("*.y*ml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            name = (doc.get("metadata") or {}).get("name", "")
            existing = store.raw_get(CRD_GR, "", name)
            if existing is None:
                store.writer.create(crd_rt, doc)
            else:
                doc.setdefault("metadata", {})["resourceVersion"] = \
                    existing["metadata"]["resourceVersion"]
                store.writer.update(crd_rt, doc, namespace=None, name=name)
            applied += 1
    return applied


async def serve(*, host: str = "127.0.0.1", port: int = 0, kubeconfig_out: str | None = None,
                crds_dir: str | None = None, simulators: bool = True, gc_freeze: bool = True,
                **options: Any) -> None:
    """Run an ApiServer until SIGINT/SIGTERM (the `asyncop apiserver` process); `gc_freeze`
    keeps full GC collections short with a big store (asyncop.gcpolicy)."""
    if not structlog.is_configured():
        # stdout carries only the listening line; logs go to stderr
        structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    server = ApiServer(host=host, port=port, simulators=simulators, **options)
    await server.start()
    policy = asyncio.create_task(GcPolicy(clock=server.clock).run()) if gc_freeze else None
    try:
        if crds_dir:
            apply_crd_dir(server.store, crds_dir)
        if kubeconfig_out:
            server.write_kubeconfig(kubeconfig_out)
        sys.stdout.write(f"asyncop apiserver listening on {server.url}\n")
        sys.stdout.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
    finally:
        if policy is not None:
            policy.cancel()
            await asyncio.gather(policy, return_exceptions=True)
        await server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="asyncop-apiserver")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--kubeconfig-out")
    parser.add_argument("--crds")
    parser.add_argument("--no-simulators", action="store_true")
    args = parser.parse_args(argv)
    try:
        check_bind(args.host, tls=False, authenticated=False)
    except InsecureBind as exc:
        parser.error(str(exc))
    asyncio.run(serve(host=args.host, port=args.port, kubeconfig_out=args.kubeconfig_out,
                      crds_dir=args.crds, simulators=not args.no_simulators))


if __name__ == "__main__":
    main()
