"""The Ray executor: a stage's missing shards as a Ray dataset, each engine replica an actor.

One row per shard goes through ``Dataset.map_batches`` with :class:`ShardActor`, a callable class
that builds its engine once (``Stage.make``) and then computes and writes whole shards, one per
call. Ray Data balances the shards over ``replicas`` actors and, by default, restarts an actor that
dies and retries its task (``max_restarts=-1``, ``max_task_retries=-1``); a retried shard writes the
same bytes under the same name. The driver loads no model.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Sequence
from typing import Any

from spl_hf.backends.executor import ExecutorArgs, ExecutorError


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError("--executor ray needs the ray extra: pip install 'spl_hf[ray]'") from None
    return ray


def _probe(address: str, timeout_s: float = 10.0) -> None:
    """Fail fast on a ``host:port`` nobody listens on (``ray.init`` would keep retrying for minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return  # "auto", "ray://..." and the like: left to ray.init
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ExecutorError(f"--ray_address {address}: cannot connect to the Ray cluster ({exc})") from None


def connect(cfg: ExecutorArgs) -> Any:
    """Join ``cfg.address`` (or start a local runtime) and check the replicas fit; returns ``ray``."""
    ray = _ray()
    if not ray.is_initialized():
        address = cfg.address
        if address:
            _probe(address)
        try:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(include_dashboard=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = address or "a local runtime"
            raise ExecutorError(f"--ray_address {where}: cannot connect to the Ray cluster ({exc})") from None
    total = ray.cluster_resources()
    for what, need in (("GPU", cfg.gpus_per_replica), ("CPU", cfg.cpus_per_replica)):
        have = float(total.get(what, 0.0))
        if need > have:
            raise ExecutorError(
                f"--{what.lower()}s_per_replica {need:g}: the Ray cluster has {have:g} {what}s in all"
            )
    return ray


class ShardActor:
    """One engine replica: builds its worker once, then computes and writes one shard per row."""

    def __init__(self, stage: Any, store: Any) -> None:
        self.stage = stage
        self.store = store
        self.worker = stage.make()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        from spl_hf.backends.worker import compute_shard, engine_of

        names, compute_s, write_s = [], [], []
        for blob in batch["shard"]:
            shard = pickle.loads(blob)
            t0 = time.perf_counter()
            records = compute_shard(self.worker, shard.items)
            t1 = time.perf_counter()
            self.store.write(self.stage.kind, shard.name, records, engine_of(self.worker))
            names.append(shard.name)
            compute_s.append(t1 - t0)
            write_s.append(time.perf_counter() - t1)
        return {"name": np.array(names), "compute": np.array(compute_s), "write": np.array(write_s)}


def run_on_ray(stage: Any, shards: Sequence[Any], store: Any, cfg: ExecutorArgs) -> dict[str, Any]:
    ray = connect(cfg)
    t0 = time.perf_counter()
    rows = [{"shard": pickle.dumps(s)} for s in shards]
    ds = ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
        ShardActor,
        fn_constructor_kwargs={"stage": stage, "store": store},
        batch_size=1,
        # A fixed pool (Ray 2.51 replaced ``concurrency`` by ``compute``); one shard in flight per actor,
        # so an idle replica takes the next shard instead of queueing behind a slow one.
        compute=ray.data.ActorPoolStrategy(size=cfg.replicas, max_tasks_in_flight_per_actor=1),
        num_cpus=cfg.cpus_per_replica,
        num_gpus=cfg.gpus_per_replica or None,
    )
    done = ds.take_all()
    missing = {s.name for s in shards} - {r["name"] for r in done}
    if missing:
        raise RuntimeError(f"ray: {len(missing)} shard(s) came back unwritten: {sorted(missing)[:3]}")
    return {
        "compute_seconds": round(sum(r["compute"] for r in done), 3),
        "write_seconds": round(sum(r["write"] for r in done), 3),
        "ray_seconds": round(time.perf_counter() - t0, 3),
    }
