"""Field-number tables of the Kubernetes protobuf messages `protobuf.decode` understands.

Numbers come from k8s.io/api (core, apps, batch, rbac, coordination v1) and apimachinery (meta/v1,
util/intstr) `generated.proto`. A table maps a field number to (JSON name, type). Types:
`str` (empty omitted), `strk` (a string JSON keeps even when empty), `bytes` (base64), `int`
(kept when zero: pointers and required numbers), `int0` (omitted when zero), `bool`, `bool0`
(omitted when false), `time`,
`microtime`, `fieldsv1` (raw JSON), `intorstr` (IntOrString), `quantity`; or a tuple
`("msg", table)`, `("map", value type)`, `("rep", type)`.

Invariant: the tables of kinds marked strict (the partial workload, Service and RBAC tables)
make an unknown field an error instead of silently dropping data; complete tables (ObjectMeta,
Secret, ConfigMap, ...) skip unknown fields as protobuf readers do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

Schema = Mapping[int, tuple[str, Any]]

TIME: Schema = {1: ("seconds", "int"), 2: ("nanos", "int")}
_OWNER_REF: Schema = {
    1: ("kind", "str"), 3: ("name", "str"), 4: ("uid", "str"), 5: ("apiVersion", "str"),
    6: ("controller", "bool"), 7: ("blockOwnerDeletion", "bool"),
}
_MANAGED: Schema = {
    1: ("manager", "str"), 2: ("operation", "str"), 3: ("apiVersion", "str"),
    4: ("time", "time"), 6: ("fieldsType", "str"), 7: ("fieldsV1", "fieldsv1"),
    8: ("subresource", "str"),
}
OBJECT_META: Schema = {
    1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str"),
    4: ("selfLink", "str"), 5: ("uid", "str"), 6: ("resourceVersion", "str"),
    7: ("generation", "int0"), 8: ("creationTimestamp", "time"),
    9: ("deletionTimestamp", "time"), 10: ("deletionGracePeriodSeconds", "int"),
    11: ("labels", ("map", "str")), 12: ("annotations", ("map", "str")),
    13: ("ownerReferences", ("rep", ("msg", _OWNER_REF))),
    14: ("finalizers", ("rep", "str")), 17: ("managedFields", ("rep", ("msg", _MANAGED))),
}
_META: Final = ("metadata", ("msg", OBJECT_META))
_OBJECT_REF: Schema = {
    1: ("kind", "str"), 2: ("namespace", "str"), 3: ("name", "str"), 4: ("uid", "str"),
    5: ("apiVersion", "str"), 6: ("resourceVersion", "str"), 7: ("fieldPath", "str"),
}
_LOCAL_REF: Schema = {1: ("name", "str")}

NAMESPACE: Schema = {
    1: _META,
    2: ("spec", ("msg", {1: ("finalizers", ("rep", "str"))})),
    3: ("status", ("msg", {1: ("phase", "str")})),
}
SECRET: Schema = {
    1: _META, 2: ("data", ("map", "bytes")), 3: ("type", "str"),
    4: ("stringData", ("map", "str")), 5: ("immutable", "bool"),
}
CONFIG_MAP: Schema = {
    1: _META, 2: ("data", ("map", "str")), 3: ("binaryData", ("map", "bytes")),
    4: ("immutable", "bool"),
}
SERVICE_ACCOUNT: Schema = {
    1: _META, 2: ("secrets", ("rep", ("msg", _OBJECT_REF))),
    3: ("imagePullSecrets", ("rep", ("msg", _LOCAL_REF))),
    4: ("automountServiceAccountToken", "bool"),
}
EVENT: Schema = {
    1: _META, 2: ("involvedObject", ("msg", _OBJECT_REF)), 3: ("reason", "str"),
    4: ("message", "str"), 5: ("source", ("msg", {1: ("component", "str"), 2: ("host", "str")})),
    6: ("firstTimestamp", "time"), 7: ("lastTimestamp", "time"), 8: ("count", "int0"),
    9: ("type", "str"), 10: ("eventTime", "microtime"),
    11: ("series", ("msg", {1: ("count", "int0"), 2: ("lastObservedTime", "microtime")})),
    12: ("action", "str"), 13: ("related", ("msg", _OBJECT_REF)),
    14: ("reportingComponent", "str"), 15: ("reportingInstance", "str"),
}
EVENT_V1: Schema = {  # events.k8s.io/v1
    1: _META, 2: ("eventTime", "microtime"),
    3: ("series", ("msg", {1: ("count", "int0"), 2: ("lastObservedTime", "microtime")})),
    4: ("reportingController", "str"), 5: ("reportingInstance", "str"), 6: ("action", "str"),
    7: ("reason", "str"), 8: ("regarding", ("msg", _OBJECT_REF)),
    9: ("related", ("msg", _OBJECT_REF)), 10: ("note", "str"), 11: ("type", "str"),
    12: ("deprecatedSource", ("msg", {1: ("component", "str"), 2: ("host", "str")})),
    13: ("deprecatedFirstTimestamp", "time"), 14: ("deprecatedLastTimestamp", "time"),
    15: ("deprecatedCount", "int0"),
}
LEASE: Schema = {
    1: _META,
    2: ("spec", ("msg", {
        1: ("holderIdentity", "str"), 2: ("leaseDurationSeconds", "int"),
        3: ("acquireTime", "microtime"), 4: ("renewTime", "microtime"),
        5: ("leaseTransitions", "int"), 6: ("strategy", "str"), 7: ("preferredHolder", "str"),
    })),
}
DELETE_OPTIONS: Schema = {
    1: ("gracePeriodSeconds", "int"),
    2: ("preconditions", ("msg", {1: ("uid", "str"), 2: ("resourceVersion", "str")})),
    3: ("orphanDependents", "bool"), 4: ("propagationPolicy", "str"),
    5: ("dryRun", ("rep", "str")),
    6: ("ignoreStoreReadErrorWithClusterBreakingPotential", "bool"),
}

# ------------------------------------------------- workloads (strict: partial tables)

_LABEL_SELECTOR: Schema = {
    1: ("matchLabels", ("map", "str")),
    2: ("matchExpressions", ("rep", ("msg", {
        1: ("key", "str"), 2: ("operator", "str"), 3: ("values", ("rep", "str"))}))),
}
_CONTAINER_PORT: Schema = {
    1: ("name", "str"), 2: ("hostPort", "int0"), 3: ("containerPort", "int"),
    4: ("protocol", "str"), 5: ("hostIP", "str"),
}
_RESOURCES: Schema = {
    1: ("limits", ("map", "quantity")), 2: ("requests", ("map", "quantity")),
    3: ("claims", ("rep", ("msg", {1: ("name", "str"), 2: ("request", "str")}))),
}
_CONTAINER: Schema = {
    1: ("name", "str"), 2: ("image", "str"), 3: ("command", ("rep", "str")),
    4: ("args", ("rep", "str")), 5: ("workingDir", "str"),
    6: ("ports", ("rep", ("msg", _CONTAINER_PORT))), 8: ("resources", ("msg", _RESOURCES)),
    13: ("terminationMessagePath", "str"), 14: ("imagePullPolicy", "str"),
    16: ("stdin", "bool0"), 17: ("stdinOnce", "bool0"), 18: ("tty", "bool0"),
    20: ("terminationMessagePolicy", "str"),
}
_POD_SPEC: Schema = {
    2: ("containers", ("rep", ("msg", _CONTAINER))), 3: ("restartPolicy", "str"),
    4: ("terminationGracePeriodSeconds", "int"), 5: ("activeDeadlineSeconds", "int"),
    6: ("dnsPolicy", "str"), 7: ("nodeSelector", ("map", "str")),
    8: ("serviceAccountName", "str"), 9: ("serviceAccount", "str"), 10: ("nodeName", "str"),
    11: ("hostNetwork", "bool0"), 12: ("hostPID", "bool0"), 13: ("hostIPC", "bool0"),
    16: ("hostname", "str"), 17: ("subdomain", "str"), 19: ("schedulerName", "str"),
    20: ("initContainers", ("rep", ("msg", _CONTAINER))),
    21: ("automountServiceAccountToken", "bool"), 24: ("priorityClassName", "str"),
    27: ("shareProcessNamespace", "bool"),
}
_POD_TEMPLATE: Schema = {1: _META, 2: ("spec", ("msg", _POD_SPEC))}
_ROLLING_UPDATE: Schema = {1: ("maxUnavailable", "intorstr"), 2: ("maxSurge", "intorstr")}
DEPLOYMENT: Schema = {
    1: _META,
    2: ("spec", ("msg", {
        1: ("replicas", "int"), 2: ("selector", ("msg", _LABEL_SELECTOR)),
        3: ("template", ("msg", _POD_TEMPLATE)),
        4: ("strategy", ("msg", {1: ("type", "str"),
                                 2: ("rollingUpdate", ("msg", _ROLLING_UPDATE))})),
        5: ("minReadySeconds", "int0"), 6: ("revisionHistoryLimit", "int"),
        7: ("paused", "bool0"), 9: ("progressDeadlineSeconds", "int"),
    })),
    3: ("status", ("msg", {
        1: ("observedGeneration", "int0"), 2: ("replicas", "int0"),
        3: ("updatedReplicas", "int0"), 4: ("availableReplicas", "int0"),
        5: ("unavailableReplicas", "int0"), 7: ("readyReplicas", "int0"),
        8: ("collisionCount", "int"),
    })),
}
_SERVICE_PORT: Schema = {
    1: ("name", "str"), 2: ("protocol", "str"), 3: ("port", "int"),
    4: ("targetPort", "intorstr"), 5: ("nodePort", "int0"), 6: ("appProtocol", "str"),
}
SERVICE: Schema = {
    1: _META,
    2: ("spec", ("msg", {
        1: ("ports", ("rep", ("msg", _SERVICE_PORT))), 2: ("selector", ("map", "str")),
        3: ("clusterIP", "str"), 4: ("type", "str"), 5: ("externalIPs", ("rep", "str")),
        7: ("sessionAffinity", "str"), 8: ("loadBalancerIP", "str"),
        9: ("loadBalancerSourceRanges", ("rep", "str")), 10: ("externalName", "str"),
        11: ("externalTrafficPolicy", "str"), 12: ("healthCheckNodePort", "int0"),
        13: ("publishNotReadyAddresses", "bool0"), 17: ("ipFamilyPolicy", "str"),
        18: ("clusterIPs", ("rep", "str")), 19: ("ipFamilies", ("rep", "str")),
        20: ("allocateLoadBalancerNodePorts", "bool"), 21: ("loadBalancerClass", "str"),
        22: ("internalTrafficPolicy", "str"),
    })),
    3: ("status", ("msg", {1: ("loadBalancer", ("msg", {}))})),
}

# ------------------------------------------------- batch/v1 (strict)

_JOB_SPEC: Schema = {
    1: ("parallelism", "int"), 2: ("completions", "int"), 3: ("activeDeadlineSeconds", "int"),
    4: ("selector", ("msg", _LABEL_SELECTOR)), 5: ("manualSelector", "bool"),
    6: ("template", ("msg", _POD_TEMPLATE)), 7: ("backoffLimit", "int"),
    8: ("ttlSecondsAfterFinished", "int"), 9: ("completionMode", "str"),
    10: ("suspend", "bool"),
}
JOB: Schema = {
    1: _META, 2: ("spec", ("msg", _JOB_SPEC)),
    3: ("status", ("msg", {
        2: ("startTime", "time"), 3: ("completionTime", "time"), 4: ("active", "int0"),
        5: ("succeeded", "int0"), 6: ("failed", "int0"), 7: ("completedIndexes", "str"),
        9: ("ready", "int"),
    })),
}
CRON_JOB: Schema = {
    1: _META,
    2: ("spec", ("msg", {
        1: ("schedule", "str"), 2: ("startingDeadlineSeconds", "int"),
        3: ("concurrencyPolicy", "str"), 4: ("suspend", "bool"),
        5: ("jobTemplate", ("msg", {1: _META, 2: ("spec", ("msg", _JOB_SPEC))})),
        6: ("successfulJobsHistoryLimit", "int"), 7: ("failedJobsHistoryLimit", "int"),
        8: ("timeZone", "str"),
    })),
    3: ("status", ("msg", {4: ("lastScheduleTime", "time"),
                           5: ("lastSuccessfulTime", "time")})),
}

# ------------------------------------------------- rbac.authorization.k8s.io/v1 (strict)

_POLICY_RULE: Schema = {
    1: ("verbs", ("rep", "str")), 2: ("apiGroups", ("rep", "str")),
    3: ("resources", ("rep", "str")), 4: ("resourceNames", ("rep", "str")),
    5: ("nonResourceURLs", ("rep", "str")),
}
ROLE: Schema = {1: _META, 2: ("rules", ("rep", ("msg", _POLICY_RULE)))}
_SUBJECT: Schema = {
    1: ("kind", "strk"), 2: ("apiGroup", "str"), 3: ("name", "strk"), 4: ("namespace", "str"),
}
ROLE_BINDING: Schema = {
    1: _META, 2: ("subjects", ("rep", ("msg", _SUBJECT))),
    3: ("roleRef", ("msg", {1: ("apiGroup", "strk"), 2: ("kind", "strk"),
                            3: ("name", "strk")})),
}

TYPE_META: Schema = {1: ("apiVersion", "str"), 2: ("kind", "str")}


_RBAC: Final = "rbac.authorization.k8s.io/v1"


class KindTable(NamedTuple):
    schema: Schema
    strict: bool = False


#: (apiVersion, kind) -> table
KINDS: Final[Mapping[tuple[str, str], KindTable]] = {
    ("v1", "Namespace"): KindTable(NAMESPACE),
    ("v1", "Secret"): KindTable(SECRET),
    ("v1", "ConfigMap"): KindTable(CONFIG_MAP),
    ("v1", "ServiceAccount"): KindTable(SERVICE_ACCOUNT),
    ("v1", "Event"): KindTable(EVENT),
    ("events.k8s.io/v1", "Event"): KindTable(EVENT_V1),
    ("coordination.k8s.io/v1", "Lease"): KindTable(LEASE),
    ("v1", "DeleteOptions"): KindTable(DELETE_OPTIONS),
    ("meta.k8s.io/v1", "DeleteOptions"): KindTable(DELETE_OPTIONS),
    ("", "DeleteOptions"): KindTable(DELETE_OPTIONS),
    ("apps/v1", "Deployment"): KindTable(DEPLOYMENT, strict=True),
    ("v1", "Service"): KindTable(SERVICE, strict=True),
    ("batch/v1", "Job"): KindTable(JOB, strict=True),
    ("batch/v1", "CronJob"): KindTable(CRON_JOB, strict=True),
    (_RBAC, "Role"): KindTable(ROLE, strict=True),
    (_RBAC, "ClusterRole"): KindTable(ROLE, strict=True),
    (_RBAC, "RoleBinding"): KindTable(ROLE_BINDING, strict=True),
    (_RBAC, "ClusterRoleBinding"): KindTable(ROLE_BINDING, strict=True),
}
