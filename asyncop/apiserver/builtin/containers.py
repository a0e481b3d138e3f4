"""One container of a pod spec, validated as kube's validateContainerCommon does.

Name, image, terminationMessagePolicy, ports, env, envFrom, volumeMounts, imagePullPolicy,
resources (`resources.py`) and securityContext (`security.py`), in kube's order
(pkg/apis/core/validation: the functions named in each docstring); probes, lifecycle and
the per-list rules (duplicate names, init containers' restartPolicy) are `podspec`'s.
Paths are absolute (`spec.containers[0]...`), messages are kube's. Invariant: pure; never
raises on a value of the wrong shape.
"""

from __future__ import annotations

from itertools import compress, count, repeat
from operator import is_not
from typing import Any

from asyncop.apiserver.builtin import quantity, security
from asyncop.apiserver.builtin.checks import (
    is_config_map_key,
    is_dns1123_label,
    is_qualified_name,
    is_relaxed_env_var_name,
    is_valid_port_name,
    is_valid_port_num,
    name_is_dns_subdomain,
    valid_relaxed_env_var_name,
)
from asyncop.apiserver.builtin.fields import (
    Causes,
    Obj,
    as_dict,
    as_int,
    as_list,
    as_str,
    duplicate,
    each,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
    values_of,
)
from asyncop.apiserver.builtin.filepaths import local_descending_path
from asyncop.apiserver.builtin.knownvalid import KnownValid, memory_key, remembers_valid
from asyncop.apiserver.builtin.resources import resources

PROTOCOLS = ("SCTP", "TCP", "UDP")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                    "spec.serviceAccountName", "status.hostIP", "status.hostIPs",
                    "status.podIP", "status.podIPs")
_DOWNWARD_LABELS = ("metadata.annotations", "metadata.labels", "metadata.name",
                    "metadata.namespace", "metadata.uid", "spec.nodeName",
                    "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName",
                    "status.phase", "status.hostIP", "status.hostIPs", "status.podIP",
                    "status.podIPs")
_RESOURCE_FIELDS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory",
                    "requests.cpu", "requests.ephemeral-storage", "requests.memory")


_COMMON_VALID = KnownValid()


def container_common(ctr: Obj, path: str, volumes: dict[str, Obj], *,
                     host_users: bool) -> Causes:
    """validateContainerCommon. Replicas repeat their containers, env values aside: a
    container whose fields other than `env` were found valid before, with the same
    volumes to mount (`knownvalid`), has only its env validated."""
    env_causes = env(as_list(ctr["env"]), f"{path}.env") if "env" in ctr else []
    key = memory_key({k: v for k, v in ctr.items() if k != "env"}, (tuple(volumes), host_users))
    if key in _COMMON_VALID:
        return env_causes
    head = _before_env(ctr, path)
    tail = _after_env(ctr, path, volumes, host_users)
    if not head and not tail:
        _COMMON_VALID.remember(key)
    return head + env_causes + tail


def _before_env(ctr: Obj, path: str) -> Causes:
    name = as_str(ctr.get("name"))
    if not name:
        out = [required(f"{path}.name")]
    else:
        msgs = is_dns1123_label(name)
        out = each(f"{path}.name", name, msgs) if msgs else []
    if not as_str(ctr.get("image")):
        out.append(required(f"{path}.image"))
    policy = as_str(ctr.get("terminationMessagePolicy"))
    if not policy:
        out.append(required(f"{path}.terminationMessagePolicy"))
    elif policy not in ("File", "FallbackToLogsOnError"):
        out.append(not_supported(f"{path}.terminationMessagePolicy", policy,
                                 ("File", "FallbackToLogsOnError")))
    if "ports" in ctr:  # (lists that are absent cost nothing, not even their paths)
        out += ports(as_list(ctr["ports"]), f"{path}.ports")
    return out


def _after_env(ctr: Obj, path: str, volumes: dict[str, Obj], host_users: bool) -> Causes:
    out: Causes = []
    if "envFrom" in ctr:
        out += env_from(as_list(ctr["envFrom"]), f"{path}.envFrom")
    if "volumeMounts" in ctr:
        out += volume_mounts(as_list(ctr["volumeMounts"]), volumes, ctr,
                             f"{path}.volumeMounts")
    pull = as_str(ctr.get("imagePullPolicy"))
    if not pull:
        out.append(required(f"{path}.imagePullPolicy"))
    elif pull not in PULL_POLICIES:
        out.append(not_supported(f"{path}.imagePullPolicy", pull, PULL_POLICIES))
    if ctr.get("resources"):
        out += resources(as_dict(ctr["resources"]), f"{path}.resources")
    if ctr.get("securityContext"):
        out += security.security_context(ctr["securityContext"], f"{path}.securityContext",
                                         host_users=host_users)
    return out


@remembers_valid
def ports(items: list[Any], path: str) -> Causes:
    """validateContainerPorts: names IANA_SVC_NAME and unique, port ranges, protocol (a
    valid list is remembered, `knownvalid`)."""
    out: Causes = []
    names: set[str] = set()
    for i, port in enumerate(items):  # `at`, the item's path, is built only for an error
        port = as_dict(port)
        name = as_str(port.get("name"))
        if name:
            msgs = is_valid_port_name(name)
            if msgs:
                out += each(f"{path}[{i}].name", name, msgs)
            elif name in names:
                out.append(duplicate(f"{path}[{i}].name", name))
            else:
                names.add(name)
        number = as_int(port.get("containerPort")) or 0
        if number == 0:
            out.append(required(f"{path}[{i}].containerPort"))
        elif msgs := is_valid_port_num(number):
            out += each(f"{path}[{i}].containerPort", number, msgs)
        host = as_int(port.get("hostPort")) or 0
        if host and (msgs := is_valid_port_num(host)):
            out += each(f"{path}[{i}].hostPort", host, msgs)
        protocol = as_str(port.get("protocol"))
        if not protocol:
            out.append(required(f"{path}[{i}].protocol"))
        elif protocol not in PROTOCOLS:
            out.append(not_supported(f"{path}[{i}].protocol", protocol, PROTOCOLS))
    return out


_VALID_NAME_LISTS = KnownValid()
_MAX_NAMES_REMEMBERED = 128


def env(items: list[Any], path: str) -> Causes:
    """ValidateEnv: names (the relaxed rule of 1.33: printable ASCII but '='), valueFrom.
    Pods have many vars: when every name is valid (`_names_valid`, a quick test) only the
    vars with a source are visited; otherwise each var is, with its messages."""
    if not _names_valid(items):
        return _each_var(items, path)
    out: Causes = []
    sources = values_of(items, "valueFrom")
    for i in compress(count(), map(is_not, sources, repeat(None))):  # (found in C)
        source = sources[i]
        if isinstance(source, dict):
            out += _value_from(source, f"{path}[{i}].valueFrom",
                               bool(as_str(items[i].get("value"))))
    return out


def _names_valid(items: list[Any]) -> bool:
    """Whether every var is an object with a valid name: the names read and matched by
    `map` in C, and a list of names found valid remembered (replicas repeat them)."""
    try:
        names: tuple[Any, ...] = tuple(map(dict.get, items, repeat("name")))
        if names in _VALID_NAME_LISTS:
            return True
        valid = all(map(valid_relaxed_env_var_name, names))
    except TypeError:  # a var that is not an object, a name that is not a string
        return False
    if valid and len(names) <= _MAX_NAMES_REMEMBERED:
        _VALID_NAME_LISTS.remember(names)
    return valid


def _each_var(items: list[Any], path: str) -> Causes:
    out: Causes = []
    for i, var in enumerate(items):  # paths are built only for an error
        if not isinstance(var, dict):
            var = {}
        name = var.get("name")
        if not isinstance(name, str) or not valid_relaxed_env_var_name(name):
            if not isinstance(name, str) or not name:
                out.append(required(f"{path}[{i}].name"))
            else:
                out += each(f"{path}[{i}].name", name, is_relaxed_env_var_name(name))
        source = var.get("valueFrom")
        if source is not None and isinstance(source, dict):
            out += _value_from(source, f"{path}[{i}].valueFrom", bool(as_str(var.get("value"))))
    return out


@remembers_valid
def _value_from(source: Obj, path: str, has_value: bool) -> Causes:
    """validateEnvVarValueFrom: exactly one source, and not with a `value` (replicas repeat
    their sources: a valid one is remembered, `knownvalid`)."""
    out: Causes = []
    count = 0
    if isinstance(source.get("fieldRef"), dict):
        count += 1
        out += object_field_selector(source["fieldRef"], _ENV_FIELD_PATHS, f"{path}.fieldRef")
    if isinstance(source.get("resourceFieldRef"), dict):
        count += 1
        out += resource_field_selector(source["resourceFieldRef"],
                                       f"{path}.resourceFieldRef", volume=False)
    for key in ("configMapKeyRef", "secretKeyRef"):
        if isinstance(source.get(key), dict):
            count += 1
            out += _key_selector(source[key], f"{path}.{key}")
    if count == 0:
        out.append(invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                           "`configMapKeyRef` or `secretKeyRef`"))
    elif has_value:
        out.append(invalid(path, "", "may not be specified when `value` is not empty"))
    elif count > 1:
        out.append(invalid(path, "", "may not have more than one field specified at a time"))
    return out


def object_field_selector(ref: Obj, allowed: tuple[str, ...], path: str) -> Causes:
    """validateObjectFieldSelector through ConvertDownwardAPIFieldLabel (pods/helpers)."""
    version, field = as_str(ref.get("apiVersion")), as_str(ref.get("fieldPath"))
    if not version:
        return [required(f"{path}.apiVersion")]
    if not field:
        return [required(f"{path}.fieldPath")]
    subscripted = field.endswith("']") and "['" in field
    base, subscript = (field[:field.index("['")], field[field.index("['") + 2:-2]) \
        if subscripted else (field, "")
    error = ""
    if version != "v1":
        error = f"unsupported pod version: {version}"
    elif subscripted and base not in ("metadata.annotations", "metadata.labels"):
        error = f"field label does not support subscript: {field}"
    elif not subscripted and field not in (*_DOWNWARD_LABELS, "spec.host"):
        error = f"field label not supported: {field}"
    if error:
        return [invalid(f"{path}.fieldPath", field, f"error converting fieldPath: {error}")]
    if subscripted:
        key = subscript.lower() if base == "metadata.annotations" else subscript
        return each(path, key, is_qualified_name(key))
    field = "spec.nodeName" if field == "spec.host" else field
    return [] if field in allowed else [not_supported(f"{path}.fieldPath", field, allowed)]


def resource_field_selector(ref: Obj, path: str, *, volume: bool) -> Causes:
    """validateContainerResourceFieldSelector (divisors: validateContainerResourceDivisor)."""
    resource = as_str(ref.get("resource"))
    out: Causes = []
    if volume and not as_str(ref.get("containerName")):
        out.append(required(f"{path}.containerName"))
    elif not resource:
        out.append(required(f"{path}.resource"))
    elif resource not in _RESOURCE_FIELDS and not resource.startswith(
            ("requests.hugepages-", "limits.hugepages-")):
        out.append(not_supported(f"{path}.resource", resource, _RESOURCE_FIELDS))
    divisor = ref.get("divisor")
    if isinstance(divisor, quantity.QUANTITY_JSON) and not isinstance(divisor, bool):
        try:
            text = quantity.canonical(divisor)
        except quantity.QuantityError:
            return out
        kind = "cpu" if resource.endswith(".cpu") else "memory" if resource.endswith(
            ".memory") else "local ephemeral storage" if resource.endswith(
            ".ephemeral-storage") else "hugepages" if "hugepages-" in resource else ""
        units = ("1m", "1") if kind == "cpu" else ("1", "1k", "1M", "1G", "1T", "1P", "1E",
                                                   "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
        if kind and text != "0" and text not in units:
            allowed = "1m and 1" if kind == "cpu" else ", ".join(units)
            out.append(invalid(f"{path}.divisor", resource, f"only divisor's values {allowed} "
                               f"are supported with the {kind} resource"))
    return out


def _key_selector(ref: Obj, path: str) -> Causes:
    """validateConfigMapKeySelector / validateSecretKeySelector."""
    name = as_str(ref.get("name"))
    out = each(f"{path}.name", name, name_is_dns_subdomain(name))
    key = as_str(ref.get("key"))
    if not key:
        out.append(required(f"{path}.key"))
    else:
        out += each(f"{path}.key", key, is_config_map_key(key))
    return out


def env_from(items: list[Any], path: str) -> Causes:
    """ValidateEnvFrom: prefix, exactly one of configMapRef and secretRef."""
    out: Causes = []
    for i, source in enumerate(items):
        source, at = as_dict(source), f"{path}[{i}]"
        prefix = as_str(source.get("prefix"))
        if prefix:
            out += each(f"{at}.prefix", prefix, is_relaxed_env_var_name(prefix))
        count = 0
        for key in ("configMapRef", "secretRef"):
            if isinstance(source.get(key), dict):
                count += 1
                name = as_str(source[key].get("name"))
                if not name:
                    out.append(required(f"{at}.{key}.name"))
                else:
                    out += each(f"{at}.{key}.name", name,
                                name_is_dns_subdomain(name, prefix=True))
        if count == 0:
            out.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            out.append(invalid(path, "", "may not have more than one field specified at a time"))
    return out


def volume_mounts(items: list[Any], volumes: dict[str, Obj], ctr: Obj, path: str) -> Causes:
    """ValidateVolumeMounts (kube reports subPath errors on the list path, not the item)."""
    out: Causes = []
    paths: set[str] = set()
    for i, mount in enumerate(items):  # the item's path is built only for an error
        mount = as_dict(mount)
        name, mount_path = as_str(mount.get("name")), as_str(mount.get("mountPath"))
        if not name:
            out.append(required(f"{path}[{i}].name"))
        if name not in volumes:
            out.append(not_found(f"{path}[{i}].name", name))
        if not mount_path:
            out.append(required(f"{path}[{i}].mountPath"))
        if mount_path in paths:
            out.append(invalid(f"{path}[{i}].mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
        sub_path, sub_expr = as_str(mount.get("subPath")), as_str(mount.get("subPathExpr"))
        if sub_path:
            out += local_descending_path(sub_path, f"{path}.subPath")
        if sub_expr:
            if sub_path:
                out.append(invalid(f"{path}[{i}].subPathExpr", sub_expr,
                                   "subPathExpr and subPath are mutually exclusive"))
            out += local_descending_path(sub_expr, f"{path}.subPathExpr")
        if "mountPropagation" in mount:
            out += _propagation(mount, ctr, f"{path}.mountPropagation")
        if "recursiveReadOnly" in mount:
            out += _recursive_read_only(mount, f"{path}.recursiveReadOnly")
    return out


def _propagation(mount: Obj, ctr: Obj, path: str) -> Causes:
    mode = mount.get("mountPropagation")
    if not isinstance(mode, str):
        return []
    supported = ("Bidirectional", "HostToContainer", "None")
    out = [] if mode in supported else [not_supported(path, mode, supported)]
    if mode == "Bidirectional" and as_dict(ctr.get("securityContext")).get("privileged") \
            is not True:
        out.append(forbidden(path, "Bidirectional mount propagation is available only to "
                             "privileged containers"))
    return out


def _recursive_read_only(mount: Obj, path: str) -> Causes:
    mode = mount.get("recursiveReadOnly")
    if not isinstance(mode, str) or mode == "Disabled":
        return []
    if mode not in ("Enabled", "IfPossible"):
        return [not_supported(path, mode, ("Disabled", "Enabled", "IfPossible"))]
    out: Causes = []
    if mount.get("readOnly") is not True:
        out.append(forbidden(path, "may only be specified when readOnly is true"))
    if mount.get("mountPropagation") not in (None, "None"):
        out.append(forbidden(path, "may only be specified when mountPropagation is None or "
                             "not specified"))
    return out
