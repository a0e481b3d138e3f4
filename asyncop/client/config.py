"""Where the cluster is and how to authenticate: ClientConfig and kubectl-style resolution.

`load_config` follows kubectl's order: an explicit URL; `--kubeconfig PATH`; `$KUBECONFIG`
(an os.pathsep-separated list merged like kubectl: the first file to define a cluster, user or
context name wins, the first non-empty current-context wins, missing files are skipped);
`~/.kube/config`; in-cluster (KUBERNETES_SERVICE_HOST/PORT and the service-account files).

Invariants: a ClientConfig is an immutable value; relative file paths in a kubeconfig are
resolved against the directory of the file that defined them; every failure is a
`ConfigError` with one readable line that names the fix. The process-global default
Configuration of kubernetes_asyncio is never touched.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class ConfigError(Exception):
    """The configuration could not be loaded; the message is one line that names the fix."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Everything the Client needs to reach and authenticate to one API server."""

    host: str
    token: str | None = None
    token_file: str | None = None
    """Re-read periodically (service-account tokens rotate)."""
    ca_file: str | None = None
    ca_data: str | None = None
    """PEM text of the cluster CA (kubeconfig `certificate-authority-data`, decoded)."""
    verify_ssl: bool = True
    client_cert_file: str | None = None
    client_cert_data: str | None = None
    client_key_file: str | None = None
    client_key_data: str | None = None
    username: str | None = None
    password: str | None = None
    tls_server_name: str | None = None
    proxy_url: str | None = None
    """The cluster's `proxy-url`; without it the Client takes HTTPS_PROXY/HTTP_PROXY and
    NO_PROXY from the environment, once, when it opens (see `asyncop.client.transport`)."""
    namespace: str = "default"
    """The context's default namespace."""
    context: str | None = None
    source: str = ""
    """Where this came from, for logs and error messages (e.g. `kubeconfig /path`)."""
    exec_config: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    """A kubeconfig `exec` credential plugin; the Client runs it (again when it expires)."""


async def load_config(
    *, kubeconfig: str | None = None, context: str | None = None, url: str | None = None
) -> ClientConfig:
    """Resolve the configuration like kubectl does (see the module docstring)."""
    return resolve_config(kubeconfig=kubeconfig, context=context, url=url)


def resolve_config(
    *, kubeconfig: str | None = None, context: str | None = None, url: str | None = None
) -> ClientConfig:
    """The synchronous core of `load_config` (a few small file reads)."""
    if url:
        return ClientConfig(host=url.rstrip("/"), source=f"url {url}")
    looked: list[str] = []
    if kubeconfig:
        path = Path(kubeconfig).expanduser()
        if not path.is_file():
            raise ConfigError(f"kubeconfig {kubeconfig} does not exist; pass an existing file")
        return _from_kubeconfig([path], context)
    env = os.environ.get("KUBECONFIG")
    if env:
        paths = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
        existing = [p for p in paths if p.is_file()]
        if existing:
            return _from_kubeconfig(existing, context)
        looked.append(f"KUBECONFIG={env}")
    else:
        home = Path("~/.kube/config").expanduser()
        if home.is_file():
            return _from_kubeconfig([home], context)
        looked.append(str(home))
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return in_cluster_config()
    looked.append("in-cluster (KUBERNETES_SERVICE_HOST unset)")
    raise ConfigError(
        f"no kubeconfig found (looked at {', '.join(looked)}); "
        "pass --kubeconfig, set KUBECONFIG, or use --embedded"
    )


def in_cluster_config(*, service_account_dir: str | None = None) -> ClientConfig:
    """The pod's own service account: API server from the environment, token and CA files."""
    sa_dir = Path(service_account_dir or SERVICE_ACCOUNT_DIR)
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        raise ConfigError("KUBERNETES_SERVICE_HOST is not set; not running inside a cluster")
    token_file = sa_dir / "token"
    if not token_file.is_file():
        raise ConfigError(
            f"in-cluster token {token_file} is missing; mount a service account token"
        )
    ca_file = sa_dir / "ca.crt"
    namespace_file = sa_dir / "namespace"
    namespace = "default"
    if namespace_file.is_file():
        namespace = namespace_file.read_text().strip() or "default"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return ClientConfig(
        host=f"https://{host}:{port}",
        token_file=str(token_file),
        ca_file=str(ca_file) if ca_file.is_file() else None,
        namespace=namespace,
        source="in-cluster",
    )


# -- kubeconfig parsing -----------------------------------------------------------------------

_PATH_KEYS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}


def _read_kubeconfig(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"kubeconfig {path} cannot be read ({exc}); fix or remove it") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"kubeconfig {path} is not a YAML mapping; fix or remove it")
    return data


def merge_kubeconfigs(paths: list[Path]) -> dict[str, Any]:
    """Merge kubeconfig files like kubectl: the first file to set a name or key wins.

    Relative paths are made absolute against the directory of the file defining them.
    """
    merged: dict[str, Any] = {"clusters": {}, "users": {}, "contexts": {}}
    current = ""
    for path in paths:
        data = _read_kubeconfig(path)
        base = path.resolve().parent
        for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            for entry in data.get(section) or []:
                if not isinstance(entry, dict) or "name" not in entry:
                    continue
                name = str(entry["name"])
                if name in merged[section]:
                    continue
                body = dict(entry.get(inner) or {})
                for key in _PATH_KEYS.get(inner, ()):
                    value = body.get(key)
                    if isinstance(value, str) and value and not os.path.isabs(value):
                        body[key] = str(base / value)
                merged[section][name] = body
        if not current and data.get("current-context"):
            current = str(data["current-context"])
    merged["current-context"] = current
    return merged


def _from_kubeconfig(paths: list[Path], context: str | None) -> ClientConfig:
    source = "kubeconfig " + os.pathsep.join(str(p) for p in paths)
    return config_from_dict(merge_kubeconfigs(paths), context=context, source=source)


def _decode(value: Any, what: str, source: str) -> str:
    try:
        return base64.b64decode(str(value)).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{what} in {source} is not valid base64; fix the kubeconfig") from exc


def _check_server(server: str, where: str) -> None:
    """ConfigError unless `server` is an http(s) URL with a host and a valid port."""
    problem = ""
    try:
        parts = urlsplit(server)
        port = parts.port  # ValueError for ":abc", ":99999" or an unbracketed IPv6 address
    except ValueError as exc:
        problem = str(exc)
        parts, port = None, None
    if parts is not None and parts.scheme not in ("http", "https"):
        problem = "the scheme must be http or https"
    elif parts is not None and not parts.hostname:
        problem = "it names no host"
    elif port == 0:
        problem = "port 0 cannot be dialled"
    if problem:
        hint = (" (an IPv6 address goes in brackets: http://[::1]:PORT)"
                if server.count(":") > 2 and "[" not in server else "")
        raise ConfigError(f"{where} has server {server!r}, which is not a valid URL: "
                          f"{problem}{hint}; fix the kubeconfig")


def config_from_dict(
    merged: dict[str, Any], *, context: str | None = None, source: str = "kubeconfig"
) -> ClientConfig:
    """Build a ClientConfig from a merged kubeconfig (the shape `merge_kubeconfigs` returns)."""
    name = context or merged.get("current-context") or ""
    contexts: dict[str, Any] = merged.get("contexts") or {}
    if not name:
        raise ConfigError(f"{source} has no current-context; pass --context NAME")
    if name not in contexts:
        available = ", ".join(sorted(contexts)) or "none"
        raise ConfigError(
            f"context {name!r} not found in {source} (available: {available}); "
            "pass --context with one of them"
        )
    ctx = contexts[name]
    cluster_name = str(ctx.get("cluster", ""))
    cluster = (merged.get("clusters") or {}).get(cluster_name)
    if cluster is None:
        raise ConfigError(
            f"context {name!r} refers to cluster {cluster_name!r}, which {source} does not "
            "define; fix the kubeconfig"
        )
    server = str(cluster.get("server") or "")
    if not server:
        raise ConfigError(f"cluster {cluster_name!r} in {source} has no server; set its URL")
    _check_server(server, f"cluster {cluster_name!r} in {source}")
    user: dict[str, Any] = (merged.get("users") or {}).get(str(ctx.get("user", ""))) or {}
    token = user.get("token")
    token_file = user.get("tokenFile")
    ca_data = cluster.get("certificate-authority-data")
    cert_data = user.get("client-certificate-data")
    key_data = user.get("client-key-data")
    exec_cfg = user.get("exec")
    if exec_cfg is not None and not (isinstance(exec_cfg, dict) and exec_cfg.get("command")):
        raise ConfigError(f"exec plugin of context {name!r} has no command; fix the kubeconfig")
    if user.get("auth-provider"):
        raise ConfigError(
            f"auth-provider {user['auth-provider'].get('name')!r} is not supported; "
            "use a token, client certificate or exec plugin"
        )
    return ClientConfig(
        host=server.rstrip("/"),
        token=str(token) if token else None,
        token_file=str(token_file) if token_file and not token else None,
        ca_file=cluster.get("certificate-authority") or None,
        ca_data=_decode(ca_data, "certificate-authority-data", source) if ca_data else None,
        verify_ssl=not bool(cluster.get("insecure-skip-tls-verify", False)),
        client_cert_file=user.get("client-certificate") or None,
        client_cert_data=_decode(cert_data, "client-certificate-data", source)
        if cert_data
        else None,
        client_key_file=user.get("client-key") or None,
        client_key_data=_decode(key_data, "client-key-data", source) if key_data else None,
        username=user.get("username") or None,
        password=user.get("password") or None,
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy_url=str(cluster.get("proxy-url") or "") or None,
        namespace=str(ctx.get("namespace") or "default"),
        context=name,
        source=source,
        exec_config=dict(exec_cfg) if exec_cfg else None,
    )
