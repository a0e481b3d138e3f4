"""logs.configure_logging: JSON lines carry the bound reconcile context; console on a TTY."""

from __future__ import annotations

import io

import orjson
import pytest
import structlog

from asyncop.runtime.logs import configure_logging, parse_level


@pytest.fixture(autouse=True)
def _reset_structlog() -> None:
    yield
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()


def test_json_lines_carry_reconcile_context() -> None:
    out = io.StringIO()
    configure_logging(format="json", level="info", stream=out)
    log = structlog.get_logger("test")
    with structlog.contextvars.bound_contextvars(
        controller="foo", namespace="ns1", name="example", reconcile_id="abc123"
    ):
        log.info("reconciled", requeue_after=5)
    log.info("outside")
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["event"] == "reconciled"
    assert lines[0]["controller"] == "foo"
    assert lines[0]["namespace"] == "ns1"
    assert lines[0]["name"] == "example"
    assert lines[0]["reconcile_id"] == "abc123"
    assert lines[0]["requeue_after"] == 5
    assert lines[0]["level"] == "info"
    assert "timestamp" in lines[0]
    assert "controller" not in lines[1]


def test_level_filters_lower_levels() -> None:
    out = io.StringIO()
    configure_logging(format="json", level="WARNING", stream=out)
    log = structlog.get_logger("test")
    log.info("hidden")
    log.warning("shown")
    events = [orjson.loads(line)["event"] for line in out.getvalue().splitlines()]
    assert events == ["shown"]


def test_exceptions_are_structured_in_json() -> None:
    out = io.StringIO()
    configure_logging(format="json", stream=out)
    try:
        raise ValueError("boom")
    except ValueError:
        structlog.get_logger("test").exception("failed")
    line = orjson.loads(out.getvalue())
    assert line["event"] == "failed"
    assert "boom" in orjson.dumps(line["exception"]).decode()


def test_default_format_is_json_when_not_a_tty() -> None:
    out = io.StringIO()  # isatty() is False
    configure_logging(stream=out)
    structlog.get_logger("test").info("hello", key="v")
    assert orjson.loads(out.getvalue())["key"] == "v"


def test_console_format_is_human_readable() -> None:
    out = io.StringIO()
    configure_logging(format="console", stream=out)
    structlog.get_logger("test").info("hello", key="v")
    text = out.getvalue()
    assert "hello" in text and "key" in text and not text.startswith("{")


def test_bad_level_and_format_are_rejected_with_a_readable_message() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        parse_level("loud")
    with pytest.raises(ValueError, match="unknown log format"):
        configure_logging(format="xml", stream=io.StringIO())  # type: ignore[arg-type]


async def test_reconcile_log_lines_carry_the_reconcile_context() -> None:
    """End to end: a line logged inside a real reconcile has the four context keys."""
    from asyncop import Controller, Manager, Result, for_, reconciler
    from asyncop.api import Request
    from asyncop.api.kinds import CONFIGMAP, NAMESPACE
    from asyncop.apiserver import ApiServer
    from asyncop.client import Client, ClientConfig
    from asyncop.testing import FakeClock, eventually

    out = io.StringIO()
    configure_logging(format="json", level="info", stream=out)
    log = structlog.get_logger("user-code")

    async def reconcile(req: Request) -> Result:
        log.info("user reconcile", extra_key=1)
        return Result()

    async with ApiServer(simulators=False) as srv, Client(ClientConfig(host=srv.url)) as c:
        mgr = Manager(client=c, clock=FakeClock())
        mgr.add(Controller("logctl", reconciler(reconcile), watches=[for_(CONFIGMAP)]))
        async with mgr:
            await c.create(NAMESPACE, {"metadata": {"name": "ns-a"}})
            await c.create(CONFIGMAP, {"metadata": {"name": "cm1", "namespace": "ns-a"}})

            def mine() -> list[dict[str, object]]:
                lines = [orjson.loads(x) for x in out.getvalue().splitlines() if x]
                return [x for x in lines if x.get("event") == "user reconcile"]

            [line] = await eventually(mine)
    assert line["controller"] == "logctl"
    assert line["namespace"] == "ns-a" and line["name"] == "cm1"
    assert line["reconcile_id"] and line["extra_key"] == 1


def _fail(secret_local: str) -> None:
    raise ValueError("boom")


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_tracebacks_are_rendered_without_local_variables(fmt: str) -> None:
    out = io.StringIO()
    configure_logging(format=fmt, level="info", stream=out)
    log = structlog.get_logger("test")
    secret = "-".join(["do", "not", "render", "me"])  # not in any source line
    try:
        _fail(secret)
    except ValueError as err:
        log.error("reconcile failed", exc_info=err)
    text = out.getvalue()
    assert "boom" in text and "_fail" in text  # the traceback is there
    assert "do-not-render-me" not in text  # but not the frame's locals
    if fmt == "json":
        (line,) = text.splitlines()
        assert orjson.loads(line)["exception"][0]["exc_type"] == "ValueError"
