"""YAML bodies decode as kube decodes them (go-yaml v2 through sigs.k8s.io/yaml) and cannot
be turned into poison objects by anchors and aliases.

Regressions (the adversarial review of the embedded server): a chain of anchors, each
aliasing the previous one, built a value 400 levels deep from a 6 KB body — the create
answered 500 *and stored it*, after which every GET/LIST of the collection answered 500 and
a plain LIST spun the event loop for minutes; 402 bytes of "billion laughs" stored a 4.7 MB
ConfigMap. kube's go-yaml refuses excessive aliasing (`allowedAliasRatio`) and an anchor
containing itself; the expanded value is what our depth and size limits now apply to.
"""

from __future__ import annotations

import aiohttp
import pytest

from asyncop.apiserver import ApiServer
from asyncop.apiserver.http import bodylimits, yamlbody
from tests.apiserver import httpkit
from tests.apiserver.crdkit import WIDGET_CRD, WIDGETS
from tests.apiserver.httpkit import call, install_crd

CM = "/api/v1/namespaces/default/configmaps"
YAML = {"Content-Type": "application/yaml"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
http = httpkit.http


def chain(links: int) -> bytes:
    """Each anchor aliases the previous one: `links` levels once expanded, two per line."""
    lines = [b"metadata: {name: chain}", b"x0: &a0 [leaf]"]
    lines += [b"x%d: &a%d [*a%d]" % (i, i, i - 1) for i in range(1, links)]
    lines.append(b"data: {k: v}")
    return b"\n".join(lines) + b"\n"


def laughs(levels: int, fanout: int) -> bytes:
    """`levels` anchors, each a list of `fanout` aliases of the previous: fanout**levels
    scalars once expanded."""
    lines = [b"metadata: {name: laughs}", b"l0: &l0 [lol]"]
    for i in range(1, levels + 1):
        lines.append(b"l%d: &l%d [" % (i, i) + b", ".join([b"*l%d" % (i - 1)] * fanout) + b"]")
    return b"\n".join(lines) + b"\n"


async def _post(http: aiohttp.ClientSession, url: str, data: bytes,
                headers: dict[str, str]) -> tuple[int, dict[str, object]]:
    async with http.post(url, data=data, headers=headers) as r:
        return r.status, await r.json(content_type=None)


async def _collection_is_empty_and_readable(http: aiohttp.ClientSession, url: str) -> None:
    code, listed = await call(http, "GET", url)
    assert code == 200 and listed["items"] == []


@pytest.mark.parametrize("links", [130, 400, 3000])
async def test_an_alias_chain_deeper_than_the_limit_is_refused_and_stores_nothing(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession, links: int) -> None:
    url = apiserver_no_sim.url + CM
    code, body = await _post(http, url, chain(links), YAML)
    assert code == 400, body
    assert body["message"] == bodylimits.YAML_TOO_DEEP
    await _collection_is_empty_and_readable(http, url)
    async with http.patch(f"{url}/chain?fieldManager=t", data=chain(links),
                          headers=APPLY) as r:
        assert r.status == 400
    await _collection_is_empty_and_readable(http, url)


async def test_a_shallow_alias_chain_is_fine(apiserver_no_sim: ApiServer,
                                             http: aiohttp.ClientSession) -> None:
    code, body = await _post(http, apiserver_no_sim.url + CM, chain(20), YAML)
    assert code == 201, body


async def test_billion_laughs_is_excessive_aliasing(apiserver_no_sim: ApiServer,
                                                    http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    body = laughs(9, 10)  # under 600 bytes, 10**9 scalars expanded
    assert len(body) < 600
    code, status = await _post(http, url, body, YAML)
    assert code == 400, status
    # kube: go-yaml's decoder (allowedAliasRatio), wrapped by sigs.k8s.io/yaml
    assert status["message"] == ("error converting YAML to JSON: yaml: document contains "
                                 "excessive aliasing")
    await _collection_is_empty_and_readable(http, url)


async def test_few_aliases_of_a_large_scalar_cannot_pass_the_size_limit(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    """Under go-yaml's counting limits (at most 100 alias decodes) but 100 copies of 100 KB:
    more text than the body limit allows once expanded."""
    url = apiserver_no_sim.url + CM
    big = b"x" * 100_000
    body = (b"metadata: {name: wide}\nbig: &b " + big + b"\ndata:\n" +
            b"".join(b"  k%d: *b\n" % i for i in range(60)))
    code, status = await _post(http, url, body, YAML)
    assert code == 413, status
    assert status["message"] == "Request entity too large: limit is 3145728"
    await _collection_is_empty_and_readable(http, url)


async def test_an_anchor_inside_itself_is_refused(apiserver_no_sim: ApiServer,
                                                  http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    code, status = await _post(http, url, b"metadata: {name: self}\nx: &x {b: *x}\n", YAML)
    assert code == 400
    assert status["message"] == ("error converting YAML to JSON: yaml: anchor 'x' value "
                                 "contains itself")
    code, status = await _post(http, url, b"metadata: {name: u}\ndata: {a: *nope}\n", YAML)
    assert code == 400
    assert status["message"] == ("error converting YAML to JSON: yaml: unknown anchor 'nope' "
                                 "referenced")
    await _collection_is_empty_and_readable(http, url)


async def test_custom_resources_get_the_same_limits(apiserver_no_sim: ApiServer,
                                                    http: aiohttp.ClientSession) -> None:
    await install_crd(http, apiserver_no_sim.url, WIDGET_CRD, WIDGETS)
    url = apiserver_no_sim.url + WIDGETS
    body = chain(400).replace(b"metadata:", b"apiVersion: example.com/v1\nkind: Widget\n"
                              b"metadata:")
    code, status = await _post(http, url, body, YAML)
    assert code == 400, status
    code, listed = await call(http, "GET", url)
    assert code == 200 and listed["items"] == []


async def test_aliases_merge_keys_and_yaml_11_scalars_decode_as_go_yaml_does(
        apiserver_no_sim: ApiServer, http: aiohttp.ClientSession) -> None:
    url = apiserver_no_sim.url + CM
    body = (b"base: &base {a: one, b: two}\n"
            b"metadata:\n  name: merged\n  labels:\n    <<: *base\n    b: mine\n"
            b"  annotations: {note: &s hello, again: *s}\n"
            b"data:\n  y: 'y'\n  when: 2001-12-14\n")
    code, created = await _post(http, url, body, YAML)
    assert code == 201, created
    assert created["metadata"]["labels"] == {"a": "one", "b": "mine"}
    assert created["metadata"]["annotations"] == {"note": "hello", "again": "hello"}
    # the unquoted key `y` is YAML 1.1's true (kube stores it as "true"); the quoted value
    # stays a string; an implicit timestamp stays its text
    assert created["data"] == {"true": "y", "when": "2001-12-14"}


def test_go_yaml_scalar_resolution() -> None:
    """kube: go-yaml v2 resolve (YAML 1.1): y/on are booleans, leading-zero numbers are
    octal, `_` is ignored in numbers, implicit timestamps stay text, big integers floats,
    non-string keys become strings; NaN/Inf cannot be JSON."""
    doc = yamlbody.load(b"a: y\nb: on\nc: 017\nd: 1_000\ne: 2001-12-14\nf: 0x1f\n"
                        b"g: 99999999999999999999\nh: .5\n1: int key\ntrue: bool key\n"
                        b"i: !!binary aGk=\nj: ~\n", max_bytes=1 << 20).value
    assert doc == {"a": True, "b": True, "c": 15, "d": 1000, "e": "2001-12-14", "f": 31,
                   "g": 1e20, "h": 0.5, "1": "int key", "true": "bool key", "i": "hi",
                   "j": None}
    with pytest.raises(Exception, match="json: unsupported value: \\+Inf"):
        yamlbody.load(b"a: .inf\n", max_bytes=100)
    with pytest.raises(Exception, match=r"cannot decode !!str `x` as a !!int"):
        yamlbody.load(b"a: !!int x\n", max_bytes=100)


def test_duplicate_keys_are_reported_in_go_yamls_words_and_the_last_wins() -> None:
    doc = yamlbody.load(b"a: 1\nb:\n  c: 2\n  c: 3\na: 4\n", max_bytes=100)
    assert doc.value == {"a": 4, "b": {"c": 3}}
    assert doc.duplicates == ['line 4: key "c" already set in map',
                              'line 5: key "a" already set in map']


def test_only_the_first_document_counts() -> None:
    assert yamlbody.load(b"a: 1\n---\nb: 2\n", max_bytes=100).value == {"a": 1}
