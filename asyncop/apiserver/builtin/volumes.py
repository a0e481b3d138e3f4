"""A pod spec's volumes, validated as kube's ValidateVolumes and validateVolumeSource do.

Names are DNS-1123 labels and unique; each volume has exactly one source (kube checks the
sources in a fixed order and reports the later ones as "may not specify more than 1 volume
type"; a volume without any source was defaulted to emptyDir). The common sources are
checked field by field with kube's messages: emptyDir, hostPath, secret, configMap,
persistentVolumeClaim, downwardAPI, projected, nfs, csi, ephemeral; the rarer in-tree
plugins are counted but not inspected. `validate` answers the causes and the volumes that
containers may mount (kube leaves an invalid volume out of that map, so mounting it is
also "Not found"). Invariant: pure; never raises on a value of the wrong shape.
"""

from __future__ import annotations

from typing import Any

from asyncop.apiserver.builtin import quantity
from asyncop.apiserver.builtin.checks import is_dns1123_label
from asyncop.apiserver.builtin.containers import object_field_selector, resource_field_selector
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
    not_supported,
    required,
)
from asyncop.apiserver.builtin.filepaths import local_non_reserved_path, no_backsteps

#: validateVolumeSource's order, and the path kube names in its "more than 1" error
#: (kube's own spelling, `downwarAPI` included)
SOURCES = (("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
           ("gcePersistentDisk", "gcePersistentDisk"),
           ("awsElasticBlockStore", "awsElasticBlockStore"), ("secret", "secret"),
           ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
           ("flocker", "flocker"), ("persistentVolumeClaim", "persistentVolumeClaim"),
           ("rbd", "rbd"), ("cinder", "cinder"), ("cephfs", "cephFS"), ("quobyte", "quobyte"),
           ("downwardAPI", "downwarAPI"), ("fc", "fc"), ("flexVolume", "flexVolume"),
           ("configMap", "configMap"), ("azureFile", "azureFile"),
           ("vsphereVolume", "vsphereVolume"), ("photonPersistentDisk", "photonPersistentDisk"),
           ("portworxVolume", "portworxVolume"), ("azureDisk", "azureDisk"),
           ("storageos", "storageos"), ("projected", "projected"), ("scaleIO", "scaleIO"),
           ("csi", "csi"), ("ephemeral", "ephemeral"), ("image", "image"))
_SOURCE_ORDER = {key: i for i, (key, _) in enumerate(SOURCES)}
_SHOWN = dict(SOURCES)
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
                   "FileOrCreate", "Socket")
_VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name",
                       "metadata.namespace", "metadata.uid")
FILE_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"


def sources_of(volume: Obj) -> list[str]:
    """The volume sources a volume sets (object-valued), in validateVolumeSource's order;
    found from the volume's own few keys rather than by asking for all thirty."""
    found = [key for key, value in volume.items()
             if key in _SOURCE_ORDER and isinstance(value, dict)]
    if len(found) > 1:
        found.sort(key=_SOURCE_ORDER.__getitem__)
    return found


def validate(items: list[Any], path: str) -> tuple[Causes, dict[str, Obj]]:
    """ValidateVolumes: (causes, name → volume of the valid ones)."""
    out: Causes = []
    volumes: dict[str, Obj] = {}
    for i, volume in enumerate(items):
        volume, at = as_dict(volume), f"{path}[{i}]"
        name = as_str(volume.get("name"))
        errs = _source(volume, at)
        if not name:
            errs.append(required(f"{at}.name"))
        elif msgs := is_dns1123_label(name):
            errs += each(f"{at}.name", name, msgs)
        if name in volumes:
            errs.append(duplicate(f"{at}.name", name))
        if errs:
            out += errs
        else:
            volumes[name] = volume
    return out, volumes


def _source(volume: Obj, path: str) -> Causes:
    out: Causes = []
    count = 0
    for key in sources_of(volume):
        if count:
            out.append(forbidden(f"{path}.{_SHOWN[key]}",
                                 "may not specify more than 1 volume type"))
            continue
        count += 1
        check = _CHECKS.get(key)
        if check is not None:
            out += check(volume[key], f"{path}.{key}")
    if count == 0:
        out.append(required(path, "must specify a volume type"))
    return out


def _empty_dir(source: Obj, path: str) -> Causes:
    limit = source.get("sizeLimit")
    if isinstance(limit, quantity.QUANTITY_JSON) and not isinstance(limit, bool):
        try:
            if quantity.parse(limit).value < 0:
                return [forbidden(f"{path}.sizeLimit",
                                  "SizeLimit field must be a valid resource quantity")]
        except quantity.QuantityError:
            pass
    return []


def _host_path(source: Obj, path: str) -> Causes:
    target = as_str(source.get("path"))
    if not target:
        return [required(f"{path}.path")]
    out = no_backsteps(target, f"{path}.path")
    kind = source.get("type")
    if isinstance(kind, str) and kind not in HOST_PATH_TYPES:
        out.append(not_supported(f"{path}.type", kind, HOST_PATH_TYPES))
    return out


def _mode(value: Any, path: str) -> Causes:
    mode = as_int(value)
    return [invalid(path, mode, FILE_MODE_MSG)] if mode is not None and not 0 <= mode <= 0o777 \
        else []


def key_to_path(item: Obj, path: str) -> Causes:
    """validateKeyToPath."""
    out = [] if as_str(item.get("key")) else [required(f"{path}.key")]
    target = as_str(item.get("path"))
    if not target:
        out.append(required(f"{path}.path"))
    out += local_non_reserved_path(target, f"{path}.path")
    return out + _mode(item.get("mode"), f"{path}.mode")


def _named_items(source: Obj, path: str, name_key: str) -> Causes:
    """secret / configMap: the name, defaultMode, items."""
    out = [] if as_str(source.get(name_key)) else [required(f"{path}.{name_key}")]
    out += _mode(source.get("defaultMode"), f"{path}.defaultMode")
    for i, item in enumerate(as_list(source.get("items"))):
        out += key_to_path(as_dict(item), f"{path}.items[{i}]")
    return out


def _secret(source: Obj, path: str) -> Causes:
    return _named_items(source, path, "secretName")


def _config_map(source: Obj, path: str) -> Causes:
    return _named_items(source, path, "name")


def _claim(source: Obj, path: str) -> Causes:
    return [] if as_str(source.get("claimName")) else [required(f"{path}.claimName")]


def _nfs(source: Obj, path: str) -> Causes:
    out = [] if as_str(source.get("server")) else [required(f"{path}.server")]
    target = as_str(source.get("path"))
    if not target:
        out.append(required(f"{path}.path"))
    if not target.startswith("/"):
        out.append(invalid(f"{path}.path", target, "must be an absolute path"))
    return out


def _csi(source: Obj, path: str) -> Causes:
    return [] if as_str(source.get("driver")) else [required(f"{path}.driver")]


def downward_file(item: Obj, path: str) -> Causes:
    """validateDownwardAPIVolumeFile."""
    target = as_str(item.get("path"))
    out = [] if target else [required(f"{path}.path")]
    out += local_non_reserved_path(target, f"{path}.path")
    field_ref, resource_ref = item.get("fieldRef"), item.get("resourceFieldRef")
    if isinstance(field_ref, dict):
        out += object_field_selector(field_ref, _VOLUME_FIELD_PATHS, f"{path}.fieldRef")
        if isinstance(resource_ref, dict):
            out.append(invalid(path, "resource", "fieldRef and resourceFieldRef can not be "
                               "specified simultaneously"))
    elif isinstance(resource_ref, dict):
        out += resource_field_selector(resource_ref, f"{path}.resourceFieldRef", volume=True)
    else:
        out.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    return out + _mode(item.get("mode"), f"{path}.mode")


def _downward(source: Obj, path: str) -> Causes:
    out = _mode(source.get("defaultMode"), f"{path}.defaultMode")
    for item in as_list(source.get("items")):
        out += downward_file(as_dict(item), path)  # kube: no index in these paths
    return out


def _projected(source: Obj, path: str) -> Causes:
    """validateProjectedVolumeSource / validateProjectionSources."""
    out = _mode(source.get("defaultMode"), f"{path}.defaultMode")
    seen: set[str] = set()
    for i, item in enumerate(as_list(source.get("sources"))):
        item, at = as_dict(item), f"{path}.sources[{i}]"
        count = 0
        for key in ("secret", "configMap"):
            if isinstance(item.get(key), dict):
                count += 1
                src = item[key]
                if not as_str(src.get("name")):
                    out.append(required(f"{at}.{key}.name"))
                for j, kp in enumerate(as_list(src.get("items"))):
                    kp = as_dict(kp)
                    out += key_to_path(kp, f"{at}.{key}.items[{j}]")
                    target = as_str(kp.get("path"))
                    if target and target in seen:
                        out.append(invalid(path, as_str(src.get("name")),
                                           "conflicting duplicate paths"))
                    if target:
                        seen.add(target)
        if isinstance(item.get("downwardAPI"), dict):
            count += 1
            for file in as_list(item["downwardAPI"].get("items")):
                file = as_dict(file)
                out += downward_file(file, f"{at}.downwardAPI")
                target = as_str(file.get("path"))
                if target and target in seen:
                    out.append(invalid(path, target, "conflicting duplicate paths"))
                if target:
                    seen.add(target)
        if isinstance(item.get("serviceAccountToken"), dict):
            count += 1
            out += _token(item["serviceAccountToken"], f"{at}.serviceAccountToken", path)
        if isinstance(item.get("clusterTrustBundle"), dict):
            count += 1
        if count > 1:
            out.append(forbidden(at, "may not specify more than 1 volume type per source"))
    return out


def _token(token: Obj, at: str, path: str) -> Causes:
    out: Causes = []
    expiry = as_int(token.get("expirationSeconds"))
    if expiry is not None and expiry < 600:
        out.append(invalid(f"{at}.expirationSeconds", expiry,
                           "may not specify a duration less than 10 minutes"))
    if expiry is not None and expiry > 1 << 32:
        out.append(invalid(f"{at}.expirationSeconds", expiry,
                           "may not specify a duration larger than 2^32 seconds"))
    target = as_str(token.get("path"))
    if not target:
        out.append(required(f"{path}.path"))
    else:
        out += local_non_reserved_path(target, f"{path}.path")
    return out


def _ephemeral(source: Obj, path: str) -> Causes:
    template = source.get("volumeClaimTemplate")
    if not isinstance(template, dict):
        return [required(f"{path}.volumeClaimTemplate")]
    return []


_CHECKS = {"emptyDir": _empty_dir, "hostPath": _host_path, "secret": _secret,
           "nfs": _nfs, "persistentVolumeClaim": _claim, "downwardAPI": _downward,
           "configMap": _config_map, "projected": _projected, "csi": _csi,
           "ephemeral": _ephemeral}
