"""Config resolution like kubectl: url, --kubeconfig, $KUBECONFIG (merged), ~/.kube, in-cluster."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import pytest
import yaml

from asyncop.client import ClientConfig, ConfigError, in_cluster_config, load_config
from asyncop.client import config as config_mod
from asyncop.client.auth import Credentials
from asyncop.testing import FakeClock


def kubeconfig(
    path: Path,
    *,
    current: str | None,
    contexts: dict[str, tuple[str, str]],
    clusters: dict[str, dict[str, object]],
    users: dict[str, dict[str, object]],
    namespaces: dict[str, str] | None = None,
) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [
            {
                "name": n,
                "context": {"cluster": c, "user": u}
                | ({"namespace": namespaces[n]} if namespaces and n in namespaces else {}),
            }
            for n, (c, u) in contexts.items()
        ],
    }
    if current:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    return home


async def test_explicit_url_wins_over_everything(
        clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kc = kubeconfig(tmp_path / "kc", current="a", contexts={"a": ("c", "u")},
                    clusters={"c": {"server": "https://a:6443"}}, users={"u": {"token": "t"}})
    monkeypatch.setenv("KUBECONFIG", str(kc))
    cfg = await load_config(url="http://127.0.0.1:1234/")
    assert cfg.host == "http://127.0.0.1:1234"
    assert cfg.token is None


async def test_kubeconfig_flag_token_namespace_and_context(clean_env: Path, tmp_path: Path) -> None:
    kc = kubeconfig(
        tmp_path / "kc", current="a",
        contexts={"a": ("ca", "ua"), "b": ("cb", "ub")},
        clusters={"ca": {"server": "https://a:6443/"},
                  "cb": {"server": "https://b:6443", "insecure-skip-tls-verify": True}},
        users={"ua": {"token": "tok-a"}, "ub": {"token": "tok-b"}},
        namespaces={"b": "team-b"},
    )
    cfg = await load_config(kubeconfig=str(kc))
    assert (cfg.host, cfg.token, cfg.namespace, cfg.context) == ("https://a:6443", "tok-a",
                                                                   "default", "a")
    assert cfg.verify_ssl
    cfg = await load_config(kubeconfig=str(kc), context="b")
    assert (cfg.host, cfg.token, cfg.namespace, cfg.verify_ssl) == ("https://b:6443", "tok-b",
                                                                    "team-b", False)


async def test_kubeconfig_env_merges_first_file_wins(
        clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = kubeconfig(tmp_path / "one", current=None, contexts={"shared": ("c1", "u1")},
                       clusters={"c1": {"server": "https://one"}}, users={"u1": {"token": "1"}})
    second = kubeconfig(
        tmp_path / "two", current="shared",
        contexts={"shared": ("c2", "u2"), "only2": ("c2", "u2")},
        clusters={"c2": {"server": "https://two"}, "c1": {"server": "https://ignored"}},
        users={"u2": {"token": "2"}},
    )
    missing = tmp_path / "missing"
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(missing), str(first), str(second)]))
    cfg = await load_config()
    # current-context comes from the second file (the first has none); the context
    # "shared" and cluster "c1" from the first file, which defined them first.
    assert (cfg.context, cfg.host, cfg.token) == ("shared", "https://one", "1")
    cfg = await load_config(context="only2")
    assert (cfg.host, cfg.token) == ("https://two", "2")


async def test_home_kubeconfig_used_when_no_env(clean_env: Path) -> None:
    (clean_env / ".kube").mkdir()
    kubeconfig(clean_env / ".kube" / "config", current="x", contexts={"x": ("c", "u")},
               clusters={"c": {"server": "http://home:8080"}}, users={"u": {}})
    cfg = await load_config()
    assert cfg.host == "http://home:8080"
    assert "config" in cfg.source


async def test_kubeconfig_env_set_skips_home(
        clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (clean_env / ".kube").mkdir()
    kubeconfig(clean_env / ".kube" / "config", current="x", contexts={"x": ("c", "u")},
               clusters={"c": {"server": "http://home:8080"}}, users={"u": {}})
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nope"))
    with pytest.raises(ConfigError) as err:
        await load_config()
    assert "KUBECONFIG=" in str(err.value)
    assert "--embedded" in str(err.value)


async def test_relative_paths_and_inline_data(clean_env: Path, tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ca.pem").write_text("CA")
    (sub / "tok").write_text("file-token\n")
    pem = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n"
    kc = kubeconfig(
        sub / "kc", current="a", contexts={"a": ("c", "u"), "b": ("c", "u2")},
        clusters={"c": {"server": "https://x", "certificate-authority": "ca.pem",
                        "tls-server-name": "kubernetes"}},
        users={
            "u": {"client-certificate-data": base64.b64encode(pem.encode()).decode(),
                  "client-key": "key.pem"},
            "u2": {"tokenFile": "tok"},
        },
    )
    cfg = await load_config(kubeconfig=str(kc))
    assert cfg.ca_file == str(sub.resolve() / "ca.pem")
    assert cfg.client_cert_data == pem
    assert cfg.client_key_file == str(sub.resolve() / "key.pem")
    assert cfg.tls_server_name == "kubernetes"
    cfg = await load_config(kubeconfig=str(kc), context="b")
    assert cfg.token_file == str(sub.resolve() / "tok")
    creds = Credentials(cfg, clock=FakeClock())
    assert await creds.authorization() == "Bearer file-token"


async def test_errors_are_one_readable_line(clean_env: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no kubeconfig found .*pass --kubeconfig"):
        await load_config()
    with pytest.raises(ConfigError, match="does not exist"):
        await load_config(kubeconfig=str(tmp_path / "absent"))
    kc = kubeconfig(tmp_path / "kc", current="a", contexts={"a": ("c", "u")},
                    clusters={"c": {"server": "https://x"}}, users={"u": {}})
    with pytest.raises(ConfigError, match=r"context 'zz' not found .*available: a"):
        await load_config(kubeconfig=str(kc), context="zz")
    bad = kubeconfig(tmp_path / "bad", current="a", contexts={"a": ("nocluster", "u")},
                     clusters={}, users={})
    with pytest.raises(ConfigError, match="does not define"):
        await load_config(kubeconfig=str(bad))
    (tmp_path / "garbage").write_text("{not: [yaml")
    with pytest.raises(ConfigError, match="cannot be read"):
        await load_config(kubeconfig=str(tmp_path / "garbage"))
    with pytest.raises(ConfigError) as err:
        await load_config(kubeconfig=str(bad))
    assert "\n" not in str(err.value)


async def test_in_cluster(clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token")
    (sa / "ca.crt").write_text("CA")
    (sa / "namespace").write_text("ops\n")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    monkeypatch.setattr(config_mod, "SERVICE_ACCOUNT_DIR", str(sa))
    cfg = await load_config()
    assert cfg == ClientConfig(host="https://10.0.0.1:6443", token_file=str(sa / "token"),
                               ca_file=str(sa / "ca.crt"), namespace="ops", source="in-cluster")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    assert in_cluster_config(service_account_dir=str(sa)).host == "https://[fd00::1]:6443"
    (sa / "token").unlink()
    with pytest.raises(ConfigError, match="token"):
        in_cluster_config(service_account_dir=str(sa))


async def test_token_file_is_reread_after_a_minute(tmp_path: Path) -> None:
    tok = tmp_path / "token"
    tok.write_text("one")
    clock = FakeClock()
    creds = Credentials(ClientConfig(host="https://x", token_file=str(tok)), clock=clock)
    assert await creds.authorization() == "Bearer one"
    tok.write_text("two")
    assert await creds.authorization() == "Bearer one"
    await clock.advance(61)
    assert await creds.authorization() == "Bearer two"


async def test_exec_plugin_token(clean_env: Path, tmp_path: Path) -> None:
    script = tmp_path / "plugin.py"
    script.write_text(
        "import json, os\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
        "'kind': 'ExecCredential', 'status': {'token': 'exec-' + os.environ['WHO']}}))\n"
    )
    kc = kubeconfig(
        tmp_path / "kc", current="a", contexts={"a": ("c", "u")},
        clusters={"c": {"server": "https://x"}},
        users={"u": {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                              "command": sys.executable, "args": [str(script)],
                              "env": [{"name": "WHO", "value": "me"}]}}},
    )
    cfg = await load_config(kubeconfig=str(kc))
    creds = Credentials(cfg, clock=FakeClock())
    assert await creds.authorization() == "Bearer exec-me"


async def test_exec_plugin_runs_again_when_its_token_expires(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    script = tmp_path / "plugin.py"
    script.write_text(
        "import json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "n = int(p.read_text()) + 1 if p.exists() else 1\n"
        "p.write_text(str(n))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1',"
        " 'kind': 'ExecCredential', 'status': {'token': f'tok-{n}',"
        " 'expirationTimestamp': '2026-01-01T00:05:00Z'}}))\n"
    )
    exec_cfg = {"apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": sys.executable, "args": [str(script)]}
    clock = FakeClock()  # starts at 2026-01-01T00:00:00Z: the token lives 300 s
    creds = Credentials(ClientConfig(host="https://x", exec_config=exec_cfg), clock=clock)
    assert await creds.authorization() == "Bearer tok-1"
    await clock.advance(250)
    assert await creds.authorization() == "Bearer tok-1"
    await clock.advance(45)  # within 10 s of expiry: refreshed early
    assert await creds.authorization() == "Bearer tok-2"


async def test_an_exec_plugin_handing_out_expired_credentials_is_spaced_out(
        tmp_path: Path) -> None:
    """Regression: a plugin whose credential had already expired ran again on every request
    (16 runs in a second). Now its runs back off 1 s, 2 s, 4 s … (a 401's invalidate does
    not shorten that), with a warning per run."""
    from structlog.testing import capture_logs

    counter = tmp_path / "runs"
    script = tmp_path / "plugin.py"
    script.write_text(
        "import json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "n = int(p.read_text()) + 1 if p.exists() else 1\n"
        "p.write_text(str(n))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1',"
        " 'kind': 'ExecCredential', 'status': {'token': f'tok-{n}',"
        " 'expirationTimestamp': '2025-12-31T23:00:00Z'}}))\n"  # an hour before the clock
    )
    exec_cfg = {"apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": sys.executable, "args": [str(script)]}
    clock = FakeClock()  # 2026-01-01T00:00:00Z
    creds = Credentials(ClientConfig(host="https://x", exec_config=exec_cfg), clock=clock)
    with capture_logs() as logs:
        for _ in range(16):
            assert await creds.authorization() == "Bearer tok-1"
            creds.invalidate()  # as after a 401
        assert counter.read_text() == "1"
        await clock.advance(1.0)
        assert await creds.authorization() == "Bearer tok-2"
        await clock.advance(1.0)
        assert await creds.authorization() == "Bearer tok-2"  # now 2 s apart
        await clock.advance(1.0)
        assert await creds.authorization() == "Bearer tok-3"
    warnings = [e for e in logs if e["event"] ==
                "exec credential plugin returned an expired credential"]
    assert [w["next_run_in"] for w in warnings] == [1.0, 2.0, 4.0]
