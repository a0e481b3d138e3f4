"""Every CRDError: one line that names the class and the field, with the fix where there is one.

Declaration mistakes fail when the class is created; schema mistakes when the schema or CRD
is asked for (`schema()`, `crd()`, `crds()`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from asyncop.crd import (
    CRDError,
    CustomResource,
    EmbeddedResource,
    Format,
    ListAtomic,
    ListMap,
    ListSet,
    MapType,
    Model,
    PrinterColumn,
    Rule,
    Scale,
    crds,
)


def schema_error(spec: type[BaseModel]) -> str:
    class Bad(CustomResource, group="example.com", version="v1"):
        spec: spec  # type: ignore[valid-type]

    with pytest.raises(CRDError) as info:
        Bad.schema()
    message = str(info.value)
    assert "\n" not in message
    return message


class Opaque:
    pass


class Item(Model):
    key: str | None = None
    value: int = 0
    tags: list[str] = []


def _spec(**fields: Any) -> type[BaseModel]:
    """A Model with the given (annotation, default) fields."""
    annotations = {name: ann for name, (ann, _) in fields.items()}
    namespace: dict[str, Any] = {"__annotations__": annotations,
                                 "model_config": ConfigDict(arbitrary_types_allowed=True)}
    namespace.update({name: default for name, (_, default) in fields.items()
                      if default is not ...})
    return type("Spec", (Model,), namespace)


class Node(Model):
    children: list[Node] = []


class TwoAndExtras(Model):
    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, int] = Field(init=False)  # type: ignore[assignment]
    known: int = 1


class A(Model):
    a: int = 1


class B(Model):
    b: str = ""


SCHEMA_ERRORS: list[tuple[str, type[BaseModel], str]] = [
    ("mixed tuple", _spec(ports=(tuple[int, str], (1, "a"))),
     "Bad: spec.ports: tuple[int, str] has no OpenAPI mapping (use list[...] or a Model)"),
    ("int | str", _spec(value=(int | str, 1)),
     "Bad: spec.value: int | str is not a structural schema (types differ); annotate with "
     "IntOrString or split the field"),
    ("models union", _spec(either=(A | B, A())),
     "Bad: spec.either: A | B is not a structural schema (a union of models); use one Model "
     "with optional fields"),
    ("arbitrary class", _spec(handle=(Opaque | None, None)),
     "Bad: spec.handle: Opaque has no OpenAPI mapping (use a str/int/float/bool, list[...], "
     "dict[str, ...] or a Model)"),
    ("callable", _spec(hook=(Callable[[int], int] | None, None)),
     "Bad: spec.hook: Callable[[int], int] has no OpenAPI mapping (use a str/int/float/bool, "
     "list[...], dict[str, ...] or a Model)"),
    ("recursion", _spec(root=(Node | None, None)),
     "Bad: spec.root.children[*]: Node refers to itself; a structural schema cannot recurse "
     "(use a dict[str, Any] field to cut the cycle)"),
    ("mixed enum", _spec(level=(Literal["low", 1], "low")),
     "Bad: spec.level: enum values 'low', 1 mix types; a structural enum has one type"),
    ("only None", _spec(nothing=(None, None)),
     "Bad: spec.nothing: a field that can only be None has no OpenAPI mapping"),
    ("fields and typed extras", _spec(inner=(TwoAndExtras | None, None)),
     "Bad: spec.inner: a model with both fields and a dict of extra values is not structural"),
    ("map key optional", _spec(items=(Annotated[list[Item], ListMap("key")], [])),
     "Bad: spec.items: ListMap key 'key' must be required or have a default"),
    ("map key missing", _spec(items=(Annotated[list[Item], ListMap("nope")], [])),
     "Bad: spec.items: ListMap key 'nope' is not a field of the items"),
    ("map key not scalar", _spec(items=(Annotated[list[Item], ListMap("tags")], [])),
     "Bad: spec.items: ListMap key 'tags' must be a scalar field"),
    ("map of scalars", _spec(items=(Annotated[list[str], ListMap("name")], [])),
     "Bad: spec.items: a ListMap holds objects (a Model)"),
    ("set of objects", _spec(items=(Annotated[list[Item], ListSet], [])),
     "Bad: spec.items: a ListSet holds scalars (or atomic maps); use ListMap for objects"),
    ("list type on a dict", _spec(labels=(Annotated[dict[str, str], ListAtomic], {})),
     "Bad: spec.labels: x-kubernetes-list-type atomic is for lists only"),
    ("set marked atomic", _spec(tags=(Annotated[set[str], ListAtomic], set())),
     "Bad: spec.tags: a set cannot be x-kubernetes-list-type atomic"),
    ("map type on a list", _spec(tags=(Annotated[list[str], MapType("atomic")], [])),
     "Bad: spec.tags: x-kubernetes-map-type is for objects only"),
    ("rule reason", _spec(n=(Annotated[int, Rule("self > 0", reason="Nope")], 1)),
     "Bad: spec.n: rule reason 'Nope' is not one of FieldValueInvalid, FieldValueForbidden, "
     "FieldValueRequired, FieldValueDuplicate"),
    ("rule message", _spec(n=(Annotated[int, Rule("self > 0", message="two\nlines")], 1)),
     "Bad: spec.n: rule message 'two\\nlines' must be one non-empty line"),
    ("empty rule", _spec(n=(Annotated[int, Rule("")], 1)),
     "Bad: spec.n: a validation rule needs a rule"),
    ("old self", _spec(n=(Annotated[int, Rule("self > 0", optional_old_self=True)], 1)),
     "Bad: spec.n: optional_old_self is only for transition rules (rules that use oldSelf)"),
    ("field path", _spec(n=(Annotated[int, Rule("self > 0", field_path="spec.n")], 1)),
     "Bad: spec.n: rule field_path 'spec.n' must be a path such as .spec.replicas"),
    ("unknown format", _spec(s=(Annotated[str, Format("semver")], "")),
     "Bad: spec.s: format 'semver' is not one kube-apiserver knows (bsonobjectid, byte, cidr, "
     "creditcard, date, date-time, datetime, double, duration, email, float, hexcolor, "
     "hostname, int32, int64, ipv4, ipv6, isbn, isbn10, isbn13, mac, password, rgbcolor, ssn, "
     "uri, uuid, uuid3, uuid4, uuid5)"),
    ("invalid default", _spec(size=(Annotated[int, Field(ge=1)], 0)),
     "Bad: spec.size: the default 0 is invalid: Input should be greater than or equal to 1"),
    ("embedded default", _spec(tpl=(Annotated[dict[str, Any], EmbeddedResource], {})),
     "Bad: spec.tpl: the default of an embedded resource needs apiVersion and kind (or make "
     "the field `... | None = None`)"),
    ("allOf/not", _spec(s=(Annotated[str, Field(json_schema_extra={"not": {"enum": ["x"]}})],
                           "")),
     "Bad: spec.s: str has no structural mapping (allOf/not); use a Model"),
]


@pytest.mark.parametrize(("spec", "message"), [(s, m) for _, s, m in SCHEMA_ERRORS],
                         ids=[i for i, _, _ in SCHEMA_ERRORS])
def test_schema_errors(spec: type[BaseModel], message: str) -> None:
    Node.model_rebuild()
    assert schema_error(spec) == message


def test_errors_name_the_class_asked_for_not_the_nested_model() -> None:
    class Inner(Model):
        value: int | str = 1

    class Outer(Model):
        inner: list[Inner] = []

    assert schema_error(Outer).startswith("Bad: spec.inner[*].value: int | str is not")


# -- declaration mistakes: at class creation ---------------------------------------------------
class WidgetSpec(Model):
    size: int = 1
    image: str = "nginx"
    tags: list[str] = []


class WidgetStatus(Model):
    replicas: int = 0
    selector: str | None = None


def declare(with_status: bool = True, **kw: Any) -> type[CustomResource]:
    if with_status:
        class Thing(CustomResource, **kw):  # type: ignore[call-arg]
            spec: WidgetSpec | None = None
            status: WidgetStatus | None = None

        return Thing

    class Plain(CustomResource, **kw):  # type: ignore[call-arg]
        spec: WidgetSpec | None = None

    return Plain


OK = {"group": "example.com", "version": "v1"}
DECLARATION_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"version": "v1"}, 'Thing: no group: declare it as class Thing(CustomResource, '
                        'group="example.com", version="v1")'),
    ({"group": "example.com"}, 'Thing: no version: declare it as class Thing(CustomResource, '
                               'group="example.com", version="v1")'),
    ({"group": "example", "version": "v1"}, "Thing: group 'example' must be a DNS subdomain "
                                            "with at least one dot (e.g. cache.example.com)"),
    ({"group": "Example.com", "version": "v1"}, "Thing: group 'Example.com' must be a DNS "
                                                "subdomain with at least one dot (e.g. "
                                                "cache.example.com)"),
    ({**OK, "version": "V1"}, "Thing: version 'V1' must be a DNS-1035 label such as v1 or "
                              "v1alpha1"),
    ({**OK, "version": "1"}, "Thing: version '1' must be a DNS-1035 label such as v1 or "
                             "v1alpha1"),
    ({**OK, "kind": "thing"}, "Thing: kind 'thing' must be UpperCamelCase letters and digits"),
    ({**OK, "plural": "Things"}, "Thing: plural 'Things' must be a lower-case DNS-1035 label"),
    ({**OK, "singular": "a_thing"}, "Thing: singular 'a_thing' must be a lower-case DNS-1035 "
                                    "label"),
    ({**OK, "short_names": ("T_1",)}, "Thing: short name 'T_1' must be a lower-case DNS-1035 "
                                      "label"),
    ({**OK, "short_names": "th"}, "Thing: short_names takes a tuple of strings, e.g. "
                                  "short_names=('th',)"),
    ({**OK, "categories": ("All",)}, "Thing: category 'All' must be a lower-case DNS-1035 "
                                     "label"),
    ({**OK, "scope": "Global"}, 'Thing: scope \'Global\' must be "Namespaced" or "Cluster"'),
    ({**OK, "storage": "yes"}, "Thing: storage='yes' must be True, False or None"),
    ({**OK, "deprecation_warning": "old"}, "Thing: deprecation_warning needs deprecated=True"),
    ({**OK, "printer_columns": ("Size",)}, "Thing: printer_columns takes PrinterColumn(...) "
                                           "values, not 'Size'"),
    ({**OK, "printer_columns": (PrinterColumn("S", ".spec.size", type="int"),)},  # type: ignore[arg-type]
     "Thing: printer column 'S': type 'int' is not one of string, integer, number, boolean, "
     "date"),
    ({**OK, "printer_columns": (PrinterColumn("S", ".spec.size", format="uuid"),)},
     "Thing: printer column 'S': format 'uuid' is not one of int32, int64, float, double, "
     "byte, date, date-time, password"),
    ({**OK, "printer_columns": (PrinterColumn("S", ".spec.size", priority=-1),)},
     "Thing: printer column 'S': priority must not be negative"),
    ({**OK, "printer_columns": (PrinterColumn("S", "spec.size"),)},
     "Thing: printer column 'S': json_path 'spec.size' must start with '.' (e.g. .spec.size)"),
    ({**OK, "printer_columns": (PrinterColumn("", ".spec.size"),)},
     "Thing: a printer column needs a name"),
    ({**OK, "scale": (".spec.size", ".status.replicas")},
     "Thing: scale takes Scale(...), not ('.spec.size', '.status.replicas')"),
    ({**OK, "scale": Scale(".metadata.generation", ".status.replicas")},
     "Thing: scale specReplicasPath: .metadata.generation must be a simple path under .spec"),
    ({**OK, "scale": Scale(".spec.size", ".spec.size")},
     "Thing: scale statusReplicasPath: .spec.size must be a simple path under .status"),
    ({**OK, "scale": Scale(".spec.size", ".status.replicas", ".metadata.labels")},
     "Thing: scale labelSelectorPath: .metadata.labels must be a simple path under .spec or "
     ".status"),
    ({**OK, "scale": Scale(".spec.sizes[0]", ".status.replicas")},
     "Thing: scale specReplicasPath: .spec.sizes[0] must be a simple path under .spec"),
    ({**OK, "selectable_fields": (".metadata.name",)},
     "Thing: selectable field .metadata.name: metadata fields cannot be selectable (name and "
     "namespace always are)"),
    ({**OK, "selectable_fields": (".spec.tags[0]",)},
     "Thing: selectable field '.spec.tags[0]' must be a simple path such as .spec.color"),
    ({**OK, "selectable_fields": tuple(f".spec.f{i}" for i in range(9))},
     "Thing: at most 8 selectable fields"),
    ({**OK, "shortnames": ("th",)}, "Thing: unknown class keyword 'shortnames' (known: rules, "
                                    "group, version, kind, plural, singular, scope, "
                                    "short_names, categories, printer_columns, "
                                    "status_subresource, scale, served, storage, deprecated, "
                                    "deprecation_warning, selectable_fields, "
                                    "embedded_object_meta)"),
    ({**OK, "embedded_object_meta": 1},
     "Thing: embedded_object_meta=1 must be True or False"),
    ({**OK, "rules": Rule("true")}, "Thing: rules= takes a list of Rule(...)"),
]


@pytest.mark.parametrize(("kw", "message"), DECLARATION_ERRORS,
                         ids=[m.split(": ", 1)[1][:40] for _, m in DECLARATION_ERRORS])
def test_declaration_mistakes_fail_at_class_creation(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(CRDError) as info:
        declare(**kw)
    assert str(info.value) == message


def test_status_subresource_needs_a_status_field() -> None:
    with pytest.raises(CRDError) as info:
        declare(with_status=False, status_subresource=True, **OK)
    assert str(info.value) == "Plain: status_subresource=True needs a status field"


def test_a_subclass_of_a_resource_declares_its_own_keywords() -> None:
    parent = declare(**OK)
    with pytest.raises(CRDError) as info:
        class Child(parent):  # type: ignore[valid-type,misc]
            pass
    assert str(info.value) == ("Child: subclasses the resource Thing; declare its own "
                               "group=..., version=... (and kind=... for another version of "
                               "the same kind)")


def test_an_unknown_keyword_on_a_model() -> None:
    with pytest.raises(CRDError) as info:
        class Spec(Model, rule=[Rule("true")]):  # type: ignore[call-arg]
            pass
    assert str(info.value) == "Spec: unknown class keyword 'rule' (known: rules)"


def test_an_abstract_base_has_no_crd() -> None:
    class Base(CustomResource):
        spec: WidgetSpec | None = None

    message = ('Base: no group: declare it as class Base(CustomResource, '
               'group="example.com", version="v1")')
    for call in (Base.schema, Base.crd, lambda: crds(Base)):
        with pytest.raises(CRDError) as info:
            call()
        assert str(info.value) == message


# -- paths checked against the schema: when the CRD is assembled -------------------------------
PATH_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"printer_columns": (PrinterColumn("X", ".spec.sise"),)},
     "Thing: printer column 'X': .spec.sise names no declared field"),
    ({"printer_columns": (PrinterColumn("X", ".spec.image", type="integer"),)},
     "Thing: printer column 'X': .spec.image is a string, not integer"),
    ({"printer_columns": (PrinterColumn("X", ".spec.size", type="date"),)},
     "Thing: printer column 'X': .spec.size is a integer, not date"),
    ({"printer_columns": (PrinterColumn("X", ".metadata.nope"),)},
     "Thing: printer column 'X': .metadata.nope names no declared field"),
    ({"scale": Scale(".spec.image", ".status.replicas")},
     "Thing: scale specReplicasPath: .spec.image must be an integer field"),
    ({"scale": Scale(".spec.size", ".status.selector")},
     "Thing: scale statusReplicasPath: .status.selector must be an integer field"),
    ({"scale": Scale(".spec.size", ".status.replicas", ".status.replicas")},
     "Thing: scale labelSelectorPath: .status.replicas must be a string field"),
    ({"scale": Scale(".spec.size", ".status.gone")},
     "Thing: scale statusReplicasPath: .status.gone names no declared field"),
    ({"selectable_fields": (".spec.tags",)},
     "Thing: selectable field .spec.tags must be a string, integer or boolean field"),
    ({"selectable_fields": (".spec.nope",)},
     "Thing: selectable field: .spec.nope names no declared field"),
]


@pytest.mark.parametrize(("kw", "message"), PATH_ERRORS,
                         ids=[m.split(": ", 1)[1][:40] for _, m in PATH_ERRORS])
def test_paths_must_name_declared_fields_of_a_fitting_type(kw: dict[str, Any],
                                                           message: str) -> None:
    thing = declare(**OK, **kw)
    for call in (thing.schema, thing.crd, lambda: crds(thing)):
        with pytest.raises(CRDError) as info:
            call()
        assert str(info.value) == message
