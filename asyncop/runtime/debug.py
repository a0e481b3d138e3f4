"""The debug endpoint's answer: why did (or didn't) this object reconcile, and what did it do?

`GET /debug/reconciles?kind=K&namespace=NS&name=N` (`asyncop debug K/N -n NS` prints it)
answers, for every running controller whose primary kind is K (kubectl's spellings: `At`,
`at`, `ats`, `ats.cnat.programming-kubernetes.info`; `controller=` picks one by name):

- the object as this replica's cache has it (present or not, resourceVersion, generation);
- who owns the key: the leader (leader election), the shard and its holder (sharding), or
  this replica (neither);
- its queue state now: queued, being reconciled by worker W (or waiting for its own writes,
  with the writes), backing off after errors until T, requeued for T, or idle;
- its last reconciles (`asyncop.runtime.observe.ReconcileRecord`): when, trigger, queue
  wait, duration, outcome, error, what it wrote (objects and Events), trace id;
- `summary`: one line that answers the question, e.g. "backing off until 12:00:05 (in 4.2s)
  after 3 failed reconciles; last error: ...".

Without `name`, it lists the controllers and what they hold. Everything is read from memory
at request time (the queue's state, the observer's rings); nothing here runs per reconcile.
Invariant: the answer is a pure read; an unknown kind or a missing parameter is a 400/404
with a one-line `error`, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from asyncop.api import Kind, RawObject, Request
from asyncop.clock import Clock
from asyncop.runtime.observe import Observer, describe_trigger, writes_list
from asyncop.runtime.workqueue import WorkQueue

Answer = tuple[int, dict[str, Any]]


class Debuggable(Protocol):
    """What the endpoint reads from a controller (`asyncop.runtime.controller.Controller`)."""

    name: str
    primary: Kind | None
    workers: int
    queue: WorkQueue[Request] | None
    observer: Observer | None


class CacheView(Protocol):
    def get(self, kind: Kind, name: str, namespace: str | None = None) -> RawObject | None: ...


def kind_matches(kind: Kind, text: str) -> bool:
    """Whether `text` names `kind` as kubectl would accept it."""
    t = text.strip().lower()
    names = {kind.kind.lower(), kind.plural.lower(), kind.resource.lower()}
    if kind.group:
        names |= {f"{kind.kind.lower()}.{kind.group}", f"{kind.plural}.{kind.version}.{kind.group}",
                  f"{kind.kind.lower()}.{kind.version}.{kind.group}"}
    return t in names


def _at(clock: Clock, monotonic: float) -> datetime:
    """The wall-clock time of a monotonic instant."""
    return clock.now() + timedelta(seconds=monotonic - clock.monotonic())


ShardOwner = Callable[[str], dict[str, Any]]


def ownership(*, leader_election: Any, elector: Any, leading: bool, shards: Any,
              shard_manager: Any) -> tuple[dict[str, Any], ShardOwner | None]:
    """Who owns a key on this Manager: (the owner fields, `shard_owner(uid)` if sharded)."""
    if leader_election is not None:
        leader = elector.leader if elector is not None else ""
        return {"mode": "leader-election",
                "lease": f"{leader_election.namespace}/{leader_election.name}",
                "leader": leader or None, "thisReplica": leading}, None
    if shards is None or shard_manager is None:
        return {"mode": "single", "thisReplica": True}, None

    def shard_owner(uid: str) -> dict[str, Any]:
        shard = shards.shard_of(uid)
        return {"shard": shard, "heldHere": shard in shards.held,
                "assignedTo": shard_manager.assignment.get(shard)}

    return {"mode": "sharding", "group": shard_manager.config.name}, shard_owner


class Explainer:
    """Builds the endpoint's answers for one Manager (`owner` says who owns a key)."""

    def __init__(self, *, controllers: Sequence[Debuggable], running: Sequence[str],
                 cache: CacheView, clock: Clock, replica: str,
                 owner: Mapping[str, Any], shard_owner: ShardOwner | None = None) -> None:
        self.controllers = controllers
        self.running = set(running)
        self.cache = cache
        self.clock = clock
        self.replica = replica
        self.owner = dict(owner)
        self.shard_owner = shard_owner
        """`shard_owner(uid) -> dict` for a sharded Manager, else None."""

    def answer(self, query: Mapping[str, str]) -> Answer:
        kind_text = query.get("kind", "")
        name = query.get("name", "")
        wanted = query.get("controller", "")
        chosen = [c for c in self.controllers
                  if (not wanted or c.name == wanted)
                  and (not kind_text or (c.primary is not None
                                         and kind_matches(c.primary, kind_text)))]
        if not name:
            if kind_text or wanted:
                if not chosen:
                    return self._unknown(kind_text, wanted)
            return 200, {"replica": self.replica, "owner": self.owner,
                         "controllers": [self._overview(c) for c in chosen]}
        if not kind_text and not wanted:
            return 400, {"error": "say which object: kind= (or controller=) and name="}
        if not chosen:
            return self._unknown(kind_text, wanted)
        kind = chosen[0].primary
        namespace = query.get("namespace", "")
        if kind is not None and kind.namespaced and not namespace:
            return 400, {"error": f"{kind.kind} is namespaced: give namespace="}
        if kind is not None and not kind.namespaced:
            namespace = ""
        request = Request(name, namespace)
        obj = self.cache.get(kind, name, namespace or None) if kind is not None else None
        body: dict[str, Any] = {
            "kind": kind.kind if kind is not None else "",
            "namespace": namespace, "name": name, "key": request.key,
            "replica": self.replica, "now": self.clock.now().isoformat(),
            "inCache": obj is not None,
        }
        if obj is not None:
            meta = obj.get("metadata") or {}
            body["resourceVersion"] = meta.get("resourceVersion")
            if meta.get("generation") is not None:
                body["generation"] = meta.get("generation")
            if meta.get("deletionTimestamp"):
                body["deletionTimestamp"] = meta.get("deletionTimestamp")
        owner = dict(self.owner)
        if self.shard_owner is not None:
            uid = (obj.get("metadata") or {}).get("uid") if obj is not None else None
            owner.update(self.shard_owner(uid) if uid else {"shard": None})
        body["owner"] = owner
        body["controllers"] = [self._explain(c, request, obj, owner) for c in chosen]
        return 200, body

    def _unknown(self, kind_text: str, wanted: str) -> Answer:
        known = ", ".join(f"{c.name} ({c.primary.kind if c.primary else '-'})"
                          for c in self.controllers) or "none"
        what = f"controller {wanted!r}" if wanted and not kind_text else f"kind {kind_text!r}"
        return 404, {"error": f"no controller here reconciles {what}; controllers: {known}"}

    def _overview(self, c: Debuggable) -> dict[str, Any]:
        out: dict[str, Any] = {"controller": c.name, "running": c.name in self.running,
                               "kind": c.primary.kind if c.primary else None,
                               "workers": c.workers}
        queue = c.queue
        if queue is not None and c.name in self.running:
            out.update(queued=len(queue), processing=queue.processing, delayed=queue.delayed)
        if c.observer is not None:
            out["keysWithHistory"] = c.observer.keys
            out["reconciling"] = sorted(c.observer.active)
        return out

    def _explain(self, c: Debuggable, request: Request, obj: RawObject | None,
                 owner: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"controller": c.name, "running": c.name in self.running,
                               "workers": c.workers}
        observer = c.observer
        records = observer.history_of(request.key) if observer is not None else []
        state = self._state(c, request) if c.name in self.running else {}
        out["state"] = state
        out["reconciles"] = [r.to_dict(self.clock) for r in records]
        if observer is None:
            out["note"] = "no history: the Manager runs without debug_endpoints"
        out["summary"] = self._summary(c, state, records, obj, owner)
        return out

    def _state(self, c: Debuggable, request: Request) -> dict[str, Any]:
        queue = c.queue
        if queue is None:
            return {}
        ks = queue.state(request)
        state: dict[str, Any] = {"queued": ks.queued, "processing": ks.processing,
                                 "requeuedWhileProcessing": ks.requeued,
                                 "requeues": ks.requeues}
        if ks.queued:
            state["queueDepth"] = len(queue)
        if ks.priority is not None:  # queued, requeued or delayed: its place in the queue
            state["priority"] = ks.priority
        active = c.observer.active.get(request.key) if c.observer is not None else None
        if ks.processing and active is not None:
            now = self.clock.monotonic()
            state.update(worker=active.worker, phase=active.phase,
                         since=_at(self.clock, active.phase_since).isoformat(),
                         forSeconds=round(now - active.phase_since, 3),
                         reconcileID=active.reconcile_id, trigger=active.trigger)
            if active.waiting_for is not None:
                state["waitingForOwnWrites"] = writes_list(active.waiting_for)
        if ks.delayed_until is not None:
            reason, text = describe_trigger(ks.delayed_why)
            state["delayed"] = {
                "until": _at(self.clock, ks.delayed_until).isoformat(),
                "inSeconds": round(max(0.0, ks.delayed_until - self.clock.monotonic()), 3),
                "reason": reason, "why": text}
        return state

    def _summary(self, c: Debuggable, state: Mapping[str, Any], records: list[Any],
                 obj: RawObject | None, owner: Mapping[str, Any]) -> str:
        if c.name not in self.running:
            if owner.get("mode") == "leader-election" and not owner.get("thisReplica"):
                leader = owner.get("leader") or "unknown"
                return f"not running here: this replica stands by; the leader is {leader}"
            return "not running here (not started, or stopped)"
        if owner.get("mode") == "sharding" and owner.get("shard") is not None \
                and not owner.get("heldHere"):
            holder = owner.get("assignedTo") or "another replica"
            return f"not this replica's: shard {owner['shard']} belongs to {holder}"
        if state.get("processing"):
            since = state.get("forSeconds", 0.0)
            if state.get("phase") == "waiting for own writes":
                writes = state.get("waitingForOwnWrites") or []
                return (f"waiting {since:g}s for the cache to see its own {len(writes)} "
                        f"write(s) before reconciling (worker {state.get('worker')})")
            return f"being reconciled by worker {state.get('worker')} for {since:g}s"
        if state.get("queued"):
            return (f"queued, waiting for a free worker (queue depth "
                    f"{state.get('queueDepth', 0)})")
        delayed = state.get("delayed")
        last = records[-1] if records else None
        if delayed is not None:
            when = f"{delayed['until']} (in {delayed['inSeconds']:g}s)"
            if delayed["reason"] == "retry":
                error = f"; last error: {last.error}" if last is not None and last.error \
                    else ""
                return (f"backing off until {when} after {state.get('requeues', 0)} failed "
                        f"reconcile(s){error}")
            return f"requeued: next reconcile at {when}"
        if last is not None:
            verdict = "succeeded" if last.outcome in ("success", "requeue_after", "requeue") \
                else f"ended {last.outcome}"
            if last.error:
                verdict += f" ({last.error})"
            return (f"idle: the last reconcile ({last.started(self.clock).isoformat()}) "
                    f"{verdict}; "
                    "the next one comes with a change to it or to what it watches")
        if obj is None:
            return ("never reconciled here, and not in this replica's cache: check the kind, "
                    "namespace and name (or the --namespace the operator watches)")
        return ("no reconcile recorded: none since this replica started (or its history was "
                "dropped for keys reconciled more recently)")
