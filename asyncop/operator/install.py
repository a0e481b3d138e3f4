"""install_crds: server-side apply CRDs and wait until their kinds are served.

Used by `asyncop run --install-crds` and by the test kit's `run_operator`. Invariants: each
CRD is applied with the given field manager (re-applying an unchanged CRD is a no-op); the
function returns only when a LIST of every served version answers (kube serves a new CRD a
moment after the create returns), or raises TimeoutError after `timeout` seconds on the
client's clock. API errors (403, 422 for a CRD the server rejects) propagate as `ApiError`s.
"""

from __future__ import annotations

from asyncop.api import Kind, NotFound, RawObject
from asyncop.api.kinds import CRD
from asyncop.client import Client


def crd_kinds(crds: list[RawObject]) -> list[Kind]:
    """Every served version of every CRD, as Kinds."""
    out: list[Kind] = []
    for crd in crds:
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        for version in spec.get("versions") or []:
            if version.get("served", True):
                out.append(Kind(spec["group"], version["name"], names["plural"], names["kind"],
                                namespaced=spec.get("scope", "Namespaced") == "Namespaced"))
    return out


async def install_crds(
    client: Client, crds: list[RawObject], *, field_manager: str, timeout: float = 30.0
) -> None:
    for crd in crds:
        await client.apply(CRD, crd, field_manager=field_manager)
    clock = client.clock
    deadline = clock.monotonic() + timeout
    for kind in crd_kinds(crds):
        while True:
            try:
                await client.list(kind, limit=1)
                break
            except NotFound:
                if clock.monotonic() > deadline:
                    raise TimeoutError(f"the CRD {kind.resource} was not served within "
                                       f"{timeout:g}s") from None
                await clock.sleep(0.05)
