"""Quantities are stored in kube's canonical form, after validation saw them as sent.

kube decodes a resource.Quantity, validates the parsed value, and serialises it canonically:
a Pod created with `memory: 1024Mi` and `cpu: 0.5` reads back `1Gi` and `500m`
(resource.Quantity's MarshalJSON). So a write that repeats the non-canonical text changes
nothing, and a controller comparing its desired `1024Mi` with the object sees what a real
cluster shows. Validation messages print the value as sent (`builtin/canonical.py`).
"""

from __future__ import annotations

from asyncop.apiserver import ApiServer


def _deployment(memory: str, cpu: float | str) -> dict[str, object]:
    return {"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{
            "name": "c", "image": "i",
            "resources": {"limits": {"memory": memory, "cpu": cpu},
                          "requests": {"memory": "1000Mi", "cpu": "100m"}}}]}}}}


async def test_quantities_are_stored_canonically_and_repeating_them_is_a_no_op(
        apiserver_no_sim: ApiServer) -> None:
    store = apiserver_no_sim.store
    rt = store.resolve("apps", "v1", "deployments")
    made = await store.create(rt, _deployment("1024Mi", 0.5), namespace="default")
    resources = made["spec"]["template"]["spec"]["containers"][0]["resources"]
    # 1024Mi is exactly 1Gi; 1000Mi is not a whole Gi and stays; 0.5 is 500m
    assert resources == {"limits": {"memory": "1Gi", "cpu": "500m"},
                         "requests": {"memory": "1000Mi", "cpu": "100m"}}
    again = _deployment("1024Mi", "500m")
    again["metadata"] = {**made["metadata"]}  # type: ignore[dict-item]
    updated = await store.update(rt, again)
    assert updated["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
    assert updated["metadata"]["generation"] == 1
