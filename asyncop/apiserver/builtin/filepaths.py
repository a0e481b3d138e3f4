"""Relative file paths inside a pod (subPath, items' paths, seccomp localhost profiles),
checked as kube's validateLocalDescendingPath, validatePathNoBacksteps and
ValidateLocalNonReservedPath do (pkg/apis/core/validation). Invariant: pure.
"""

from __future__ import annotations

from asyncop.apiserver.builtin.fields import Causes, invalid


def local_descending_path(target: str, path: str) -> Causes:
    """validateLocalDescendingPath: relative, and no '..' element."""
    out = [invalid(path, target, "must be a relative path")] if target.startswith("/") else []
    return out + no_backsteps(target, path)


def no_backsteps(target: str, path: str) -> Causes:
    """validatePathNoBacksteps (one error even for `../../..`)."""
    if ".." in target.replace("\\", "/").split("/"):
        return [invalid(path, target, "must not contain '..'")]
    return []


def local_non_reserved_path(target: str, path: str) -> Causes:
    """ValidateLocalNonReservedPath: relative, no '..' element, not starting with '..'."""
    out = local_descending_path(target, path)
    if target.startswith("..") and not target.startswith("../"):
        out.append(invalid(path, target, "must not start with '..'"))
    return out
