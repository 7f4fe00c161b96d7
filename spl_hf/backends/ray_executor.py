"""The Ray executor: a stage's missing shards as a Ray dataset, each engine replica an actor.

One row per shard goes through ``Dataset.map_batches`` with :class:`ShardActor`, a callable class
that builds its engine once (``Stage.make``) and then computes and writes whole shards, one per
call. Ray Data balances the shards over ``replicas`` actors and, by default, restarts an actor that
dies and retries its task (``max_restarts=-1``, ``max_task_retries=-1``); a retried shard writes the
same bytes under the same name. The driver loads no model.

Before any model loads, every live node writes a probe file into the results folder and the driver
reads each one back (:func:`probe_nodes`): a folder a node cannot write, or one that is not the
driver's (a node-local disk), is refused up front, not after the judge stage.

A local runtime (no ``--ray_address``) listens on 127.0.0.1 only: Ray replaces a loopback node
address by the machine's routable one (and listens there) unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``
is 0, which this module sets before it imports Ray. Ray's token authentication (on by default for
a local ``ray.init`` in recent Ray) guards the rest; docs/card_scale.md says how to confine a test
cluster to loopback.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Sequence
from typing import Any

from spl_hf.backends.executor import ExecutorArgs, ExecutorError, as_interrupted
from spl_hf.backends.shards import ResultsFolderError


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


def check_reachable(cfg: ExecutorArgs) -> None:
    """A dry run's check: Ray importable and the cluster's address answering, no runtime started."""
    _ray()  # importing starts nothing
    if cfg.address:
        _probe(cfg.address)


def connect(cfg: ExecutorArgs) -> Any:
    """Join ``cfg.address`` (or start a local runtime) and check the replicas fit; returns ``ray``."""
    address = cfg.address
    if not address:
        # Ray replaces 127.0.0.1 by this machine's routable address and its servers listen there
        # unless this is off; read when ray is imported, so it only helps a process that has not.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray = _ray()
    if not ray.is_initialized():
        if address:
            _probe(address)
        try:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                # Advertise loopback only: nothing outside this machine is told where to connect.
                ray.init(include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
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


def _write_probe(store: Any, node_id: str) -> str:
    return store.write_probe(node_id)  # ``store`` arrives attached: it refuses a folder without marker


def probe_nodes(ray: Any, store: Any, timeout_s: float = 120.0) -> None:
    """Every live node writes a probe into ``store`` and the driver reads it back, before any model loads."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    task = ray.remote(num_cpus=0, max_retries=1)(_write_probe)
    refs = [
        (
            n,
            task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(
                store, n["NodeID"]
            ),
        )
        for n in nodes
    ]
    for node, ref in refs:
        where = f"Ray node {node.get('NodeManagerAddress')} ({node['NodeID'][:8]})"
        try:
            name = ray.get(ref, timeout=timeout_s)
        except ray.exceptions.GetTimeoutError:
            raise ExecutorError(
                f"{where}: no answer to the results-folder probe in {timeout_s:g} s"
            ) from None
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None) or exc
            raise ResultsFolderError(f"{where}: {cause}") from None
        if store.take_probe(name) != node["NodeID"]:
            raise ResultsFolderError(
                f"{store.url}: the probe file {where} wrote there is not in the driver's folder; use a "
                "results folder every node shares (NFS, s3://, gs://)"
            )


class ShardActor:
    """One engine replica on Ray: a :class:`~spl_hf.backends.worker.ShardRunner` per actor, one shard per row."""

    def __init__(self, stage: Any, store: Any) -> None:
        from spl_hf.backends.worker import ShardRunner

        self.run = ShardRunner(stage, store)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        done = [self.run(pickle.loads(blob)) for blob in batch["shard"]]
        return {k: np.array([d[k] for d in done]) for k in ("name", "compute", "engine", "write", "resumed")}


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
    try:
        done = ds.take_all()
    except KeyboardInterrupt as exc:
        landed = store.finished(stage.kind)
        kept = sum(len(s.items) for s in shards if s.name in landed)
        raise as_interrupted(exc).counted(kept, sum(len(s.items) for s in shards)) from None
    missing = {s.name for s in shards} - {r["name"] for r in done}
    if missing:
        raise RuntimeError(f"ray: {len(missing)} shard(s) came back unwritten: {sorted(missing)[:3]}")
    return {
        "compute_seconds": round(sum(r["compute"] for r in done), 3),
        "engine_seconds": round(sum(r["engine"] for r in done), 3),
        "write_seconds": round(sum(r["write"] for r in done), 3),
        "resumed": int(sum(r["resumed"] for r in done)),
        "ray_seconds": round(time.perf_counter() - t0, 3),
    }
