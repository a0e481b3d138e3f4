"""The asyncop runtime: clock-driven work queue, informers, controllers and the Manager.

One concept per module; the public names are exported by `asyncop` itself (the one door),
this package re-exports nothing. Reading order and what each module holds:

- `reconcile`: the contract (`Result`, `Reconciler`, `TerminalError`, `reconciler`);
- `handlers`: what enqueues a controller's Requests (`for_`, `owns`, `watches`, predicates);
- `controller`: workers that reconcile Requests from a `workqueue.WorkQueue`; what each
  outcome means is `outcome`;
- `informer` + `store` + `listeners`: list+watch into an indexed cache, event delivery;
  `cache`: one informer per kind, shared; `ownwrites`: read-your-own-writes;
- `manager`: owns client, cache, controllers, `leader` election, `recorder` (Events),
  `metrics`, `health` probes and their `server`; `shards`/`sharding`/`shardgate`: sharding;
- `ratelimit`, `rbac`, `logs`: the smaller parts (label selectors are `asyncop.api.labels`).
"""
