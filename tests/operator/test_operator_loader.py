"""load_operator: files, modules and `module:attr` targets, and one clear line per failure."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from asyncop.client import ClientConfig
from asyncop.operator import Operator, OperatorError, TargetError, load_operator
from asyncop.runtime.manager import Manager

CONTROLLER = '''
from asyncop.api import Request
from asyncop.api.kinds import CONFIGMAP, POD
from asyncop.runtime.controller import Controller
from asyncop.runtime.handlers import for_
from asyncop.runtime.reconcile import Result, reconciler


async def _noop(req: Request) -> Result:
    return Result()


def configmaps(mgr):
    return Controller("configmaps", reconciler(_noop), watches=[for_(CONFIGMAP)])


def pods(mgr):
    return Controller("pods", reconciler(_noop), watches=[for_(POD)])
'''


@pytest.fixture(autouse=True)
def isolated_imports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each test imports its own files: restore sys.path, sys.modules and the cwd after."""
    path, modules = list(sys.path), set(sys.modules)
    monkeypatch.chdir(tmp_path)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def mgr() -> Manager:
    return Manager(config=ClientConfig(host="http://127.0.0.1:9"))


def test_a_file_with_a_controllers_mapping(tmp_path: Path) -> None:
    write(tmp_path / "ops" / "ctl.py", CONTROLLER)
    target = write(tmp_path / "ops" / "my_operator.py", """
        import ctl
        CONTROLLERS = {"configmaps": ctl.configmaps, "pods": ctl.pods}
        RBAC_RULES = ()
    """)
    op = load_operator(str(target))
    assert op.name == "my_operator" and op.names == ["configmaps", "pods"]
    m = mgr()
    built = op.install(m, names=["pods"], workers=7)
    assert [c.name for c in built] == ["pods"] == [c.name for c in m.controllers]
    assert built[0].workers == 7


def test_a_file_named_like_a_stdlib_module_does_not_shadow_it(tmp_path: Path) -> None:
    import operator as stdlib_operator

    write(tmp_path / "ctl.py", CONTROLLER)
    target = write(tmp_path / "operator.py", """
        from asyncop.operator import Operator
        import ctl
        memcached = Operator(name="memcached-operator", controllers={"pods": ctl.pods})
    """)
    op = load_operator(str(target))
    assert op.name == "memcached-operator" and op.lease_name == "memcached-operator"
    assert sys.modules["operator"] is stdlib_operator


def test_a_file_inside_a_package_keeps_its_relative_imports(tmp_path: Path) -> None:
    write(tmp_path / "proj" / "memcached_operator" / "__init__.py", "")
    write(tmp_path / "proj" / "memcached_operator" / "controllers.py", CONTROLLER)
    target = write(tmp_path / "proj" / "memcached_operator" / "operator.py", """
        from asyncop.operator import Operator
        from .controllers import configmaps
        operator = Operator(name="memcached_operator", controllers={"configmaps": configmaps})
    """)
    op = load_operator(str(target))
    assert op.names == ["configmaps"] and op.lease_name == "memcached-operator"
    assert "memcached_operator.operator" in sys.modules


def test_module_and_module_attr_targets(tmp_path: Path) -> None:
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "ctl.py", CONTROLLER)
    write(tmp_path / "pkg" / "main.py", """
        from asyncop.operator import Operator
        from pkg import ctl

        def setup(mgr):
            mgr.add(ctl.configmaps(mgr))
            return [ctl.pods(mgr)]

        TABLE = {"pods": ctl.pods}
        other = Operator(name="other", setup=setup)
        NOT_AN_OPERATOR = 42
    """)
    assert load_operator("pkg.main").name == "other"  # the one Operator wins over setup()
    op = load_operator("pkg.main:setup")
    m = mgr()
    assert [c.name for c in op.install(m)] == ["configmaps", "pods"]
    assert [c.name for c in m.controllers] == ["configmaps", "pods"]
    assert load_operator("pkg.main:TABLE").names == ["pods"]
    with pytest.raises(TargetError, match=r"pkg.main:NOT_AN_OPERATOR is a int; point at"):
        load_operator("pkg.main:NOT_AN_OPERATOR")
    with pytest.raises(TargetError, match=r"pkg.main has no attribute 'nope'"):
        load_operator("pkg.main:nope")
    with pytest.raises(OperatorError, match="setup function"):
        op.select(["pods"])
    with pytest.raises(TargetError, match=r"^pkg has no controllers: define"):
        load_operator(str(tmp_path / "pkg"))  # a package directory is its __init__.py


def test_setup_returning_nothing_useful(tmp_path: Path) -> None:
    write(tmp_path / "empty.py", "def setup(mgr):\n    return None\n")
    write(tmp_path / "bad.py", "def setup(mgr):\n    return 'pods'\n")
    with pytest.raises(OperatorError, match=r"setup\(mgr\) added no controllers"):
        load_operator("empty.py").install(mgr())
    with pytest.raises(OperatorError, match=r"returned str; return a Controller"):
        load_operator("bad.py").install(mgr())


@pytest.mark.parametrize(
    ("files", "target", "message"),
    [
        ({}, "absent.py", "absent.py: no such file"),
        ({"notes.txt": "x"}, "notes.txt", "notes.txt: not a Python file"),
        ({}, "no_such_pkg.operator", "cannot import no_such_pkg.operator: no module named "
         "'no_such_pkg'"),
        ({"lonely.py": "X = 1\n"}, "lonely.py", "lonely has no controllers: define operator = "
         "Operator(...), a setup(mgr) function or CONTROLLERS = {name: factory}"),
        ({"two.py": "from asyncop.operator import Operator\n"
                    "a = Operator(name='a', setup=print)\nb = Operator(name='b', setup=print)\n"},
         "two.py", "two defines several Operators (a, b); pick one: two:a"),
    ],
)
def test_one_line_errors(tmp_path: Path, files: dict[str, str], target: str,
                         message: str) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    with pytest.raises(TargetError) as info:
        load_operator(target)
    assert str(info.value) == message or str(info.value).startswith(message)
    assert "\n" not in str(info.value) and info.value.user_traceback is None


def test_an_error_in_the_users_module_carries_their_traceback(tmp_path: Path) -> None:
    write(tmp_path / "helper.py", "def boom():\n    return undefined_name\n")
    target = write(tmp_path / "broken.py", "import helper\nhelper.boom()\n")
    with pytest.raises(TargetError) as info:
        load_operator(str(target))
    assert str(info.value) == (f"importing {target} failed: NameError: name 'undefined_name' "
                               "is not defined (traceback above)")
    tb = info.value.user_traceback or ""
    assert 'broken.py", line 2' in tb and 'helper.py", line 2, in boom' in tb
    assert "importlib" not in tb and "loader.py" not in tb


def test_a_missing_dependency_inside_user_code_is_the_users_error(tmp_path: Path) -> None:
    write(tmp_path / "needs.py", "import not_installed_anywhere\n")
    with pytest.raises(TargetError) as info:
        load_operator("needs")
    assert str(info.value).startswith("importing needs failed: ModuleNotFoundError: No module "
                                      "named 'not_installed_anywhere'")
    assert 'needs.py", line 1' in (info.value.user_traceback or "")


def test_a_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    target = write(tmp_path / "typo.py", "def setup(mgr)\n    pass\n")
    with pytest.raises(TargetError, match=r"SyntaxError at .*typo.py:1: expected ':'"):
        load_operator(str(target))


def test_an_operator_builds_controllers_one_way_and_may_have_none_yet() -> None:
    empty = Operator(name="x")
    assert empty.empty and empty.names == [] and empty.install(mgr()) == []
    with pytest.raises(OperatorError, match="either controllers"):
        Operator(name="x", controllers={"a": print}, setup=print)  # type: ignore[dict-item]
