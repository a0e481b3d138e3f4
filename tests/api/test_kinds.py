from asyncop.api import Request
from asyncop.api.kinds import DEPLOYMENT, NAMESPACE, POD


def test_paths() -> None:
    assert POD.path("ns", "p") == "/api/v1/namespaces/ns/pods/p"
    assert POD.path() == "/api/v1/pods"
    assert DEPLOYMENT.path("a", "d", "scale") == "/apis/apps/v1/namespaces/a/deployments/d/scale"
    assert NAMESPACE.path("ignored", "n") == "/api/v1/namespaces/n"


def test_request_keys_round_trip() -> None:
    assert Request.from_key("ns/a") == Request("a", "ns")
    assert Request.from_key("a").key == "a"
