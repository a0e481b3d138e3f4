"""ControlPlane: a real Kubernetes control plane for tests, started the way envtest starts one.

controller-runtime's envtest runs etcd and kube-apiserver (and, when asked, the
controller-manager and the scheduler) from the directory `KUBEBUILDER_ASSETS` names — the
layout `setup-envtest use -p path` prints. `ControlPlane` does the same from Python:

```python
async with ControlPlane() as plane:          # KUBEBUILDER_ASSETS, or assets=...
    plane.write_kubeconfig(tmp_path / "kubeconfig")
    async with Client(plane.client_config()) as client: ...
```

What it starts: etcd on two free loopback ports (`--unsafe-no-fsync`, data in its run
directory); kube-apiserver on a free loopback port with envtest's flags (self-signed serving
certificates in the run directory, `--service-cluster-ip-range 10.0.0.0/24`,
`--allow-privileged`, the ServiceAccount admission plugin off, RBAC authorization,
service-account tokens signed with a key made for this run) and a static admin token in
`system:masters`; with `controller_manager=True` kube-controller-manager (every controller,
no leader election) and with `scheduler=True` kube-scheduler, both with the admin
credentials. Nothing runs containers: see `asyncop.testing.kubelet` for a stand-in.

Invariants:
- only processes this object started are ever signalled, and `stop()` stops every one of
  them (TERM, then KILL after `stop_timeout`) and removes the run directory (`keep=True`
  keeps it, with the logs);
- a start that fails stops what it had started and raises `ControlPlaneError` with the
  tail of the failing process's log;
- the children die with the process that started them (Linux `PR_SET_PDEATHSIG`), and an
  interpreter that exits with planes still running stops them (`atexit`), so neither a
  crash nor Ctrl-C leaves one behind;
- start-up and shut-down wait on the real processes in real time (never on a Clock: the
  processes do not run on one).
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import aiohttp
import yaml

from asyncop.client import ClientConfig

ASSETS_ENV = "KUBEBUILDER_ASSETS"
"""The variable envtest and setup-envtest use for the directory of the binaries."""

REQUIRED = ("etcd", "kube-apiserver")
ADMIN = "admin"
"""The static-token user every plane has (group system:masters)."""


class ControlPlaneError(RuntimeError):
    """The control plane could not start (a binary missing, a process died or never got
    ready); the message says which and shows the end of its log."""


def assets_dir(value: str | os.PathLike[str] | None = None) -> Path | None:
    """The assets directory `value` (else $KUBEBUILDER_ASSETS) names, when it holds etcd and
    kube-apiserver; None when unset or incomplete."""
    raw = os.fspath(value) if value is not None else os.environ.get(ASSETS_ENV, "")
    if not raw:
        return None
    path = Path(raw).expanduser()
    if all(os.access(path / name, os.X_OK) for name in REQUIRED):
        return path
    return None


class ControlPlane:
    """etcd + kube-apiserver (+ kube-controller-manager, kube-scheduler) from envtest assets."""

    def __init__(self, *, assets: str | os.PathLike[str] | None = None,
                 controller_manager: bool = False, scheduler: bool = False,
                 apiserver_args: Sequence[str] = (), start_timeout: float = 60.0,
                 stop_timeout: float = 10.0, keep: bool = False) -> None:
        found = assets_dir(assets)
        if found is None:
            where = os.fspath(assets) if assets is not None else (
                f"${ASSETS_ENV}={os.environ.get(ASSETS_ENV, '')!r}")
            raise ControlPlaneError(
                f"no envtest assets at {where}: the directory must hold etcd and "
                "kube-apiserver (setup-envtest use -p path prints one)")
        self.assets = found
        self.controller_manager = controller_manager
        self.scheduler = scheduler
        self.apiserver_args = tuple(apiserver_args)
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.keep = keep
        self.token = secrets.token_hex(24)
        """The admin's bearer token (system:masters)."""
        self.run_dir: Path | None = None
        self.port = 0
        self.etcd_url = ""
        self._procs: list[tuple[str, subprocess.Popen[bytes], IO[bytes]]] = []

    # --- what clients need ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        """The serving certificate kube-apiserver made for itself (self-signed: its own CA)."""
        return self._dir("certs/apiserver.crt").read_bytes()

    def client_config(self, *, token: str | None = None,
                      namespace: str = "default") -> ClientConfig:
        """A ClientConfig for this plane as the admin (or as the bearer of `token`)."""
        return ClientConfig(host=self.url, token=token or self.token,
                            ca_data=self.ca_pem.decode(), namespace=namespace,
                            source=f"envtest {self.url}")

    def kubeconfig(self, *, namespace: str = "default",
                   token: str | None = None) -> dict[str, Any]:
        return {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "envtest", "cluster": {
                "server": self.url,
                "certificate-authority-data": base64.b64encode(self.ca_pem).decode()}}],
            "users": [{"name": "envtest", "user": {"token": token or self.token}}],
            "contexts": [{"name": "envtest", "context": {
                "cluster": "envtest", "user": "envtest", "namespace": namespace}}],
            "current-context": "envtest", "preferences": {},
        }

    def write_kubeconfig(self, path: str | os.PathLike[str], *, namespace: str = "default",
                         token: str | None = None) -> Path:
        """Write the kubeconfig readable by its owner only (0600: it holds a token)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump(self.kubeconfig(namespace=namespace, token=token),
                              sort_keys=False)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return target

    # --- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        if self.run_dir is not None:
            return
        self.run_dir = Path(tempfile.mkdtemp(prefix="asyncop-envtest-"))
        _LIVE.add(self)
        try:
            await self._start_etcd()
            await self._start_apiserver()
            admin = self.write_kubeconfig(self._dir("admin.kubeconfig"))
            if self.controller_manager:
                self._start_controller_manager(admin)
            if self.scheduler:
                self._start_scheduler(admin)
            if self.controller_manager or self.scheduler:
                await self._wait_components()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop every process this plane started (last started first) and remove its run
        directory; safe to call twice and after a failed start."""
        procs, self._procs = self._procs, []
        for _, proc, _ in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.to_thread(proc.wait, self.stop_timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await asyncio.to_thread(proc.wait)
        for _, _, log in procs:
            log.close()
        _LIVE.discard(self)
        run_dir, self.run_dir = self.run_dir, None
        if run_dir is not None and not self.keep:
            shutil.rmtree(run_dir, ignore_errors=True)

    def kill_now(self) -> None:
        """Synchronous last resort (atexit): KILL every process still running."""
        for _, proc, _ in self._procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait()
        self._procs = []
        if self.run_dir is not None and not self.keep:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    async def __aenter__(self) -> ControlPlane:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.stop()

    # --- the processes -------------------------------------------------------------------------

    def _dir(self, name: str) -> Path:
        if self.run_dir is None:
            raise ControlPlaneError("the control plane is not running")
        return self.run_dir / name

    def _spawn(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self._dir(f"{name}.log"), "wb")  # closed in stop()
        try:
            proc = subprocess.Popen(
                [str(self.assets / name), *args], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, cwd=self.run_dir, preexec_fn=_die_with_parent)
        except BaseException:
            log.close()
            raise
        self._procs.append((name, proc, log))
        return proc

    async def _start_etcd(self) -> None:
        client, peer = _free_port(), _free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        proc = self._spawn(
            "etcd", "--name", "default", "--data-dir", str(self._dir("etcd-data")),
            "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
            "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"default=http://127.0.0.1:{peer}",
            "--unsafe-no-fsync=true", "--log-level", "warn")
        await self._wait("etcd", proc, f"{self.etcd_url}/health", ssl_context=False,
                         ok=lambda code, body: code == 200 and b'"health":"true"' in body)

    async def _start_apiserver(self) -> None:
        key, pub = await _service_account_keys(self._dir("sa"))
        tokens = self._dir("tokens.csv")
        tokens.write_text(f'{self.token},{ADMIN},{ADMIN}-uid,"system:masters"\n')
        tokens.chmod(0o600)
        self.port = _free_port()
        proc = self._spawn(
            "kube-apiserver", "--etcd-servers", self.etcd_url,
            "--cert-dir", str(self._dir("certs")), "--secure-port", str(self.port),
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--service-cluster-ip-range", "10.0.0.0/24", "--allow-privileged=true",
            "--disable-admission-plugins", "ServiceAccount", "--authorization-mode", "RBAC",
            "--service-account-issuer", f"https://127.0.0.1:{self.port}/",
            "--service-account-key-file", str(pub),
            "--service-account-signing-key-file", str(key),
            "--token-auth-file", str(tokens), *self.apiserver_args)
        await self._wait("kube-apiserver", proc, f"{self.url}/readyz",
                         ssl_context=False, ok=lambda code, body: code == 200)

    def _start_controller_manager(self, kubeconfig: Path) -> None:
        key = self._dir("sa/sa.key")
        self._spawn(
            "kube-controller-manager", "--kubeconfig", str(kubeconfig), "--controllers", "*",
            "--service-account-private-key-file", str(key),
            "--root-ca-file", str(self._dir("certs/apiserver.crt")),
            "--leader-elect=false", "--use-service-account-credentials=false",
            "--bind-address", "127.0.0.1", "--secure-port", str(_free_port()),
            "--cert-dir", str(self._dir("kcm-certs")))

    def _start_scheduler(self, kubeconfig: Path) -> None:
        self._spawn(
            "kube-scheduler", "--kubeconfig", str(kubeconfig), "--leader-elect=false",
            "--bind-address", "127.0.0.1", "--secure-port", str(_free_port()),
            "--cert-dir", str(self._dir("sched-certs")))

    async def _wait_components(self) -> None:
        """Ready when the controller-manager made the default ServiceAccount (its service
        account controller runs) and the scheduler holds no error: its process is alive."""
        path = f"{self.url}/api/v1/namespaces/default/serviceaccounts/default"
        name, proc = "kube-controller-manager", None
        for n, p, _ in self._procs:
            if n == name:
                proc = p
        if proc is not None:
            await self._wait(name, proc, path, ssl_context=False, auth=True,
                             ok=lambda code, body: code == 200)
        for n, p, _ in self._procs:
            if p.poll() is not None:
                raise ControlPlaneError(f"{n} exited with {p.returncode}\n{self._tail(n)}")

    async def _wait(self, name: str, proc: subprocess.Popen[bytes], url: str, *,
                    ssl_context: ssl.SSLContext | bool, auth: bool = False,
                    ok: Any) -> None:
        headers = {"Authorization": f"Bearer {self.token}"} if auth else {}
        deadline = time.monotonic() + self.start_timeout
        timeout = aiohttp.ClientTimeout(total=2)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while True:
                if proc.poll() is not None:
                    raise ControlPlaneError(
                        f"{name} exited with {proc.returncode} while starting\n"
                        f"{self._tail(name)}")
                with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError, OSError):
                    async with session.get(url, ssl=ssl_context, headers=headers) as r:
                        if ok(r.status, await r.read()):
                            return
                if time.monotonic() > deadline:
                    raise ControlPlaneError(
                        f"{name} not ready after {self.start_timeout:g} s\n{self._tail(name)}")
                await asyncio.sleep(0.05)

    def _tail(self, name: str, lines: int = 20) -> str:
        try:
            text = self._dir(f"{name}.log").read_text(errors="replace")
        except (OSError, ControlPlaneError):
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


async def _service_account_keys(directory: Path) -> tuple[Path, Path]:
    """An EC P-256 key pair that signs (and verifies) service-account tokens."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ControlPlaneError("starting kube-apiserver needs the openssl command line tool")
    await asyncio.to_thread(directory.mkdir, parents=True, exist_ok=True)
    key, pub = directory / "sa.key", directory / "sa.pub"
    for args in (("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key)),
                 ("ec", "-in", str(key), "-pubout", "-out", str(pub))):
        proc = await asyncio.create_subprocess_exec(
            openssl, *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await proc.communicate()
        if proc.returncode != 0:
            raise ControlPlaneError(f"openssl {args[0]} failed: {err.decode().strip()}")
    key.chmod(0o600)
    return key, pub


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """In the child: be killed when the thread that started us dies (Linux only)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


_LIVE: weakref.WeakSet[ControlPlane] = weakref.WeakSet()
"""Planes started and not yet stopped, killed if the interpreter exits first."""


@atexit.register
def _kill_live_planes() -> None:  # pragma: no cover - at interpreter exit
    for plane in list(_LIVE):
        plane.kill_now()
