"""The public names: `asyncop` (the one door) exports what a newcomer needs,
`asyncop.runtime` re-exports nothing, and `import asyncop` stays cheap (runtime and client
load on first use)."""

from __future__ import annotations

import subprocess
import sys

import asyncop
import asyncop.runtime

NEWCOMER = [
    "Request", "Result", "Reconciler", "TerminalError", "reconciler", "for_", "owns",
    "watches", "generation_changed", "resource_version_changed", "label_selector",
    "annotation_changed", "Controller", "Manager", "LeaderElectionConfig", "Client",
    "load_config", "Cache", "Informer", "Store", "WorkQueue", "EventRecorder", "Metrics",
    "Clock", "RealClock", "Kind", "RawObject", "ApiError", "BadRequest", "Unauthorized",
    "Forbidden", "NotFound", "MethodNotAllowed", "Conflict", "AlreadyExists", "Gone",
    "UnsupportedMediaType", "Invalid", "TooManyRequests", "ServerError",
]


def test_the_root_exports_the_newcomer_names_and_runtime_nothing() -> None:
    from asyncop.api import errors
    from asyncop.runtime import manager

    missing = [n for n in NEWCOMER if n not in asyncop.__all__]
    assert missing == []
    for name in asyncop.__all__:
        assert getattr(asyncop, name) is not None, name
    assert not hasattr(asyncop.runtime, "__all__")
    assert not hasattr(asyncop.runtime, "Manager")
    assert asyncop.Manager is manager.Manager
    assert asyncop.NotFound is errors.NotFound
    assert "Manager" in dir(asyncop)
    assert issubclass(asyncop.AlreadyExists, asyncop.Conflict)


def test_import_asyncop_does_not_load_the_runtime() -> None:
    code = (
        "import sys, asyncop\n"
        "heavy = [m for m in ('asyncop.runtime', 'asyncop.client', 'aiohttp',"
        " 'kubernetes_asyncio') if m in sys.modules]\n"
        "assert heavy == [], heavy\n"
        "from asyncop import Manager, for_\n"
        "assert 'asyncop.runtime' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_unknown_names_still_raise_attribute_error() -> None:
    try:
        asyncop.NoSuchName  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchName" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
