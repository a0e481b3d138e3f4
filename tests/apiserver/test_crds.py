"""CRD validation, defaults and served types (asyncop.apiserver.core.crds)."""

from __future__ import annotations

import copy
from typing import Any

from asyncop.apiserver.core.crds import (
    DEFAULT_AGE_COLUMN,
    default_crd,
    resource_types,
    validate_crd,
    validate_crd_update,
)
from asyncop.apiserver.core.resources import ScaleSpec


def crdkind_crd() -> dict[str, Any]:
    """The seeds' CrdKind CRD (003), with an anchored enum as our SPEC asks."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crdplural.iksoon.test.com"},
        "spec": {
            "group": "iksoon.test.com",
            "scope": "Namespaced",
            "names": {"plural": "crdplural", "singular": "crdsingular", "kind": "CrdKind",
                      "shortNames": ["crdshort", "iksoontest"]},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "properties": {
                        "choice": {"type": "string", "pattern": "^(mysql|tomcat)$"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10}}}}}},
                "subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [
                    {"name": "DBorWAS", "type": "string", "priority": 0,
                     "jsonPath": ".spec.choice"},
                    {"name": "replicas", "type": "string", "priority": 1,
                     "jsonPath": ".spec.replicas"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
            }],
        },
    }


def _fields(crd: dict[str, Any]) -> dict[str, str]:
    return {c["field"]: c["message"] for c in validate_crd(crd)}


def test_valid_crd_has_no_causes() -> None:
    assert validate_crd(crdkind_crd()) == []


def test_name_must_be_plural_dot_group() -> None:
    crd = crdkind_crd()
    crd["metadata"]["name"] = "crdkind.iksoon.test.com"
    assert _fields(crd) == {"metadata.name": 'Invalid value: "crdkind.iksoon.test.com": must be '
                                             'spec.names.plural+"."+spec.group'}


def test_group_names_scope_required_and_checked() -> None:
    crd = crdkind_crd()
    crd["spec"]["group"] = "example"
    crd["metadata"]["name"] = "crdplural.example"
    del crd["spec"]["names"]["kind"]
    crd["spec"]["scope"] = "Global"
    fields = _fields(crd)
    assert fields["spec.group"] == (
        'Invalid value: "example": should be a domain with at least one dot')
    assert fields["spec.names.kind"] == "Required value"
    assert fields["spec.scope"] == ('Unsupported value: "Global": supported values: "Cluster", '
                                    '"Namespaced"')
    crd = crdkind_crd()
    del crd["spec"]["names"]["plural"]
    assert "spec.names.plural" in _fields(crd)


def test_exactly_one_storage_version_and_schemas_required() -> None:
    crd = crdkind_crd()
    v2 = copy.deepcopy(crd["spec"]["versions"][0])
    v2["name"] = "v2"
    del v2["schema"]
    crd["spec"]["versions"].append(v2)
    fields = _fields(crd)
    assert fields["spec.versions"].endswith("must have exactly one version marked as storage "
                                            "version")
    assert fields["spec.versions[1].schema.openAPIV3Schema"] == (
        "Required value: schemas are required")


def test_non_structural_schema_causes_name_the_path() -> None:
    crd = crdkind_crd()
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    del spec["type"]
    spec["properties"]["choice"]["$ref"] = "#/x"
    spec["properties"]["tags"] = {"type": "array"}
    spec["properties"]["map"] = {"type": "object", "properties": {"a": {"type": "string"}},
                                 "additionalProperties": {"type": "string"}}
    spec["properties"]["set"] = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    spec["properties"]["re"] = {"type": "string", "pattern": "("}
    spec["properties"]["n"] = {"type": "integer", "default": "x"}
    p = "spec.versions[0].schema.openAPIV3Schema.properties[spec]"
    fields = _fields(crd)
    assert fields[f"{p}.type"] == "Required value: must not be empty for specified object fields"
    assert f"{p}.properties[choice].$ref" in fields
    assert fields[f"{p}.properties[tags].items"] == "Required value: must be specified"
    assert fields[f"{p}.properties[map].additionalProperties"] == (
        "Forbidden: additionalProperties and properties are mutual exclusive")
    assert "quadratic" in fields[f"{p}.properties[set].uniqueItems"]
    assert "valid regular expression" in fields[f"{p}.properties[re].pattern"]
    assert fields[f"{p}.properties[n].default"].endswith('must be of type integer: "string"')


def test_root_type_and_metadata_restrictions() -> None:
    crd = crdkind_crd()
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    del schema["type"]
    schema["properties"]["metadata"] = {"type": "object", "properties": {"labels": {
        "type": "object"}}}
    fields = _fields(crd)
    root = "spec.versions[0].schema.openAPIV3Schema"
    assert fields[f"{root}.type"] == "Required value: must not be empty at the root"
    assert f"{root}.properties[metadata]" in fields


def test_int_or_string_and_preserve_unknown_need_no_type() -> None:
    crd = crdkind_crd()
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    props["spec"]["properties"]["port"] = {"x-kubernetes-int-or-string": True}
    props["spec"]["properties"]["blob"] = {"x-kubernetes-preserve-unknown-fields": True}
    assert validate_crd(crd) == []


def test_extension_and_nested_invariants() -> None:
    crd = crdkind_crd()
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    props["spec"]["properties"].update({
        "port": {"x-kubernetes-int-or-string": True,
                 "x-kubernetes-preserve-unknown-fields": True},
        "any": {"type": "string", "anyOf": [{"type": "string", "pattern": "^a"},
                                            {"enum": ["b"]}]},
        "tpl": {"type": "string", "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
    })
    p = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties"
    assert _fields(crd) == {
        f"{p}[port].x-kubernetes-preserve-unknown-fields":
            "Invalid value: true: must be false if x-kubernetes-int-or-string is true",
        f"{p}[any].anyOf[0].type": "Forbidden: must be empty to be structural",
        f"{p}[tpl].type":
            'Invalid value: "string": must be object if x-kubernetes-embedded-resource is true',
        f"{p}[ports].x-kubernetes-list-map-keys":
            "Required value: must not be empty if x-kubernetes-list-type is map",
    }
    crd = crdkind_crd()
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["additionalProperties"] = {"type": "string"}
    schema["properties"]["kind"] = {"type": "integer"}
    root = "spec.versions[0].schema.openAPIV3Schema"
    fields = _fields(crd)
    assert fields[f"{root}.additionalProperties"] == "Forbidden: must not be used at the root"
    assert fields[f"{root}.properties[kind].type"] == 'Invalid value: "integer": must be string'


def test_printer_columns_and_scale_paths_checked() -> None:
    crd = crdkind_crd()
    version = crd["spec"]["versions"][0]
    version["additionalPrinterColumns"][0]["type"] = "text"
    version["subresources"]["scale"]["specReplicasPath"] = ".status.replicas"
    fields = _fields(crd)
    assert fields["spec.versions[0].additionalPrinterColumns[0].type"].startswith(
        'Unsupported value: "text"')
    assert "spec.versions[0].subresources.scale.specReplicasPath" in fields


def test_resource_types_describe_each_served_version() -> None:
    crd = crdkind_crd()
    v1beta1 = copy.deepcopy(crd["spec"]["versions"][0])
    v1beta1.update(name="v1beta1", storage=False)
    del v1beta1["additionalPrinterColumns"]
    del v1beta1["subresources"]
    unserved = copy.deepcopy(v1beta1)
    unserved.update(name="v1alpha1", served=False)
    crd["spec"]["versions"] += [v1beta1, unserved]
    assert validate_crd(crd) == []
    types = resource_types(crd)
    assert [t.version for t in types] == ["v1", "v1beta1"]
    v1, beta = types
    assert (v1.group, v1.plural, v1.kind, v1.namespaced) == (
        "iksoon.test.com", "crdplural", "CrdKind", True)
    assert v1.singular == "crdsingular" and v1.short_names == ("crdshort", "iksoontest")
    assert v1.has_status and v1.scale == ScaleSpec("spec.replicas", "status.replicas",
                                                   "status.selector")
    assert v1.crd_name == "crdplural.iksoon.test.com" and v1.is_custom
    assert v1.storage_version == "v1" and beta.storage_version == "v1"
    assert v1.list_kind_name == "CrdKindList"
    assert [c["name"] for c in v1.printer_columns] == ["DBorWAS", "replicas", "Age"]
    assert beta.printer_columns == (DEFAULT_AGE_COLUMN,)
    assert not beta.has_status and beta.scale is None
    assert v1.schema is not None and v1.schema["type"] == "object"


def test_cluster_scope_and_defaults() -> None:
    crd = crdkind_crd()
    crd["spec"]["scope"] = "Cluster"
    del crd["spec"]["names"]["singular"]
    default_crd(crd)
    assert crd["spec"]["names"]["singular"] == "crdkind"
    assert crd["spec"]["names"]["listKind"] == "CrdKindList"
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["status"]["storedVersions"] == ["v1"]
    (rt,) = resource_types(crd)
    assert not rt.namespaced and rt.singular == "crdkind"


def test_update_rules_immutable_scope_and_stored_versions() -> None:
    old = crdkind_crd()
    default_crd(old)
    assert validate_crd_update(copy.deepcopy(old), old) == []
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Cluster"
    new["spec"]["versions"][0]["name"] = "v2"
    fields = {c["field"]: c["message"] for c in validate_crd_update(new, old)}
    assert fields == {
        "spec.scope": 'Invalid value: "Cluster": field is immutable',
        "status.storedVersions[0]": 'Invalid value: "v1": must appear in spec.versions',
    }
