"""Security settings of a container, validated as kube's ValidateSecurityContext,
validateSeccompProfileField and ValidateAppArmorProfileField do (pkg/apis/core/validation).

User and group ids within 0..2^32-1, procMount Default or Unmasked (Unmasked only without
host users), seccomp and AppArmor profiles (a localhost profile names a relative path), and
no privileged container that forbids privilege escalation. Privileged containers are
allowed (kubeadm-style clusters run kube-apiserver with --allow-privileged). Invariant:
pure; never raises on a value of the wrong shape.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin.checks import is_valid_id
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    each,
    invalid,
    not_supported,
    required,
)
from asyncop.apiserver.builtin.filepaths import local_descending_path
from asyncop.apiserver.builtin.gofmt import Raw


def security_context(raw: Any, path: str, *, host_users: bool) -> Causes:
    sc = as_dict(raw)
    out: Causes = []
    for key in ("runAsUser", "runAsGroup"):
        number = as_int(sc.get(key))
        if number is not None:
            out += each(f"{path}.{key}", number, is_valid_id(number))
    proc = sc.get("procMount")
    if isinstance(proc, str):
        if proc not in ("Default", "Unmasked"):
            out.append(not_supported(f"{path}.procMount", proc, ("Default", "Unmasked")))
        if host_users and proc == "Unmasked":
            out.append(invalid(f"{path}.procMount", proc,
                               "`hostUsers` must be false to use `Unmasked`"))
    out += seccomp_profile(sc.get("seccompProfile"), f"{path}.seccompProfile")
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged") is True:
            out.append(invalid(path, Raw(_struct(sc)), "cannot set `allowPrivilegeEscalation` "
                               "to false and `privileged` to true"))
        if "CAP_SYS_ADMIN" in as_list(as_dict(sc.get("capabilities")).get("add")):
            out.append(invalid(path, Raw(_struct(sc)), "cannot set `allowPrivilegeEscalation` "
                               "to false and `capabilities.Add` CAP_SYS_ADMIN"))
    out += app_armor_profile(sc.get("appArmorProfile"), f"{path}.appArmorProfile")
    return out


def _struct(sc: Obj) -> str:
    """A stand-in for Go's `%#v` of a SecurityContext (kube's shows pointer addresses)."""
    inner = ", ".join(f"{k}:{v!r}" for k, v in sorted(sc.items()))
    return "core.SecurityContext{" + inner + "}"


def seccomp_profile(raw: Any, path: str) -> Causes:
    """validateSeccompProfileField."""
    if not isinstance(raw, dict):
        return []
    kind = as_str(raw.get("type"))
    supported = ("Localhost", "RuntimeDefault", "Unconfined")
    out: Causes = []
    if not kind:
        out.append(required(f"{path}.type", "type is required when seccompProfile is set"))
    elif kind not in supported:
        out.append(not_supported(f"{path}.type", kind, supported))
    local = raw.get("localhostProfile")
    if kind == "Localhost":
        if not isinstance(local, str):
            out.append(required(f"{path}.localhostProfile",
                                "must be set when seccomp type is Localhost"))
        else:
            out += local_descending_path(local, f"{path}.localhostProfile")
    elif local is not None:
        out.append(invalid(f"{path}.localhostProfile", Raw(str(raw)),
                           "can only be set when seccomp type is Localhost"))
    return out


def app_armor_profile(raw: Any, path: str) -> Causes:
    """ValidateAppArmorProfileField."""
    if not isinstance(raw, dict):
        return []
    kind, local = as_str(raw.get("type")), raw.get("localhostProfile")
    if kind == "Localhost":
        if not isinstance(local, str):
            return [required(f"{path}.localhostProfile",
                             "must be set when AppArmor type is Localhost")]
        if local.strip() != local:
            return [invalid(f"{path}.localhostProfile", local,
                            "must not be padded with whitespace")]
        if not local:
            return [required(f"{path}.localhostProfile",
                             "must be set when AppArmor type is Localhost")]
        return []
    if kind in ("RuntimeDefault", "Unconfined"):
        return [] if local is None else [invalid(
            f"{path}.localhostProfile", local, "can only be set when AppArmor type is Localhost")]
    if not kind:
        return [required(f"{path}.type", "type is required when appArmorProfile is set")]
    return [not_supported(f"{path}.type", kind, ("Localhost", "RuntimeDefault", "Unconfined"))]
