"""load_operator: `path/to/operator.py`, `pkg.module` or `pkg.module:attr` → an Operator.

What a target may be (like `kopf run` files and `uvicorn pkg.module:app`):

- a file: it is imported as a module; a file inside packages (directories with
  `__init__.py`) is imported by its dotted name from the top package's parent, so its
  relative imports work; a top-level file keeps its stem as module name unless that name is
  taken (a file called `operator.py` must not shadow the standard library's `operator`);
- a module name: imported with the current directory on `sys.path` (like `python -m`);
- `:attr` names an `Operator`, a `{name: factory}` mapping, or a `setup(mgr)` function.
  Without it, the module must define exactly one `Operator`, or a `setup` function, or a
  `CONTROLLERS` mapping (with optional `RESOURCES` and `RBAC_RULES` beside it).

Invariant: every failure is a `TargetError` with one line that names the target and the fix;
an exception raised by the user's own module also carries the user's traceback (frames of
the import machinery and of this loader left out) for the CLI to print above that line.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from asyncop.crd import CRDError
from asyncop.operator.spec import Operator, OperatorError

_HINT = "define operator = Operator(...), a setup(mgr) function or CONTROLLERS = {name: factory}"


class TargetError(Exception):
    """The target cannot be loaded; `str()` is one line, `traceback` the user's, if any."""

    def __init__(self, message: str, *, user_traceback: str | None = None) -> None:
        super().__init__(message)
        self.user_traceback = user_traceback


def load_operator(target: str) -> Operator:
    """The Operator that `target` names (see the module docstring for the forms)."""
    spec, _, attr = target.partition(":")
    if not spec:
        raise TargetError(f"{target!r} names no module or file")
    module = load_module(spec)
    try:
        return _resolve(module, attr, target)
    except OperatorError as exc:
        raise TargetError(str(exc)) from None


def load_module(spec: str) -> ModuleType:
    """Import what a target names before its `:attr` (`path/to/file.py` or `pkg.module`),
    by the rules above, failing with the same one-line TargetErrors."""
    if not spec:
        raise TargetError("an empty target names no module or file")
    if spec.endswith(".py") or os.sep in spec or "/" in spec or Path(spec).is_file():
        return _import_file(Path(spec))
    return _import_module(spec)


def _import_file(path: Path) -> ModuleType:
    if not path.exists():
        raise TargetError(f"{path}: no such file")
    if path.is_dir() and (path / "__init__.py").is_file():
        path = path / "__init__.py"
    if path.is_dir() or path.suffix != ".py":
        raise TargetError(f"{path}: not a Python file (give path/to/operator.py or pkg.module)")
    given, path = str(path), path.resolve()
    parts = [] if path.stem == "__init__" else [path.stem]
    root = path.parent
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    if len(parts) > 1 or path.stem == "__init__":
        _on_path(root)
        return _import_module(".".join(parts), path_hint=given)
    _on_path(path.parent)
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() != path:
        name = f"asyncop_target_{name}"  # never shadow a loaded module (e.g. stdlib `operator`)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        raise _user_error(given, exc) from None
    return module


def _import_module(name: str, *, path_hint: str | None = None) -> ModuleType:
    _on_path(Path.cwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (name == missing or name.startswith(missing + ".")):
            raise TargetError(
                f"cannot import {name}: no module named {missing!r} (run from the project "
                "directory, pip install the project, or give path/to/operator.py)"
            ) from None
        raise _user_error(path_hint or name, exc) from None
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        raise _user_error(path_hint or name, exc) from None


def _on_path(directory: Path) -> None:
    text = str(directory)
    if text not in sys.path:
        sys.path.insert(0, text)


def _user_error(what: str, exc: BaseException) -> TargetError:
    """The one line for an exception raised while importing the user's code (a resource
    class declared wrongly is its own one line: it names the class and the fix)."""
    if isinstance(exc, CRDError):
        return TargetError(str(exc))
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<frozen") and f.filename != __file__]
    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    if isinstance(exc, SyntaxError) and exc.filename:
        detail = f"SyntaxError at {exc.filename}:{exc.lineno}: {exc.msg}"
    return TargetError(f"importing {what} failed: {detail} (traceback above)",
                       user_traceback=text)


def _resolve(module: ModuleType, attr: str, target: str) -> Operator:
    name = module.__name__
    if attr:
        if not hasattr(module, attr):
            raise TargetError(f"{name} has no attribute {attr!r} (in {target})")
        return _from_value(getattr(module, attr), f"{name}:{attr}")
    found = {id(v): v for v in vars(module).values() if isinstance(v, Operator)}
    if len(found) == 1:
        return next(iter(found.values()))
    if len(found) > 1:
        names = sorted(k for k, v in vars(module).items() if isinstance(v, Operator))
        raise TargetError(
            f"{name} defines several Operators ({', '.join(names)}); pick one: {name}:{names[0]}"
        )
    setup = getattr(module, "setup", None)
    if callable(setup):
        return Operator(name=_short(name), setup=setup)
    controllers = getattr(module, "CONTROLLERS", None)
    if isinstance(controllers, Mapping) and controllers:
        return Operator(name=_short(name), controllers=controllers,
                        resources=tuple(getattr(module, "RESOURCES", ())),
                        rbac=tuple(getattr(module, "RBAC_RULES", ())))
    raise TargetError(f"{name} has no controllers: {_HINT}")


def _from_value(value: object, where: str) -> Operator:
    if isinstance(value, Operator):
        return value
    if isinstance(value, Mapping) and value:
        return Operator(name=_short(where), controllers=value)
    if callable(value):
        return Operator(name=_short(where), setup=value)
    raise TargetError(
        f"{where} is a {type(value).__name__}; point at an Operator, a setup(mgr) function or "
        "a {name: factory} mapping"
    )


def _short(name: str) -> str:
    """A readable operator name from a module path: its top package."""
    return name.split(":")[0].split(".")[0].removeprefix("asyncop_target_")
