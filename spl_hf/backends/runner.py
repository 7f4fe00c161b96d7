"""Running a stage: plan its shards, compute the missing ones on an executor, read every shard back.

Sits above the worker protocol (:mod:`spl_hf.backends.worker`), the result store
(:mod:`spl_hf.backends.shards`) and both executors (:mod:`spl_hf.backends.executor`,
:mod:`spl_hf.backends.ray_executor`), which import nothing from here: that is what keeps the
dispatch free of import cycles.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from spl_hf.backends.executor import ExecutorArgs, Interrupted, run_local
from spl_hf.backends.shards import ResultsFolderError, ShardStore
from spl_hf.backends.worker import PlannedShards, ShardPlan, Stage, StageResult, plan_stage


def check_executor(cfg: ExecutorArgs, store: Any = None, dry_run: bool = False) -> None:
    """Errors before any model loads: Ray missing or unreachable, more GPUs per replica than the cluster
    has, a results folder (``store``) some node cannot write or the driver cannot read back.

    ``dry_run``: only what needs no Ray runtime here: Ray importable, the address answering.
    """
    if cfg.executor != "ray":
        return
    from spl_hf.backends import ray_executor

    if dry_run:
        ray_executor.check_reachable(cfg)
        return
    ray = ray_executor.connect(cfg)
    if store is not None:
        ray_executor.probe_nodes(ray, store)


def compute_missing(stage: Any, shards: Sequence[Any], store: Any, cfg: ExecutorArgs) -> dict[str, Any]:
    """Compute and write ``shards``; returns timing (seconds computing and writing shards).

    Raises :class:`~spl_hf.backends.executor.Interrupted` (counting the items kept among ``shards``)
    on Ctrl-C or SIGTERM.
    """
    if cfg.executor == "ray":
        from spl_hf.backends.ray_executor import run_on_ray

        timing = run_on_ray(stage, shards, store, cfg)
    else:
        timing = run_local(stage, shards, store, cfg.replicas)
    store.refresh(stage.kind)  # other processes wrote the shards: a listing cached before is stale
    return timing


@dataclass
class StageRun:
    """A stage whose missing shards are computed: its plan, counts, and its shards read back in plan order."""

    stage: Stage
    plan: ShardPlan
    store: ShardStore
    stats: dict[str, Any]
    started: float = 0.0  # perf_counter at the start; ``seconds`` counts to the end of the read-back

    def tables(self, threads: int = 4, ahead: int = 32, parse: Callable[..., Any] | None = None) -> Any:
        """(item indices, shard table) per shard, in plan order; shards are read ``threads`` at a time.

        With ``parse``, ``parse(indices, table, path)`` is yielded instead, computed on the reading
        thread (Arrow's readers release the GIL, so the parsing of several shards overlaps).

        Each table's ``item`` column is checked against the shard's name, which hashes the planned
        items' ids in order, so the i-th record belongs to the i-th planned item without a lookup.
        Records: ``item``, ``status`` (ok / failed / not_judged), ``row`` (JSON) and ``reason``.
        """
        from concurrent.futures import ThreadPoolExecutor

        kind, plan = self.stage.kind, self.plan

        def read(k: int) -> tuple[Any, Any]:
            table, engine = self.store.read_table(kind, plan.names[k])
            ids = table.column("item").to_pylist()
            if len(ids) != len(plan.indices(k)) or plan.name_of(ids) != plan.names[k]:
                raise ResultsFolderError(
                    f"{self.store.path(kind, plan.names[k])}: its records are not the items its name "
                    "hashes (a damaged or foreign shard); remove it to have it computed again"
                )
            if parse is not None:
                return parse(plan.indices(k), table, self.store.path(kind, plan.names[k])), None, engine
            return plan.indices(k), table, engine

        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            pending: list[Any] = []
            for k in range(len(plan)):
                pending.append(pool.submit(read, k))
                if len(pending) > ahead:  # bounded read-ahead: memory stays a few shards
                    yield self._took(pending.pop(0).result())
            for fut in pending:
                yield self._took(fut.result())

    def _took(self, got: tuple[Any, Any, dict[str, Any]]) -> tuple[Any, Any]:
        self.stats["engine"] = got[2]  # the engine of the last shard read, as the stage reports it
        return got[0] if got[1] is None else (got[0], got[1])


def start_stage(stage: Stage, items: Sequence[Any], store: ShardStore, executor: Any) -> StageRun:
    """Plan ``items``, compute the missing shards with ``executor`` (an ExecutorArgs); read back with ``tables``."""
    t0 = time.perf_counter()
    plan = plan_stage(stage, items, executor.shard_groups)
    have = store.finished(stage.kind)
    todo = PlannedShards(plan, [k for k, name in enumerate(plan.names) if name not in have])
    n_todo = int(sum(len(plan.indices(k)) for k in todo.which))
    try:
        timing = compute_missing(stage, todo, store, executor) if len(todo) else {}
    except Interrupted as exc:  # counted over the whole stage: the cached shards are kept too
        raise exc.counted(len(items) - n_todo + (exc.kept or 0), len(items)) from None
    # Items a shard-local journal kept from an interrupted run count as cached: no model ran for them.
    n_todo -= int(timing.get("resumed") or 0)
    stats = {
        "computed": n_todo,
        "cached": len(items) - n_todo,
        "shards": len(plan),
        "shards_computed": len(todo),
        "seconds": round(time.perf_counter() - t0, 3),
        **timing,
        "engine": {},
    }
    return StageRun(stage, plan, store, stats, t0)


def run_stage(stage: Stage, items: Sequence[Any], store: ShardStore, executor: Any) -> StageResult:
    """Compute the missing shards of ``items`` with ``executor`` (an ExecutorArgs) and read all back.

    Rows as Python dicts in input order: for stages of thousands of items. The judge stage of a
    release streams its shards into columns instead (:mod:`spl_hf.backends.score_columns`).
    """
    run = start_stage(stage, items, store, executor)
    records: list[Any] = [None] * len(items)
    for idx, table in run.tables():
        cols = [table.column(c).to_pylist() for c in ("status", "row", "reason")]
        for i, status, row, reason in zip(idx.tolist(), *cols, strict=True):
            records[i] = (status, row, reason)
    rows, failures, not_judged = [], [], []
    for status, row, reason in records:
        if status == "ok":
            rows.append(json.loads(row))
        else:
            extra = {} if row is None else json.loads(row)
            (failures if status == "failed" else not_judged).append({**extra, "reason": reason})
    run.stats["seconds"] = round(time.perf_counter() - run.started, 3)
    engine = run.stats.pop("engine")
    return StageResult(rows, failures, not_judged, {**run.stats, "engine": engine})


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
