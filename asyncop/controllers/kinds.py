"""The Kinds of the bundled controllers' custom resources (one per file in crds/).

Invariant: group, version, plural and kind match the CRDs in crds/ exactly (a test checks),
so that the seeds' own example manifests apply unchanged.
"""

from __future__ import annotations

from asyncop.api import Kind

AT = Kind("cnat.programming-kubernetes.info", "v1alpha1", "ats", "At")
FOO = Kind("samplecontroller.k8s.io", "v1alpha1", "foos", "Foo")
NETWORK = Kind("samplecrd.k8s.io", "v1", "networks", "Network")
CRDKIND = Kind("iksoon.test.com", "v1", "crdplural", "CrdKind")
JINGHZHU = Kind("jinghzhu.com", "v1", "jinghzhus", "Jinghzhu")

CUSTOM_KINDS: tuple[Kind, ...] = (AT, FOO, NETWORK, CRDKIND, JINGHZHU)
