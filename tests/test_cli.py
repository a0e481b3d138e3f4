"""The asyncop CLI: every user error is one readable line on stderr and exit code 2.

In-process through `main()` (sync) and `amain()` (inside the test's event loop, with an
embedded ApiServer on the side).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import yaml

from asyncop import __version__
from asyncop.apiserver import ApiServer
from asyncop.cli import amain, describe, main

CRDS = Path(__file__).resolve().parents[1] / "crds"


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("asyncop: error: ")
    return lines[0]


@contextlib.asynccontextmanager
async def _asyncop(*args: str, pipe: str = "stdout") -> AsyncIterator[asyncio.subprocess.Process]:
    """`python -m asyncop ARGS` in its own process with stdout or stderr piped; stopped with
    SIGTERM (and expected to exit 0) when the block ends, killed if it fails."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "asyncop", *args,
        stdout=asyncio.subprocess.PIPE if pipe == "stdout" else asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE if pipe == "stderr" else asyncio.subprocess.DEVNULL)
    try:
        yield proc
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == f"asyncop {__version__}"


def test_crds_prints_every_bundled_crd(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crds"]) == 0
    docs = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    assert {d["kind"] for d in docs} == {"CustomResourceDefinition"}
    assert "ats.cnat.programming-kubernetes.info" in {d["metadata"]["name"] for d in docs}
    assert len(docs) == len(list(CRDS.glob("*.yaml")))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--bogus"], "unrecognized arguments: --bogus"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
        (["run", "--workers", "many"], "invalid int value"),
        (["run", "--log-format", "xml"], "invalid choice"),
    ],
)
def test_bad_flags(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert expected in line and "--help" in line


def test_unknown_controller(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--controllers", "at,nope"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "unknown controller 'nope'" in line and "podlogger" in line


def test_bad_option_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--log-level", "loud"]) == 2
    assert "unknown log level" in one_error_line(capsys.readouterr().err)
    assert main(["run", "--metrics-bind-address", "nowhere"]) == 2
    assert "bind address" in one_error_line(capsys.readouterr().err)
    assert main(["run", "--apply", "/no/such/path"]) == 2
    assert "no such file" in one_error_line(capsys.readouterr().err)


def test_missing_kubeconfig(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--kubeconfig", str(tmp_path / "absent")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "absent" in line and "kubeconfig" in line


def test_unreadable_kubeconfig(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "config"
    bad.write_text("::: not yaml [")
    assert main(["run", "--kubeconfig", str(bad)]) == 2
    one_error_line(capsys.readouterr().err)


def test_no_config_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert main(["run"]) == 2
    assert "--embedded" in one_error_line(capsys.readouterr().err)


def write_kubeconfig(path: Path, server: str) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {}}],
    }))
    return path


def test_unreachable_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        # bound but not listening: connections are refused, and no other process (tests run
        # in parallel) can start listening there meanwhile
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        cfg = write_kubeconfig(tmp_path / "config", f"http://127.0.0.1:{port}")
        assert main(["run", "--kubeconfig", str(cfg), "--controllers", "podlogger"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "cannot reach the API server" in line


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(simulators=False) as srv:
        yield srv


async def test_missing_crd_offers_install_crds(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = server.write_kubeconfig(tmp_path / "config")
    assert await amain(["run", "--kubeconfig", str(cfg), "--controllers", "at"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "ats.cnat.programming-kubernetes.info is not installed" in line
    assert "--install-crds" in line


async def test_forbidden_names_rbac(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.faults.fail(verb="list", path="/pods", status=403)
    cfg = server.write_kubeconfig(tmp_path / "config")
    assert await amain(["run", "--kubeconfig", str(cfg), "--controllers", "podlogger"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "RBAC forbids listing pods" in line and "ClusterRole" in line


async def test_unknown_kind_in_apply(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = server.write_kubeconfig(tmp_path / "config")
    manifest = tmp_path / "m.yaml"
    manifest.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
    argv = ["run", "--kubeconfig", str(cfg), "--controllers", "podlogger", "--apply",
            str(manifest)]
    assert await amain(argv) == 2
    assert "unknown kind example.com/v1/Widget" in one_error_line(capsys.readouterr().err)


def test_describe_summarises_phases_and_replicas() -> None:
    objs = [
        {"metadata": {"name": "a"}, "status": {"phase": "DONE"}},
        {"metadata": {"name": "b"}, "status": {"phase": "PENDING"}},
        {"metadata": {"name": "c"}, "status": {"phase": "DONE"}},
    ]
    assert describe(objs) == "3 objects (DONE=2 PENDING=1)"  # type: ignore[arg-type]
    foo = [{"metadata": {"name": "f"}, "spec": {"replicas": 2},
            "status": {"availableReplicas": 1}}]
    assert describe(foo) == "1 object f 1/2 ready"  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    import structlog

    yield None
    structlog.reset_defaults()


async def test_run_with_leader_election_until_sigterm(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio
    import gc
    import os
    import signal

    from asyncop.api import NotFound
    from asyncop.api.kinds import LEASE
    from asyncop.client import Client, ClientConfig
    from asyncop.gcpolicy import GcPolicy
    from asyncop.testing import eventually

    cfg = server.write_kubeconfig(tmp_path / "config")
    argv = ["run", "--kubeconfig", str(cfg), "--controllers", "podlogger", "--leader-elect",
            "--leader-election-namespace", "default", "--log-level", "error",
            "--health-probe-bind-address", "127.0.0.1:0"]
    running = asyncio.create_task(amain(argv))
    async with Client(ClientConfig(host=server.url)) as client:

        async def holder() -> str | None:
            try:
                lease = await client.get(LEASE, "asyncop", namespace="default")
            except NotFound:
                return None
            return str(lease["spec"].get("holderIdentity") or "") or None

        assert await eventually(holder, timeout=10)
        policies = [cb for cb in gc.callbacks if isinstance(getattr(cb, "__self__", None),
                                                            GcPolicy)]
        assert len(policies) == 1  # --gc-freeze is on by default
        os.kill(os.getpid(), signal.SIGTERM)  # the Manager's handler turns it into a clean stop
        assert await asyncio.wait_for(running, 5) == 0
        assert await holder() is None  # released on the way out
    # the handlers were removed again
    assert signal.SIGTERM not in getattr(asyncio.get_running_loop(), "_signal_handlers", {})
    assert policies[0] not in gc.callbacks  # and the GC policy was undone


async def test_apiserver_subcommand(tmp_path: Path) -> None:
    from asyncop.api.kinds import CRD
    from asyncop.client import Client, load_config
    from asyncop.testing import eventually

    kubeconfig = tmp_path / "kc"
    async with _asyncop("apiserver", "--port", "0", "--kubeconfig-out", str(kubeconfig),
                        "--crds", str(CRDS)) as proc:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert b"listening on http://127.0.0.1:" in line
        async with Client(await load_config(kubeconfig=str(kubeconfig))) as client:
            names = await eventually(
                lambda: _crd_names(client, CRD), timeout=10)
            assert "ats.cnat.programming-kubernetes.info" in names


async def _crd_names(client: object, crd: object) -> set[str]:
    body = await client.list(crd)  # type: ignore[attr-defined]
    return {i["metadata"]["name"] for i in body["items"]}


def test_list_flags_accept_several_values() -> None:
    from asyncop.cli import build_parser

    args = build_parser().parse_args(
        ["run", "--namespace", "a", "b", "--namespace", "c", "--apply", "x.yaml", "dir/"])
    assert args.namespace == ["a", "b", "c"] and args.apply == ["x.yaml", "dir/"]
    assert args.leader_elect is False
    assert build_parser().parse_args(["run", "--leader-elect"]).leader_elect is True
    assert build_parser().parse_args(["run", "--no-leader-elect"]).leader_elect is False
    assert args.gc_freeze is True  # on by default
    assert build_parser().parse_args(["run", "--no-gc-freeze"]).gc_freeze is False


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--leader-elect", "--sharding"], "--leader-elect and --sharding exclude each other"),
    (["run", "--sharding", "--shards", "0"], "--shards must be between 1 and 4096"),
    (["run", "--retry-period", "12"],
     "need 0 < --retry-period < --renew-deadline < --lease-duration"),
])
def test_lease_option_mistakes(argv: list[str], expected: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert expected in one_error_line(capsys.readouterr().err)


def test_event_loop_choice(monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio
    import sys

    from asyncop.commands import eventloop

    assert eventloop.loop_factory("asyncio") is None
    uvloop = pytest.importorskip("uvloop")
    assert eventloop.loop_factory("auto") is uvloop.new_event_loop
    assert eventloop.loop_factory("uvloop") is uvloop.new_event_loop

    async def which() -> str:
        return eventloop.current()

    assert eventloop.run(which(), event_loop="uvloop") == "uvloop"
    assert eventloop.run(which(), event_loop="asyncio") == "asyncio"
    assert isinstance(asyncio.get_event_loop_policy(), asyncio.DefaultEventLoopPolicy)

    monkeypatch.setitem(sys.modules, "uvloop", None)  # not installed
    assert eventloop.loop_factory("auto") is None
    assert main(["run", "--event-loop", "uvloop", "--embedded"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["asyncop: error: --event-loop uvloop: uvloop is not installed "
                   "(pip install 'asyncop[fast]')"]
    assert main(["run", "--event-loop", "trio"]) == 2
    assert "invalid choice: 'trio'" in capsys.readouterr().err


async def test_run_logs_the_event_loop_it_runs_on(server: ApiServer, tmp_path: Path) -> None:
    """`asyncop run` in its own process: `auto` picks uvloop when installed."""
    import orjson

    pytest.importorskip("uvloop")
    cfg = server.write_kubeconfig(tmp_path / "config")
    for choice, expected in (("auto", "uvloop"), ("asyncio", "asyncio")):
        async with _asyncop("run", "--kubeconfig", str(cfg), "--controllers", "podlogger",
                            "--log-format", "json", "--event-loop", choice,
                            pipe="stderr") as proc:
            assert proc.stderr is not None
            started = None
            while started is None:
                line = await asyncio.wait_for(proc.stderr.readline(), 30)
                assert line, "asyncop run exited before it started"
                record = orjson.loads(line)
                if record.get("event") == "operator started":
                    started = record
            assert started["event_loop"] == expected
            assert started["controllers"] == ["podlogger"]


async def test_apiserver_subcommand_with_tls_and_a_token(tmp_path: Path) -> None:
    """`asyncop apiserver --tls --token`: HTTPS with a generated CA and a bearer token, both
    written into the kubeconfig, which real clients (asyncop's Client, kubectl) then use."""
    import shutil

    from asyncop.api import Unauthorized
    from asyncop.api.kinds import CONFIGMAP
    from asyncop.client import Client, ClientConfig, load_config

    kubeconfig = tmp_path / "kc"
    async with _asyncop("apiserver", "--port", "0", "--kubeconfig-out", str(kubeconfig),
                        "--tls", "--token", "s3cret", "--no-simulators",
                        "--cert-dir", str(tmp_path / "certs")) as proc:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert b"listening on https://127.0.0.1:" in line
        cfg = await load_config(kubeconfig=str(kubeconfig))
        assert cfg.token == "s3cret" and cfg.ca_data and cfg.host.startswith("https://")
        async with Client(cfg, max_retries=0) as client:
            await client.create(CONFIGMAP, {"metadata": {"name": "over-tls"}})
        anonymous = ClientConfig(host=cfg.host, ca_data=cfg.ca_data)
        async with Client(anonymous, max_retries=0) as client:
            with pytest.raises(Unauthorized):
                await client.get(CONFIGMAP, "over-tls")
        if shutil.which("kubectl"):
            kubectl = await asyncio.create_subprocess_exec(
                "kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir",
                str(tmp_path / "cache"), "get", "configmap", "over-tls", "-o", "name",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(kubectl.communicate(), 60)
            assert kubectl.returncode == 0, err.decode()
            assert out.decode().strip() == "configmap/over-tls"


def test_apiserver_option_mistakes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apiserver", "--kubeconfig-out", "/tmp/x", "--cert-dir", "/tmp/c"]) == 2
    assert capsys.readouterr().err.strip() == "asyncop: error: --cert-dir needs --tls"
    assert main(["apiserver", "--kubeconfig-out", "/tmp/x", "--token", "a b"]) == 2
    assert "--token must be printable text without spaces" in capsys.readouterr().err


async def test_apiserver_tls_without_a_token_writes_a_generated_one(tmp_path: Path) -> None:
    """Regression: `--tls` alone wrote a user with no credential, so kubectl (client-go)
    prompted `Please enter Username:` and every non-interactive call failed. Now a token is
    generated and required (as kind writes a credential), and the kubeconfig is 0600."""
    import shutil
    import stat

    kubeconfig = tmp_path / "kc"
    async with _asyncop("apiserver", "--port", "0", "--kubeconfig-out", str(kubeconfig),
                        "--tls", "--no-simulators") as proc:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert b"listening on https://127.0.0.1:" in line
        assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600
        user = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]
        assert len(user["token"]) >= 32
        if shutil.which("kubectl"):
            kubectl = await asyncio.create_subprocess_exec(
                "kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir",
                str(tmp_path / "cache"), "get", "namespaces", "-o", "name",
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(kubectl.communicate(), 60)
            assert kubectl.returncode == 0, err.decode()
            assert "namespace/default" in out.decode()


@pytest.mark.parametrize(("argv", "missing"), [
    (["--host", "0.0.0.0"], "without --tls and --token"),
    (["--host", ""], "all interfaces without --tls and --token"),
    (["--host", "10.1.2.3", "--tls"], "10.1.2.3 without --token"),
    (["--host", "192.168.0.9", "--token", "t"], "192.168.0.9 without --tls"),
    (["--host", "example.com", "--token", "t"], "example.com without --tls"),
])
def test_apiserver_refuses_non_loopback_binds_without_tls_and_a_token(
        argv: list[str], missing: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASYNCOP_APISERVER_TOKEN", raising=False)
    assert main(["apiserver", "--kubeconfig-out", "/tmp/x", *argv]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "refusing to serve on non-loopback address" in line and missing in line


def test_loopback_binds_are_always_allowed_and_the_embedded_server_checks_too() -> None:
    from asyncop.apiserver.bindpolicy import InsecureBind, check_bind, is_loopback

    for host in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost"):
        assert is_loopback(host)
        check_bind(host, tls=False, authenticated=False)
    for host in ("0.0.0.0", "::", "", "10.0.0.1", "host.example"):
        assert not is_loopback(host)
        check_bind(host, tls=True, authenticated=True)
        with pytest.raises(InsecureBind):
            ApiServer(host=host)
        with pytest.raises(InsecureBind):
            ApiServer(host=host, tls=True)
    assert ApiServer(host="0.0.0.0", tls=True, token="t").host == "0.0.0.0"


@pytest.mark.parametrize(("content", "expected"), [
    (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"\xff\xfe\"}\n",
     "cannot read {f}: not UTF-8 text (byte 49)"),
    (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- a\n- list\n",
     "{f}: document 2 is a list, not an object with apiVersion and kind"),
    (b"just a string\n", "{f}: document 1 is a str, not an object with apiVersion and kind"),
    (b"a: [unclosed\n", "cannot read {f}: while parsing a flow sequence"),
    (b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n", "cannot read {f}: "),
])
async def test_run_with_a_bad_manifest_is_one_line(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes,
    expected: str,
) -> None:
    """Regression: a manifest that is not UTF-8 ended `asyncop run` with a traceback."""
    cfg = server.write_kubeconfig(tmp_path / "config")
    manifest = tmp_path / "m.yaml"
    manifest.write_bytes(content)
    argv = ["run", "--kubeconfig", str(cfg), "--controllers", "podlogger", "--apply",
            str(manifest)]
    assert await amain(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("asyncop: error: " + expected.format(f=manifest)), line


async def test_run_with_an_unreadable_manifest_is_one_line(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = server.write_kubeconfig(tmp_path / "config")
    target = tmp_path / "gone.yaml"
    (tmp_path / "link.yaml").symlink_to(target)
    argv = ["run", "--kubeconfig", str(cfg), "--controllers", "podlogger", "--apply"]
    assert await amain([*argv, str(tmp_path / "link.yaml")]) == 2
    assert "no such file or directory" in one_error_line(capsys.readouterr().err)
    (tmp_path / "dir.yaml").mkdir()
    (tmp_path / "dir.yaml" / "inner.yaml").write_bytes(b"\x00\xff")
    assert await amain([*argv, str(tmp_path / "dir.yaml")]) == 2
    assert "cannot read" in one_error_line(capsys.readouterr().err)


async def test_run_with_a_target_that_raises_on_import(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """The user's own traceback (only their frames) above ONE `asyncop: error:` line."""
    cfg = server.write_kubeconfig(tmp_path / "config")
    target = tmp_path / "boomop.py"
    target.write_text('raise RuntimeError("boom at import")\n')
    assert await amain(["run", str(target), "--kubeconfig", str(cfg)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert [line for line in lines if line.startswith("asyncop: error: ")] == [lines[-1]]
    assert lines[-1] == (f"asyncop: error: importing {target} failed: RuntimeError: boom at "
                         "import (traceback above)")
    assert "boomop.py\", line 1" in err and "asyncop/" not in err


@pytest.mark.parametrize("server", ["http://::1:6443", "http://127.0.0.1:abc",
                                    "http://127.0.0.1:99999", "ftp://127.0.0.1:6443"])
def test_a_kubeconfig_server_that_is_no_url_is_one_line(
        server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: these printed a 38-line ValueError traceback and exited 1."""
    cfg = write_kubeconfig(tmp_path / "config", server)
    assert main(["run", "--kubeconfig", str(cfg), "--controllers", "podlogger"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"has server {server!r}, which is not a valid URL" in line
    if server.startswith("http://::1"):
        assert "http://[::1]:PORT" in line


def test_apiserver_feature_gates_flag_reads_kube_apiserver_syntax() -> None:
    # kube-apiserver's --feature-gates=A=true,B=false; the WatchList gate is off in 1.33
    from asyncop.cli import _feature_gates
    from asyncop.commands.errors import UserError

    assert _feature_gates("WatchList=true, ShardedListAndWatch=False") == {
        "WatchList": True, "ShardedListAndWatch": False}
    assert _feature_gates("") == {}
    with pytest.raises(UserError, match="not GATE=true or GATE=false"):
        _feature_gates("WatchList")
