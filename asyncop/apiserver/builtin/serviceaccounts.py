"""ServiceAccounts: the registry's secret references, and (only) kube's metadata checks.

kube's ValidateServiceAccount checks the metadata alone (the name a DNS-1123 subdomain, in
core/objectmeta.validate_name): neither `secrets` nor `imagePullSecrets` is validated. The
registry's PrepareForCreate and PrepareForUpdate (cleanSecretReferences) keep only the name
of each `secrets` reference.
Invariant: only `secrets` entries are rewritten; validation adds nothing of its own.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin.fields import Obj

SERVICEACCOUNTS = ("", "serviceaccounts")


def _service_account_defaults(obj: Obj, old: Obj | None) -> None:
    secrets = obj.get("secrets")
    if isinstance(secrets, list):
        obj["secrets"] = [{"name": ref["name"]} if isinstance(ref, dict) and "name" in ref
                          else {} if isinstance(ref, dict) else ref for ref in secrets]


DEFAULTS: dict[tuple[str, str], Any] = {SERVICEACCOUNTS: _service_account_defaults}
VALIDATORS: dict[tuple[str, str], Any] = {}
