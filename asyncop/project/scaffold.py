"""Scaffolding: `asyncop init` (a new operator project) and `asyncop create api` (a new kind).

Templates are package data (`asyncop/project/templates/`): `project/` for init, `chart/`
for the Helm chart at `charts/<name>/`, `api/` for one kind. A template file is a `.tmpl`
whose `%%token%%`s are replaced (the syntax never appears in Python, Makefiles or Helm
templates, which keep their own `$(...)` and `{{ }}`); directories named `__package__` become
the project's package; `gitignore`/`dockerignore` become dot files.

`create api` writes `<package>/api/<version>/<kind>.py` (the model), `<package>/controllers/
<kind>.py` (a reconciler skeleton), `tests/test_<kind>.py` and
`config/samples/<group>_<version>_<kind>.yaml`, and registers the kind in `operator.py`
below its `# asyncop:scaffold:*` markers. `builtin_clashes` names the built-in kinds whose
resource names (plural or singular) the new kind also takes: kubectl resolves such a short
name to the built-in one, so the new kind needs its full name there. `crd_clashes` does the
same for CRDs — the project's own (`crd_names_in(config/crd)`) and the ones bundled with
asyncop — in other groups (kubectl then means one of the two: the full names say which);
in the kind's own group, a name another kind already has is a `ScaffoldError` before anything
is written (kube would not accept that CRD's names).

Invariants: scaffolding never overwrites a file whose content differs from what it would
write (`init` refuses with one line; `create api` keeps the user's edited file and says so);
running either twice changes nothing; every problem is a `ScaffoldError` with one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import yaml

from asyncop.api.kinds import BUILTIN
from asyncop.crd import names

_TOKEN = re.compile(r"%%([a-z_]+)%%")
_DOT_FILES = {"gitignore": ".gitignore", "dockerignore": ".dockerignore"}
_PROJECT_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")

IMPORTS, CONTROLLERS, RESOURCES = (f"# asyncop:scaffold:{m}"
                                   for m in ("imports", "controllers", "resources"))


class ScaffoldError(ValueError):
    """A scaffolding request that cannot be carried out; one line naming the fix."""


@dataclass(frozen=True, slots=True)
class Written:
    path: Path
    action: str  # "wrote" | "unchanged" | "kept" (a user-edited file left alone) | "updated"


def _templates(kind: str) -> Traversable:
    return resources.files("asyncop.project").joinpath("templates", kind)


def _walk(root: Traversable, prefix: str = "") -> Iterator[tuple[str, str]]:
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        rel = f"{prefix}{entry.name}"
        if entry.is_dir():
            yield from _walk(entry, rel + "/")
        elif entry.name.endswith(".tmpl"):
            yield rel.removesuffix(".tmpl"), entry.read_text(encoding="utf-8")


def render(text: str, values: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"template token {m.group(0)} has no value")
        return values[m.group(1)]

    return _TOKEN.sub(sub, text)


def _target(rel: str, values: dict[str, str]) -> str:
    parts = [values["package"] if p == "__package__" else _DOT_FILES.get(p, p)
             for p in rel.split("/")]
    return "/".join(parts)


# -- init -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class InitRequest:
    name: str
    domain: str
    directory: Path
    package: str | None = None
    asyncop_source: str = ""
    """`ASYNCOP` in the Makefile: an asyncop checkout's path, a pip requirement, or "" (the
    version pyproject.toml asks for, from the package index)."""
    asyncop_version: str = "0.1.0"

    def values(self) -> dict[str, str]:
        if not _PROJECT_NAME.match(self.name) or len(self.name) > 53:
            raise ScaffoldError(f"--name {self.name!r} must be lower-case letters, digits and "
                                "dashes, starting with a letter (e.g. memcached-operator)")
        if not names.is_group(self.domain):
            raise ScaffoldError(f"--domain {self.domain!r} must be a DNS domain with a dot "
                                "(e.g. example.com)")
        package = self.package or self.name.replace("-", "_")
        if not package.isidentifier() or package.startswith("asyncop"):
            raise ScaffoldError(f"package name {package!r} must be a Python identifier not "
                                "starting with asyncop (use --package)")
        return {"name": self.name, "domain": self.domain, "package": package,
                "asyncop_source": self.asyncop_source,
                "asyncop_version": self.asyncop_version}


def init_files(request: InitRequest) -> dict[Path, str]:
    """Every file `asyncop init` writes: project files, then the chart."""
    values = request.values()
    root = request.directory
    files = {root / _target(rel, values): render(text, values)
             for rel, text in _walk(_templates("project"))}
    chart = root / "charts" / values["name"]
    files.update({chart / rel: render(text, values) for rel, text in _walk(_templates("chart"))})
    return files


def write_new(files: dict[Path, str]) -> list[Written]:
    """Write `files`, refusing (before writing anything) to overwrite a different file."""
    clashes = [p for p, text in files.items()
               if p.exists() and (not p.is_file() or p.read_text(encoding="utf-8") != text)]
    if clashes:
        raise ScaffoldError(f"refusing to overwrite {clashes[0]} (and {len(clashes) - 1} more); "
                            "asyncop init writes a new project: use an empty directory"
                            if len(clashes) > 1 else
                            f"refusing to overwrite {clashes[0]}; asyncop init writes a new "
                            "project: use an empty directory")
    out = []
    for path, text in files.items():
        if path.exists():
            out.append(Written(path, "unchanged"))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(Written(path, "wrote"))
    return out


# -- create api --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ApiRequest:
    root: Path
    package: str
    domain: str | None
    group: str
    version: str
    kind: str
    plural: str | None = None
    namespaced: bool = True

    def values(self) -> dict[str, str]:
        if not _KIND.match(self.kind):
            raise ScaffoldError(f"--kind {self.kind!r} must be UpperCamelCase (e.g. Memcached)")
        if not names.is_dns1035_label(self.version):
            raise ScaffoldError(f"--version {self.version!r} must be a DNS-1035 label such as "
                                "v1alpha1")
        full = self.group if "." in self.group else (
            f"{self.group}.{self.domain}" if self.domain else self.group)
        if not names.is_group(full):
            raise ScaffoldError(f"--group {self.group!r} gives the API group {full!r}, which "
                                "must be a DNS domain with a dot (set domain under "
                                "[tool.asyncop], or give the full group)")
        plural = self.plural or names.plural_of(self.kind)
        if not names.is_dns1035_label(plural):
            raise ScaffoldError(f"--plural {plural!r} must be a lower-case DNS-1035 label")
        ns = self.namespaced
        return {"package": self.package, "group": full, "version": self.version,
                "kind": self.kind, "kind_lower": self.kind.lower(), "plural": plural,
                "scope": "Namespaced" if ns else "Cluster",
                "namespace_arg": ', namespace="default"' if ns else "",
                "namespace_kw": ', namespace="default"' if ns else "",
                "group_short": full.split(".")[0]}


def builtin_clashes(request: ApiRequest) -> list[str]:
    """One line per built-in kind that has the new kind's plural or singular as its own:
    kubectl prefers built-in groups, so `kubectl get <that name>` lists the built-in objects
    (kubebuilder's CronJob tutorial meets this with batch/v1 CronJob)."""
    values = request.values()
    mine = {values["plural"], values["kind_lower"]}
    out = []
    for kind in BUILTIN:
        taken = sorted(mine & {kind.plural, kind.kind.lower()}, key=len, reverse=True)
        if taken and kind.group != values["group"]:
            verb = "names" if len(taken) == 1 else "name"
            out.append(f"{' and '.join(taken)} also {verb} the built-in {kind.kind} "
                       f"({kind.api_version}): `kubectl get {taken[0]}` lists those; "
                       f"`kubectl get {values['plural']}.{values['group']}` lists yours")
    return out


@dataclass(frozen=True, slots=True)
class CrdNames:
    """The names of one CRD that kubectl resolves (`spec.names`), and where it comes from."""

    group: str
    kind: str
    plural: str
    singular: str
    where: str
    """Where the user finds it: "this project's config/crd/x.yaml", "bundled with asyncop"."""

    @property
    def resource(self) -> str:
        return f"{self.plural}.{self.group}"


def crd_names_in(directory: Path, *, root: Path) -> list[CrdNames]:
    """The CRDs in the YAML files of `directory` (a project's generated `config/crd`)."""
    found: list[CrdNames] = []
    for path in sorted(directory.glob("*.y*ml")) if directory.is_dir() else ():
        try:
            docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except (OSError, yaml.YAMLError):
            continue  # not ours to judge here: `asyncop generate` rewrites it
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec")
            names = spec.get("names") if isinstance(spec, dict) else None
            if not isinstance(spec, dict) or not isinstance(names, dict):
                continue
            rel = path.relative_to(root) if path.is_relative_to(root) else path
            found.append(CrdNames(group=str(spec.get("group") or ""),
                                  kind=str(names.get("kind") or ""),
                                  plural=str(names.get("plural") or ""),
                                  singular=str(names.get("singular") or "").lower()
                                  or str(names.get("kind") or "").lower(),
                                  where=f"this project's {rel}"))
    return found


def crd_clashes(request: ApiRequest, crds: Iterable[CrdNames]) -> list[str]:
    """One line per CRD of another group that has the new kind's plural or singular as its
    own plural or singular (kubectl then resolves the bare name to one of the two); raises
    ScaffoldError when a CRD of the same group has one of its names or its kind (another
    kind, or the same kind under another plural: kube accepts only one of them)."""
    values = request.values()
    group, plural = values["group"], values["plural"]
    mine = {plural, values["kind_lower"]}
    out = []
    for crd in crds:
        taken = sorted(mine & {crd.plural, crd.singular}, key=len, reverse=True)
        if crd.group == group:
            if crd.kind == request.kind and crd.plural == plural:
                continue  # the same CRD: another version of it, or the same again
            if taken or crd.kind == request.kind:
                what = f"the name {taken[0]!r}" if taken else f"the kind {request.kind!r}"
                raise ScaffoldError(f"{what} is already taken in {group} by the CRD "
                                    f"{crd.resource} (kind {crd.kind}, {crd.where}); choose "
                                    "another --kind or --plural")
            continue
        if taken:
            verb = "names" if len(taken) == 1 else "name"
            out.append(f"{' and '.join(taken)} also {verb} the CRD {crd.resource} (kind "
                       f"{crd.kind}, {crd.where}): `kubectl get {taken[0]}` lists one of the "
                       f"two; `kubectl get {crd.resource}` lists those, `kubectl get "
                       f"{plural}.{group}` lists yours")
    return out


def api_files(request: ApiRequest) -> dict[Path, str]:
    values = request.values()
    root, pkg, low = request.root, request.package, values["kind_lower"]
    api = _templates("api")

    def text(name: str) -> str:
        return render(api.joinpath(name).read_text(encoding="utf-8"), values)

    version_dir = root / pkg / "api" / request.version
    sample = f"{values['group_short']}_{request.version}_{low}.yaml"
    return {
        version_dir / "__init__.py": text("version_init.py.tmpl"),
        version_dir / f"{low}.py": text("model.py.tmpl"),
        root / pkg / "controllers" / f"{low}.py": text("controller.py.tmpl"),
        root / "tests" / f"test_{low}.py": text("test.py.tmpl"),
        root / "config" / "samples" / sample: text("sample.yaml.tmpl"),
    }


def write_kept(files: dict[Path, str]) -> list[Written]:
    """Write missing files; an existing file is unchanged (same) or kept (edited)."""
    out = []
    for path, text in files.items():
        if path.exists():
            same = path.read_text(encoding="utf-8") == text
            out.append(Written(path, "unchanged" if same else "kept"))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(Written(path, "wrote"))
    return out


def register(operator_py: Path, request: ApiRequest) -> Written:
    """Add the kind's imports, controller and resource to `operator.py` (once)."""
    values = request.values()
    low, kind = values["kind_lower"], request.kind
    text = operator_py.read_text(encoding="utf-8")
    missing = [m for m in (IMPORTS, CONTROLLERS, RESOURCES) if m not in text]
    if missing:
        raise ScaffoldError(f"{operator_py} has no `{missing[0]}` marker; register "
                            f"{low}_controller and {kind} in it by hand")
    imports = [f"from {request.package}.api.{request.version}.{low} import {kind}",
               f"from {request.package}.controllers.{low} import {low}_controller"]
    entries = {CONTROLLERS: f'"{low}": {low}_controller,', RESOURCES: f"{kind},"}
    new = _add_imports(text, imports)
    for marker, entry in entries.items():
        if not re.search(rf"^\s*{re.escape(entry)}\s*$", new, re.M):
            indent = re.search(rf"^(\s*){re.escape(marker)}", new, re.M)
            pad = indent.group(1) if indent else "        "
            new = new.replace(f"{pad}{marker}", f"{pad}{entry}\n{pad}{marker}", 1)
    if new == text:
        return Written(operator_py, "unchanged")
    operator_py.write_text(new, encoding="utf-8")
    return Written(operator_py, "updated")


def _add_imports(text: str, imports: list[str]) -> str:
    """The first-party import block right above the imports marker, sorted (as ruff wants)."""
    head, marker, tail = text.partition(IMPORTS)
    lines = head.rstrip("\n").split("\n")
    block: list[str] = []
    while lines and lines[-1].startswith(f"from {imports[0].split()[1].split('.')[0]}"):
        block.insert(0, lines.pop())
    block = sorted(set(block) | set(imports), key=lambda s: s.split(" import ")[0])
    body = "\n".join(lines).rstrip("\n")
    return f"{body}\n\n" + "\n".join(block) + f"\n\n{marker}{tail}"
