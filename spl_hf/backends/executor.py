"""Where model stages run: ``local`` (this process, the default, no new dependency) or ``ray``.

Both executors compute the same shards with the same worker code and write them to the same
results folder, so their outputs are byte-identical; the Ray executor only spreads the shards over
engine replicas (one actor per replica on Ray Data). No heavy import here: the CLI reads
:class:`ExecutorArgs` for ``--help``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from spl_hf.errors import SplHfError


class ExecutorError(SplHfError):
    """An executor setting that cannot work (an unreachable cluster, more GPUs than it has)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a run; ``kept`` of ``total`` items of the stage are on disk.

    A KeyboardInterrupt, so that no ``except Exception`` on the way up swallows it; the CLI prints
    its one line and exits 128 + the signal number (130 for SIGINT, 143 for SIGTERM).
    """

    def __init__(self, signum: int = 2, kept: int | None = None, total: int | None = None) -> None:
        super().__init__(signum, kept, total)
        self.signum, self.kept, self.total = signum, kept, total

    def counted(self, kept: int, total: int) -> Interrupted:
        return Interrupted(self.signum, kept, total)

    def __str__(self) -> str:
        if self.kept is None:
            return "interrupted before any item was computed; rerun to resume"
        return f"interrupted: {self.kept} of {self.total} kept; rerun to resume"


def as_interrupted(exc: KeyboardInterrupt) -> Interrupted:
    return exc if isinstance(exc, Interrupted) else Interrupted()


@dataclass
class ExecutorArgs:
    """Executor (where model stages run)"""

    executor: Literal["local", "ray"] = field(
        default="local",
        metadata={
            "help": "local: this process (no new dependency); ray: engine replicas on Ray Data (the [ray] "
            "extra), on a local Ray runtime or the cluster at --ray_address. Same output bytes either way."
        },
    )
    replicas: int = field(default=1, metadata={"help": "ray: engine replicas (one actor each)."})
    cpus_per_replica: float = field(default=1.0, metadata={"help": "ray: CPUs reserved per replica."})
    gpus_per_replica: float = field(
        default=0.0, metadata={"help": "ray: GPUs per replica (tensor_parallel_size for a split vLLM model)."}
    )
    ray_address: str | None = field(
        default=None,
        metadata={
            "help": "ray: the cluster to join (e.g. 10.0.0.1:6379; default: $RAY_ADDRESS, else a local "
            "Ray runtime starts on this machine)."
        },
    )
    shard_groups: int = field(
        default=16,
        metadata={
            "help": "Work groups (a pair with all its tenets, a prompt) per result shard. Shards are fixed "
            "by the items, so a resumed run reuses every finished shard whatever its worker count."
        },
    )

    def __post_init__(self) -> None:
        if self.executor not in ("local", "ray"):
            raise ExecutorError(f"--executor must be local or ray, got {self.executor!r}")
        for name in ("replicas", "shard_groups"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ExecutorError(f"--{name} must be a positive integer, got {value!r}")
        if self.cpus_per_replica <= 0:
            raise ExecutorError(f"--cpus_per_replica must be > 0, got {self.cpus_per_replica!r}")
        if self.gpus_per_replica < 0:
            raise ExecutorError(f"--gpus_per_replica must be >= 0, got {self.gpus_per_replica!r}")

    @property
    def address(self) -> str | None:
        return self.ray_address or os.environ.get("RAY_ADDRESS") or None


def run_local(stage: Any, shards: Sequence[Any], store: Any) -> dict[str, Any]:
    from tqdm.auto import tqdm

    from spl_hf.backends.worker import compute_shard, engine_of

    worker = stage.make()
    compute_s = write_s = 0.0
    journal = None
    resumed = 0  # items a journal held: computed before an interrupt, not again
    kept = 0  # items on disk: finished shards, and the journal of the one in progress
    bar = tqdm(
        total=sum(len(s.items) for s in shards), unit="item", desc=stage.kind, disable=not stage.progress
    )
    try:
        for shard in shards:
            journal = store.journal(stage.kind, shard.name)
            resumed += len(journal.load()) if journal is not None else 0
            t0 = time.perf_counter()
            records = compute_shard(worker, shard.items, journal, on_items=bar.update)
            t1 = time.perf_counter()
            store.write(stage.kind, shard.name, records, engine_of(worker))
            kept += len(shard.items)
            compute_s += t1 - t0
            write_s += time.perf_counter() - t1
    except KeyboardInterrupt as exc:
        in_flight = len(journal.load()) if journal is not None else 0
        raise as_interrupted(exc).counted(kept + in_flight, bar.total) from None
    finally:
        bar.close()
    return {
        "compute_seconds": round(compute_s, 3),
        "write_seconds": round(write_s, 3),
        "resumed": resumed,
        "forward_calls": getattr(getattr(worker, "backend", None), "forward_calls", None),
        "boundary_fallbacks": getattr(getattr(worker, "backend", None), "boundary_fallbacks", None),
    }
