"""Structural validation, pruning and defaulting of custom resources
(asyncop.apiserver.schema.checks)."""

from __future__ import annotations

from typing import Any

import pytest

from asyncop.apiserver.schema.checks import apply_defaults, prune, validate

CRDKIND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["choice"],
            "properties": {
                "choice": {"type": "string", "enum": ["mysql", "tomcat"],
                           "pattern": "^(mysql|tomcat)$"},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}

WIDGET: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}},
        "spec": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 3, "maxLength": 10},
                "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0},
                "port": {"x-kubernetes-int-or-string": True},
                "at": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "minItems": 1, "maxItems": 3,
                         "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "opt": {"type": "string", "nullable": True},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "flag": {"type": "boolean"},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "protocol": {"type": "string", "default": "TCP"},
                        },
                    },
                },
                "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "x-kubernetes-preserve-unknown-fields": True},
                "nested": {
                    "type": "object",
                    "default": {},
                    "properties": {"level": {"type": "string", "default": "info"}},
                },
            },
        },
    },
}


def _cr(spec: dict[str, Any], name: str = "x") -> dict[str, Any]:
    return {"apiVersion": "iksoon.test.com/v1", "kind": "CrdKind",
            "metadata": {"name": name, "labels": {"a": "b"}}, "spec": spec}


def test_crdkind_valid_object_passes() -> None:
    assert validate(_cr({"choice": "mysql", "replicas": 3}), CRDKIND_SCHEMA) == []


def test_crdkind_rejects_bad_choice_and_replicas_with_field_named() -> None:
    causes = validate(_cr({"choice": "oracle", "replicas": 11}), CRDKIND_SCHEMA)
    assert {"reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "oracle": supported values: "mysql", "tomcat"',
            "field": "spec.choice"} in causes
    assert {"reason": "FieldValueInvalid",
            "message": "Invalid value: \"oracle\": spec.choice in body should match "
                       "'^(mysql|tomcat)$'",
            "field": "spec.choice"} in causes
    assert {"reason": "FieldValueInvalid",
            "message": "Invalid value: 11: spec.replicas in body should be less than or equal "
                       "to 10",
            "field": "spec.replicas"} in causes
    low = validate(_cr({"choice": "mysql", "replicas": 0}), CRDKIND_SCHEMA)
    assert [c["message"] for c in low] == [
        "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"]


def test_required_and_type_errors() -> None:
    causes = validate(_cr({"replicas": "three"}), CRDKIND_SCHEMA)
    assert {"reason": "FieldValueRequired", "message": "Required value",
            "field": "spec.choice"} in causes
    assert {"reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "string": spec.replicas in body must be of type integer: '
                       '"string"',
            "field": "spec.replicas"} in causes


def test_integer_accepts_whole_floats_but_not_bools() -> None:
    assert validate(_cr({"choice": "mysql", "replicas": 2.0}), CRDKIND_SCHEMA) == []
    bad = validate(_cr({"choice": "mysql", "replicas": 2.5}), CRDKIND_SCHEMA)
    assert bad[0]["message"].endswith('must be of type integer: "number"')
    bad = validate(_cr({"choice": "mysql", "replicas": True}), CRDKIND_SCHEMA)
    assert bad[0]["message"].endswith('must be of type integer: "boolean"')


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        ({"name": "ab"}, "spec.name",
         'Invalid value: "ab": spec.name in body should be at least 3 chars long'),
        ({"name": "abcdefghijk"}, "spec.name", "Too long: may not be more than 10 bytes"),
        ({"ratio": 0}, "spec.ratio",
         "Invalid value: 0: spec.ratio in body should be greater than 0"),
        ({"port": 1.5}, "spec.port",
         'Invalid value: "number": spec.port in body must be of type integer,string: "number"'),
        ({"at": "xyz"}, "spec.at",
         'Invalid value: "xyz": spec.at in body must be of type date-time: "xyz"'),
        ({"tags": []}, "spec.tags",
         "Invalid value: 0: spec.tags in body should have at least 1 items"),
        ({"tags": ["a", "b", "c", "d", "e"]}, "spec.tags",
         "Too many: 5: must have at most 3 items"),
        ({"tags": ["a", 1]}, "spec.tags[1]",
         'Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"'),
        ({"labels": {"k": 5}}, "spec.labels.k",
         'Invalid value: "integer": spec.labels.k in body must be of type string: "integer"'),
        ({"flag": None}, "spec.flag",
         'Invalid value: "null": spec.flag in body must be of type boolean: "null"'),
        ({"ports": [{"name": "a"}, {"name": "a"}]}, "spec.ports[1]",
         'Duplicate value: {"name":"a"}'),
        ({"template": {"kind": "Pod"}}, "spec.template.apiVersion",
         "Required value: must not be empty"),
    ],
)
def test_keyword_messages(spec: dict[str, Any], field: str, message: str) -> None:
    causes = validate(_cr(spec), WIDGET)
    assert [(c["field"], c["message"]) for c in causes] == [(field, message)]


def test_valid_widget_passes_including_nullable_and_int_or_string() -> None:
    spec = {"name": "abc", "ratio": 0.5, "port": "http", "at": "2024-05-01T12:00:00Z",
            "tags": ["a"], "labels": {"k": "v"}, "opt": None, "extra": {"any": [1, {"x": 2}]},
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}
    assert validate(_cr(spec), WIDGET) == []
    assert validate(_cr({"port": 8080}), WIDGET) == []


def test_root_metadata_only_name_is_validated() -> None:
    causes = validate(_cr({}, name="toolong"), WIDGET)
    assert [c["field"] for c in causes] == ["metadata.name"]
    obj = _cr({})
    obj["metadata"]["annotations"] = {"x": "y"}
    assert validate(obj, WIDGET) == []


def test_prune_drops_unknown_fields_and_reports_paths() -> None:
    obj = _cr({"name": "abc", "bogus": 1, "extra": {"keep": 1},
               "template": {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": "p", "bogus": 1}, "spec": {"x": 1}},
               "ports": [{"name": "a", "junk": True}], "labels": {"any": "thing"}})
    obj["status"] = {"phase": "x"}
    obj["topLevelJunk"] = 1
    obj["metadata"]["colour"] = "red"
    dropped = prune(obj, WIDGET)
    assert sorted(dropped) == ["metadata.colour", "spec.bogus", "spec.ports[0].junk",
                               "spec.template.metadata.bogus", "status", "topLevelJunk"]
    assert obj["apiVersion"] == "iksoon.test.com/v1" and obj["kind"] == "CrdKind"
    assert obj["metadata"] == {"name": "x", "labels": {"a": "b"}}
    assert obj["spec"]["extra"] == {"keep": 1}
    assert obj["spec"]["template"]["metadata"] == {"name": "p"}
    assert obj["spec"]["template"]["spec"] == {"x": 1}
    assert obj["spec"]["labels"] == {"any": "thing"}


def test_defaults_fill_absent_fields_recursively() -> None:
    obj = _cr({"ports": [{"name": "a"}, {"name": "b", "protocol": "UDP"}]})
    apply_defaults(obj, WIDGET)
    assert obj["spec"]["ports"] == [{"name": "a", "protocol": "TCP"},
                                    {"name": "b", "protocol": "UDP"}]
    assert obj["spec"]["nested"] == {"level": "info"}
    assert obj["metadata"] == {"name": "x", "labels": {"a": "b"}}


def test_defaults_satisfy_required_and_replace_non_nullable_nulls() -> None:
    obj = _cr({"choice": "tomcat"})
    apply_defaults(obj, CRDKIND_SCHEMA)
    assert obj["spec"]["replicas"] == 1
    obj = _cr({"choice": "tomcat", "replicas": None})
    apply_defaults(obj, CRDKIND_SCHEMA)
    assert obj["spec"]["replicas"] == 1
    obj = _cr({"flag": None, "opt": None})
    apply_defaults(obj, WIDGET)
    assert "flag" not in obj["spec"] and obj["spec"]["opt"] is None
    assert validate(obj, WIDGET) == []


def test_defaults_are_copies() -> None:
    a, b = _cr({}), _cr({})
    apply_defaults(a, WIDGET)
    apply_defaults(b, WIDGET)
    a["spec"]["nested"]["level"] = "debug"
    assert b["spec"]["nested"]["level"] == "info"
    assert WIDGET["properties"]["spec"]["properties"]["nested"]["default"] == {}


def test_combinators_and_additional_false() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "v": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "w": {"type": "string", "not": {"enum": ["bad"]}},
    }}}}
    assert validate(_cr({"v": 1, "w": "ok"}), schema) == []
    causes = validate(_cr({"v": True, "w": "bad"}), schema)
    assert [c["field"] for c in causes] == ["spec.v", "spec.w"]
    assert "must validate at least one schema (anyOf)" in causes[0]["message"]


def test_patterns_are_unanchored_and_ascii_like_re2() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "digits": {"type": "string", "pattern": "^\\d+$"},
        "loose": {"type": "string", "pattern": "(mysql|tomcat)"},
    }}}}
    assert validate(_cr({"digits": "123", "loose": "my-mysql-db"}), schema) == []
    causes = validate(_cr({"digits": "\u0661\u0662"}), schema)
    assert [c["field"] for c in causes] == ["spec.digits"]


def test_enum_of_numbers_lists_json_values_and_property_counts() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "level": {"type": "integer", "enum": [1, 2]},
        "tags": {"type": "object", "maxProperties": 1,
                 "additionalProperties": {"type": "string"}},
    }}}}
    causes = validate(_cr({"level": 3, "tags": {"a": "x", "b": 5}}), schema)
    assert [(c["field"], c["message"]) for c in causes] == [
        ("spec.level", 'Unsupported value: 3: supported values: "1", "2"'),
        ("spec.tags", "Too many: 2: must have at most 1 items"),
    ]


@pytest.mark.parametrize(
    ("value", "ok"),
    [("2024-05-01T12:00:00Z", True), ("2024-05-01T12:00:00.123456+00:00", True),
     ("2024-05-01T12:00:00+0000", True), ("2024-05-01 12:00:00", True),
     ("2024-05-01T12:00Z", True), ("2024-13-01T12:00:00Z", False),
     ("2024-05-01", False), ("yesterday", False)],
)
def test_date_time_format(value: str, ok: bool) -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "at": {"type": "string", "format": "date-time"}}}}}
    assert (validate(_cr({"at": value}), schema) == []) is ok
