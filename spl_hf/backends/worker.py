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
    items: Sequence[Any]


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


class ItemView(Sequence):
    """A shard's items, taken from the stage's items by index on first use (the plan holds indices only).

    ``ids`` are their item ids when the items give them cheaply; sent to a Ray replica it is a tuple.
    """

    def __init__(
        self, items: Sequence[Any], members: Any, ids: Callable[[], list[str]] | None = None
    ) -> None:
        self._items, self._members, self._ids = items, members, ids
        self._taken: tuple[Any, ...] | None = None

    def _all(self) -> tuple[Any, ...]:
        if self._taken is None:  # once: the runner keys results by the objects' identity
            self._taken = tuple(self._items[int(i)] for i in self._members)
        return self._taken

    def __len__(self) -> int:
        return len(self._members)

    def __getitem__(self, k: Any) -> Any:
        return self._all()[k]

    def __iter__(self) -> Any:
        return iter(self._all())

    @property
    def ids(self) -> list[str] | None:
        return None if self._ids is None else self._ids()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Sent to another process (a Ray actor, a local replica). Items that can cut out the part a
        # shard needs (``subset``: a judge shard's 16 pairs, not its 784 items) go as that part, and
        # the replica builds the items and hashes their ids the cheap way; others go built, with ids.
        subset = getattr(self._items, "subset", None)
        if subset is not None:
            return (item_view, subset(self._members))
        return (TakenItems, (self._all(), self.ids))


def item_view(items: Sequence[Any], members: Any) -> ItemView:
    """The items at ``members``, with their ids hashed the items' cheap way where they offer one."""
    hook = getattr(items, "item_ids", None)
    return ItemView(items, members, None if hook is None else partial(hook, members))


class TakenItems(tuple):
    """A shard's items as another process receives them: a tuple, with the ids computed where planned."""

    ids: list[str] | None

    def __new__(cls, items: Sequence[Any], ids: list[str] | None = None) -> TakenItems:
        out = super().__new__(cls, items)
        out.ids = ids
        return out


@dataclass(frozen=True)
class ShardPlan:
    """The shards of a stage's items: names, and each shard's item indices (into the items) in shard order.

    Only names and indices are held (about 8 bytes per item), never the items or their ids, so a plan
    of millions of items stays small; :meth:`shard` builds one shard's items when it is computed.
    """

    settings: str  # the JSON every shard name hashes with its item ids
    names: list[str]
    offsets: Any  # numpy int64, len(names) + 1
    members: Any  # numpy int64: item indices, shard after shard
    items: Sequence[Any]

    def __len__(self) -> int:
        return len(self.names)

    def indices(self, k: int) -> Any:
        return self.members[self.offsets[k] : self.offsets[k + 1]]

    def shard(self, k: int) -> Shard:
        return Shard(self.names[k], item_view(self.items, self.indices(k)))

    def name_of(self, ids: Sequence[str]) -> str:
        """The name of a shard whose items have these ids, in this order."""
        return _shard_name(self.settings, ids)


class PlannedShards(Sequence):
    """Some shards of a plan, built one at a time as an executor takes them."""

    def __init__(self, plan: ShardPlan, which: Sequence[int]) -> None:
        self.plan, self.which = plan, list(which)

    def __len__(self) -> int:
        return len(self.which)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self.plan.shard(j) for j in self.which[k]]
        return self.plan.shard(self.which[k])

    def __iter__(self) -> Any:
        return (self.plan.shard(j) for j in self.which)


def _shard_name(settings: str, ids: Sequence[str]) -> str:
    blob = json.dumps([settings, list(ids)], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _groups(worker: Any, items: Sequence[Any]) -> Any:
    """(group key, item indices in input order) for every group; items may list them cheaply themselves."""
    hook = getattr(items, "group_members", None)
    if hook is not None:
        return hook()
    by_group: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        by_group.setdefault(worker.group(it), []).append(i)
    return by_group.items()


def _ids(worker: Any, items: Sequence[Any], members: Sequence[int]) -> list[str]:
    hook = getattr(items, "item_ids", None)  # hashed once per group (a pair's text once for all its tenets)
    return hook(members) if hook is not None else [worker.item_id(items[i]) for i in members]


def plan_stage(stage: Stage, items: Sequence[Any], shard_groups: int) -> ShardPlan:
    """The shards of ``items``: fixed by the items and settings alone, never by workers or timing.

    Groups go by the hash of their key, ``shard_groups`` per shard; within a group items go by id,
    so neither the input order nor the worker count moves a byte. Each item id is computed once.
    """
    import numpy as np

    groups = sorted(
        _groups(stage.worker, items), key=lambda g: (hashlib.sha256(g[0].encode()).hexdigest(), g[0])
    )
    settings = json.dumps(
        [stage.kind, STORE_VERSION, stage.settings], sort_keys=True, separators=(",", ":"), default=str
    )
    names: list[str] = []
    offsets = [0]
    members = np.empty(len(items), np.int64)
    at = 0
    for start in range(0, len(groups), shard_groups):
        ids: list[str] = []
        for _, group in groups[start : start + shard_groups]:
            gids = _ids(stage.worker, items, group)
            order = sorted(range(len(gids)), key=gids.__getitem__)
            members[at : at + len(order)] = [group[k] for k in order]
            at += len(order)
            ids.extend(gids[k] for k in order)
        names.append(_shard_name(settings, ids))
        offsets.append(at)
    return ShardPlan(settings, names, np.asarray(offsets, np.int64), members[:at], items)


def plan_shards(stage: Stage, items: Sequence[Any], shard_groups: int) -> list[Shard]:
    """:func:`plan_stage` as a list of shards (their items taken on first use)."""
    plan = plan_stage(stage, items, shard_groups)
    return [plan.shard(k) for k in range(len(plan))]


def compute_shard(
    worker: Any,
    items: Sequence[Any],
    journal: Any = None,
    on_items: Callable[[int], None] | None = None,
    tally: dict[str, float] | None = None,
) -> list[ShardRecord]:
    """The records of one shard: groups in the worker's order, ``batch_groups`` groups per engine call.

    With a ``journal`` (:class:`~spl_hf.backends.shards.Journal`) every engine call's records are
    appended to it, and the calls it already holds are skipped: the batches are cut the same way
    every time, so a resumed shard computes exactly the calls an uninterrupted one would have left.
    ``on_items(n)`` is told of each call's ``n`` finished items (the progress bar). ``tally`` gets
    ``resumed``, the records the journal held, and ``engine``, the seconds spent in
    ``worker.compute_batch`` (prompts and the model: the engine's share).
    """
    ids = getattr(items, "ids", None)  # an ItemView's ids: hashed the plan's cheap way
    if ids is None:
        ids = [worker.item_id(it) for it in items]
    id_of = {id(it): iid for it, iid in zip(items, ids, strict=True)}
    groups: dict[str, list[Any]] = {}
    for it in sorted(items, key=worker.order):
        groups.setdefault(worker.group(it), []).append(it)
    batches = list(groups.values())
    size = max(1, int(worker.batch_groups))
    kept = journal.load() if journal is not None else {}
    if tally is not None:
        tally["resumed"] = len(kept)
    done: dict[str, ShardRecord] = {}
    for start in range(0, len(batches), size):
        batch = [it for g in batches[start : start + size] for it in g]
        bids = [id_of[id(it)] for it in batch]
        if all(i in kept for i in bids):
            done.update((i, kept[i]) for i in bids)
        else:
            t0 = time.perf_counter()
            results = worker.compute_batch(batch)
            if tally is not None:
                tally["engine"] = tally.get("engine", 0.0) + time.perf_counter() - t0
            records = [_record(worker, *r) for r in zip(bids, batch, results, strict=True)]
            # The last call's records go straight into the shard, which lands next: no journal line.
            if journal is not None and start + size < len(batches):
                journal.append(records)
            done.update((r.item, r) for r in records)
        if on_items is not None:
            on_items(len(batch))
    return [done[iid] for iid in ids]


class ShardRunner:
    """One engine replica: builds its worker once, then computes and writes one shard per call.

    The one loop body of every executor: this process (``local``), a local replica process
    (``local`` with ``replicas`` > 1) and a Ray actor all run their shards through it.
    """

    def __init__(self, stage: Any, store: Any) -> None:
        self.stage, self.store = stage, store
        self.worker = stage.make()

    def __call__(self, shard: Any, on_items: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Compute and write ``shard``: its name and item count, seconds computing, in the engine, writing."""
        kind = self.stage.kind
        journal = self.store.journal(kind, shard.name)
        tally: dict[str, float] = {"engine": 0.0, "resumed": 0}
        t0 = time.perf_counter()
        records = compute_shard(self.worker, shard.items, journal, on_items=on_items, tally=tally)
        t1 = time.perf_counter()
        self.store.write(kind, shard.name, records, engine_of(self.worker))
        return {
            "name": shard.name,
            "items": len(records),
            "resumed": int(tally["resumed"]),
            "compute": t1 - t0,
            "engine": tally["engine"],
            "write": time.perf_counter() - t1,
        }


def engine_of(worker: Any) -> dict[str, Any]:
    """The engine (backend, resolved dtype) a worker's results come from, stored with every shard."""
    engine = getattr(worker.backend, "engine", None) or {}
    return {"backend": engine.get("backend"), "dtype": engine.get("dtype")}


def _record(worker: Any, iid: str, item: Any, result: Any) -> ShardRecord:
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
