"""One worker protocol and one runner for every model stage.

A worker (the tenet judge, the attribute labeler, the verdict judge, the candidate generator, the
refusal evaluation's generator) declares only its part, in the shape of distilabel's ``Task``:

- ``item_id(item)``: the item's content id, computed without the model;
- ``group(item)``: items that must be computed together (one pair's tenets share a prompt prefix,
  one evaluation batch shares its padding), so one replica always gets the whole group;
- ``order(item)``, ``batch_groups``: the compute order in a shard and the groups per engine call;
- ``compute_batch(items)``: one engine call, a result (or an :class:`InputError`) per item;
- ``output_row(item, result)``: the output row, or :class:`NoResult` with the reason.

The runner owns the rest: it cuts the items into shards fixed by the items themselves (groups
sorted by the hash of their key, ``shard_groups`` per shard), skips the shards the results folder
already holds, has an executor compute the others (``local``: this process; ``ray``: engine replicas
on Ray Data), and reads every shard back into rows, failures and statistics in input order. A
shard's name hashes the stage's settings and its items' ids, so a killed and restarted run, with
any number of workers and either executor, computes only the missing shards and writes the same
bytes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Protocol

from spl_hf.backends.base import InputError
from spl_hf.backends.shards import ShardRecord, ShardStore

STORE_VERSION = 1


@dataclass(frozen=True)
class NoResult:
    """An output the model gave but that is no result (label mass below the floor): recorded, no row."""

    reason: str


class Worker(Protocol):
    kind: ClassVar[str]
    batch_groups: int

    @staticmethod
    def item_id(item: Any) -> str: ...

    @staticmethod
    def group(item: Any) -> str: ...

    @staticmethod
    def describe(item: Any) -> dict[str, Any]: ...

    def order(self, item: Any) -> Any: ...

    def compute_batch(self, items: Sequence[Any]) -> list[Any]: ...

    def output_row(self, item: Any, result: Any) -> dict[str, Any] | NoResult: ...


def one_by_one(compute: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    """``compute_batch`` of a worker that runs one item per engine call; an item's InputError is its result."""
    out: list[Any] = []
    for it in items:
        try:
            out.append(compute(it))
        except InputError as exc:
            out.append(exc)
    return out


@dataclass(frozen=True)
class Shard:
    name: str
    items: tuple[Any, ...]


@dataclass(frozen=True)
class Stage:
    """What the runner needs to know of a stage: the worker class, how to build one, and its settings.

    ``make`` must be picklable (a module-level function or a ``functools.partial`` of one): the Ray
    executor sends it to every replica, which builds its own engine.
    """

    worker: type
    make: Callable[[], Any]
    settings: Mapping[str, Any]
    progress: bool = True

    @property
    def kind(self) -> str:
        return self.worker.kind


def plan_shards(stage: Stage, items: Sequence[Any], shard_groups: int) -> list[Shard]:
    """The shards of ``items``: fixed by the items and settings alone, never by workers or timing."""
    by_group: dict[str, list[Any]] = {}
    for it in items:
        by_group.setdefault(stage.worker.group(it), []).append(it)
    ordered = sorted(by_group, key=lambda g: (hashlib.sha256(g.encode()).hexdigest(), g))
    settings = json.dumps(
        [stage.kind, STORE_VERSION, stage.settings], sort_keys=True, separators=(",", ":"), default=str
    )
    shards = []
    for start in range(0, len(ordered), shard_groups):
        # Within a group items go by id, so neither the input order nor the worker count moves a byte.
        members = tuple(
            it
            for g in ordered[start : start + shard_groups]
            for it in sorted(by_group[g], key=stage.worker.item_id)
        )
        blob = json.dumps([settings, [stage.worker.item_id(it) for it in members]], separators=(",", ":"))
        shards.append(Shard(hashlib.sha256(blob.encode()).hexdigest(), members))
    return shards


def compute_shard(
    worker: Any,
    items: Sequence[Any],
    journal: Any = None,
    on_items: Callable[[int], None] | None = None,
) -> list[ShardRecord]:
    """The records of one shard: groups in the worker's order, ``batch_groups`` groups per engine call.

    With a ``journal`` (:class:`~spl_hf.backends.shards.Journal`) every engine call's records are
    appended to it, and the calls it already holds are skipped: the batches are cut the same way
    every time, so a resumed shard computes exactly the calls an uninterrupted one would have left.
    ``on_items(n)`` is told of each call's ``n`` finished items (the progress bar).
    """
    groups: dict[str, list[Any]] = {}
    for it in sorted(items, key=worker.order):
        groups.setdefault(worker.group(it), []).append(it)
    batches = list(groups.values())
    size = max(1, int(worker.batch_groups))
    kept = journal.load() if journal is not None else {}
    done: dict[str, ShardRecord] = {}
    for start in range(0, len(batches), size):
        batch = [it for g in batches[start : start + size] for it in g]
        ids = [worker.item_id(it) for it in batch]
        if all(i in kept for i in ids):
            done.update((i, kept[i]) for i in ids)
        else:
            records = [
                _record(worker, it, res) for it, res in zip(batch, worker.compute_batch(batch), strict=True)
            ]
            # The last call's records go straight into the shard, which lands next: no journal line.
            if journal is not None and start + size < len(batches):
                journal.append(records)
            done.update((r.item, r) for r in records)
        if on_items is not None:
            on_items(len(batch))
    return [done[worker.item_id(it)] for it in items]


def engine_of(worker: Any) -> dict[str, Any]:
    """The engine (backend, resolved dtype) a worker's results come from, stored with every shard."""
    engine = getattr(worker.backend, "engine", None) or {}
    return {"backend": engine.get("backend"), "dtype": engine.get("dtype")}


def _record(worker: Any, item: Any, result: Any) -> ShardRecord:
    iid = worker.item_id(item)
    if isinstance(result, InputError):
        return ShardRecord(iid, "failed", worker.describe(item), str(result))
    row = worker.output_row(item, result)
    if isinstance(row, NoResult):
        return ShardRecord(iid, "not_judged", worker.describe(item), row.reason)
    return ShardRecord(iid, "ok", row, None)


@dataclass
class StageResult:
    """A stage's outcome in input order: rows, per-item failures and not-judged items, and counts."""

    rows: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    not_judged: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def computed(self) -> int:
        return int(self.stats.get("computed", 0))

    @property
    def cached(self) -> int:
        return int(self.stats.get("cached", 0))


def run_stage(stage: Stage, items: Sequence[Any], store: ShardStore, executor: Any) -> StageResult:
    """Compute the missing shards of ``items`` with ``executor`` (an ExecutorArgs) and read all back."""
    from spl_hf.backends.executor import Interrupted, compute_missing

    t0 = time.perf_counter()
    shards = plan_shards(stage, items, executor.shard_groups)
    have = store.finished(stage.kind)
    todo = [s for s in shards if s.name not in have]
    try:
        timing = compute_missing(stage, todo, store, executor) if todo else {}
    except Interrupted as exc:  # counted over the whole stage: the cached shards are kept too
        raise exc.counted(
            len(items) - sum(len(s.items) for s in todo) + (exc.kept or 0), len(items)
        ) from None
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
    # Items a shard-local journal kept from an interrupted run count as cached: no model ran for them.
    n_todo = sum(len(s.items) for s in todo) - int(timing.get("resumed") or 0)
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
    from spl_hf.backends.executor import ExecutorArgs

    stage = Stage(type(worker), partial(_loaded, worker), settings, progress)
    return run_stage(stage, items, store, ExecutorArgs(shard_groups=shard_groups))


def _loaded(worker: Any) -> Any:
    return worker
