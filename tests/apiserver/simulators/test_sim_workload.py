"""OwnerSimulator: each workload simulator watches exactly its owner and child resources."""

from __future__ import annotations

import pytest

from asyncop.apiserver.simulators.cronjobs import CronJobSimulator
from asyncop.apiserver.simulators.daemonsets import DaemonSetSimulator
from asyncop.apiserver.simulators.deployments import DeploymentSimulator
from asyncop.apiserver.simulators.jobs import JobSimulator
from asyncop.apiserver.simulators.replicasets import ReplicaSetSimulator
from asyncop.apiserver.simulators.statefulsets import StatefulSetSimulator
from asyncop.apiserver.simulators.workload import OwnerSimulator


@pytest.mark.parametrize(("cls", "watched"), [
    (DeploymentSimulator, {("apps", "deployments"), ("apps", "replicasets")}),
    (ReplicaSetSimulator, {("apps", "replicasets"), ("", "pods")}),
    (StatefulSetSimulator, {("apps", "statefulsets"), ("", "pods")}),
    (DaemonSetSimulator, {("apps", "daemonsets"), ("", "pods")}),
    (JobSimulator, {("batch", "jobs"), ("", "pods")}),
    (CronJobSimulator, {("batch", "cronjobs"), ("batch", "jobs")}),
])
def test_watched_follows_owner_and_child(cls: type[OwnerSimulator],
                                         watched: set[tuple[str, str]]) -> None:
    assert cls.watched == frozenset(watched)
