"""CRDError and describe_error: one readable line for a bad model and for a bad object.

`CRDError` is raised when a resource class cannot become a CRD: a declaration mistake (no
group, a bad version name), a field type with no OpenAPI mapping, a schema that is not
structural, a printer column naming no field. Its message is one line that starts with the
resource or model class and names the field path, e.g.
`Memcached: spec.ports: tuple[int, str] has no OpenAPI mapping (use list[...] or a Model)`.

`describe_error(exc)` turns a pydantic ValidationError from `Resource.parse` into
`spec.size: Input should be less than or equal to 10; spec.image: Field required`.
"""

from __future__ import annotations

from pydantic import ValidationError


class CRDError(ValueError):
    """A resource class that cannot become a CRD; `str()` is one line naming class and field."""


def location(loc: tuple[int | str, ...]) -> str:
    """`("spec", "ports", 2, "name")` -> `spec.ports[2].name`."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def describe_error(exc: ValidationError) -> str:
    """Every error of `exc` as `path: message`, joined with `; `."""
    parts = []
    for err in exc.errors(include_url=False):
        msg = str(err["msg"]).removeprefix("Value error, ")
        where = location(tuple(err["loc"]))
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts)
