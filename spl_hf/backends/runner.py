"""Running a stage: plan its shards, compute the missing ones on an executor, read every shard back.

Sits above the worker protocol (:mod:`spl_hf.backends.worker`), the result store
(:mod:`spl_hf.backends.shards`) and both executors (:mod:`spl_hf.backends.executor`,
:mod:`spl_hf.backends.ray_executor`), which import nothing from here: that is what keeps the
dispatch free of import cycles.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from spl_hf.backends.executor import ExecutorArgs, run_local
from spl_hf.backends.shards import ShardRecord, ShardStore
from spl_hf.backends.worker import Stage, StageResult, plan_shards


def check_executor(cfg: ExecutorArgs) -> None:
    """Errors before any model loads: Ray missing or unreachable, more GPUs per replica than the cluster has."""
    if cfg.executor == "ray":
        from spl_hf.backends.ray_executor import connect

        connect(cfg)


def compute_missing(stage: Any, shards: Sequence[Any], store: Any, cfg: ExecutorArgs) -> dict[str, Any]:
    """Compute and write ``shards``; returns timing (seconds computing and writing shards)."""
    if cfg.executor == "ray":
        from spl_hf.backends.ray_executor import run_on_ray

        return run_on_ray(stage, shards, store, cfg)
    return run_local(stage, shards, store)


def run_stage(stage: Stage, items: Sequence[Any], store: ShardStore, executor: Any) -> StageResult:
    """Compute the missing shards of ``items`` with ``executor`` (an ExecutorArgs) and read all back."""
    t0 = time.perf_counter()
    shards = plan_shards(stage, items, executor.shard_groups)
    have = store.finished(stage.kind)
    todo = [s for s in shards if s.name not in have]
    timing = compute_missing(stage, todo, store, executor) if todo else {}
    records: dict[str, ShardRecord] = {}
    engine: dict[str, Any] = {}
    for s in shards:
        got, engine = store.read(stage.kind, s.name)
        records.update((r.item, r) for r in got)
    rows, failures, not_judged = [], [], []
    for it in items:
        r = records.get(stage.worker.item_id(it))
        if r is None:
            raise RuntimeError(f"{stage.kind}: item {stage.worker.describe(it)} is in no finished shard")
        if r.status == "ok":
            rows.append(r.row)
        else:
            (failures if r.status == "failed" else not_judged).append({**(r.row or {}), "reason": r.reason})
    n_todo = sum(len(s.items) for s in todo)
    stats = {
        "computed": n_todo,
        "cached": len(items) - n_todo,
        "shards": len(shards),
        "shards_computed": len(todo),
        "seconds": round(time.perf_counter() - t0, 3),
        **timing,
    }
    stats["engine"] = engine
    return StageResult(rows, failures, not_judged, stats)


def run_worker(
    worker: Any,
    items: Sequence[Any],
    store: ShardStore,
    settings: Mapping[str, Any],
    progress: bool = True,
    shard_groups: int = 16,
) -> StageResult:
    """:func:`run_stage` for a worker already built in this process (its model is loaded): the local executor."""
    stage = Stage(type(worker), partial(_loaded, worker), settings, progress)
    return run_stage(stage, items, store, ExecutorArgs(shard_groups=shard_groups))


def _loaded(worker: Any) -> Any:
    return worker
