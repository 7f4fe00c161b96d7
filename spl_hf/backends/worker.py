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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from spl_hf.backends.base import InputError
from spl_hf.backends.shards import ShardRecord

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


def compute_shard(worker: Any, items: Sequence[Any]) -> list[ShardRecord]:
    """The records of one shard: groups in the worker's order, ``batch_groups`` groups per engine call."""
    groups: dict[str, list[Any]] = {}
    for it in sorted(items, key=worker.order):
        groups.setdefault(worker.group(it), []).append(it)
    batches = list(groups.values())
    size = max(1, int(worker.batch_groups))
    results: dict[int, Any] = {}
    for start in range(0, len(batches), size):
        batch = [it for g in batches[start : start + size] for it in g]
        for it, res in zip(batch, worker.compute_batch(batch), strict=True):
            results[id(it)] = res
    return [_record(worker, it, results[id(it)]) for it in items]


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
