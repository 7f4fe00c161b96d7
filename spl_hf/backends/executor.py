"""Where model stages run: ``local`` (this process, the default, no new dependency) or ``ray``.

Both executors compute the same shards with the same worker code and write them to the same
results folder, so their outputs are byte-identical; the Ray executor only spreads the shards over
engine replicas (one actor per replica on Ray Data). No heavy import here: the CLI reads
:class:`ExecutorArgs` for ``--help``.
"""

from __future__ import annotations

import os
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
    replicas: int = field(
        default=1,
        metadata={
            "help": "Engine replicas, each with its own engine: ray actors, or with --executor local, processes "
            "on this machine (1: this process)."
        },
    )
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


def run_local(stage: Any, shards: Sequence[Any], store: Any, replicas: int = 1) -> dict[str, Any]:
    """Compute and write ``shards`` in this process, or over ``replicas`` processes of this machine.

    Replica processes (spawned, each building its own engine once) take the next shard as they
    finish one; every shard is computed by the same code either way, so the bytes do not change.
    """
    from tqdm.auto import tqdm

    from spl_hf.backends.worker import ShardRunner

    total = sum(len(s.items) for s in shards)
    bar = tqdm(total=total, unit="item", desc=stage.kind, disable=not stage.progress)
    done: list[dict[str, Any]] = []  # the shards written
    current = None  # the shard in progress in this process: its journal counts on an interrupt
    runner, outcomes = None, None
    try:
        if replicas == 1:
            runner = ShardRunner(stage, store)
            for current in shards:
                done.append(runner(current, on_items=bar.update))
            current = None
        else:
            outcomes = _on_replicas(stage, shards, store, replicas)
            for got in outcomes:
                done.append(got)
                bar.update(got["items"])
    except KeyboardInterrupt as exc:
        journal = store.journal(stage.kind, current.name) if current is not None else None
        kept = sum(d["items"] for d in done) + (len(journal.load()) if journal is not None else 0)
        raise as_interrupted(exc).counted(kept, total) from None
    finally:
        if outcomes is not None:
            outcomes.close()  # the replica processes end here, whatever ended the stage
        bar.close()
    backend = getattr(getattr(runner, "worker", None), "backend", None)
    return {
        "compute_seconds": round(sum(d["compute"] for d in done), 3),
        "engine_seconds": round(sum(d["engine"] for d in done), 3),
        "write_seconds": round(sum(d["write"] for d in done), 3),
        "resumed": sum(d["resumed"] for d in done),
        "replicas": replicas,
        "forward_calls": getattr(backend, "forward_calls", None),
        "boundary_fallbacks": getattr(backend, "boundary_fallbacks", None),
    }


_replica: Any = None  # a local replica process's ShardRunner, built once by its initializer


def _start_replica(stage: Any, store: Any) -> None:
    import signal

    from spl_hf.backends.worker import ShardRunner

    global _replica
    # Ctrl-C reaches the whole process group: the driver alone handles it, and ends the replicas.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Ended by the driver (SIGTERM): exit through Python, so what the replica registered with
    # multiprocessing's resource tracker (tqdm's lock) is released, not reported leaked at exit.
    signal.signal(signal.SIGTERM, _end_replica)
    _replica = ShardRunner(stage, store)


def _end_replica(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _replica_shard(shard: Any) -> dict[str, Any]:
    return _replica(shard)


def _end_pool(pool: Any, grace_s: float = 20.0) -> None:
    """``pool.terminate()``, and SIGKILL for a replica still alive after ``grace_s``.

    ``terminate`` sends SIGTERM and then joins every replica. A replica that never acts on it (seen
    in the suite: a replica blocked on the task queue's lock while the driver joined it) used to
    hang the driver for good; it is killed instead.
    """
    import threading

    replicas = list(getattr(pool, "_pool", ()))  # the Pool's processes (a private attribute)
    ending = threading.Thread(target=pool.terminate, daemon=True)
    ending.start()
    ending.join(grace_s)
    if ending.is_alive():
        for process in replicas:
            if process.exitcode is None:
                process.kill()
        ending.join()


def _on_replicas(stage: Any, shards: Sequence[Any], store: Any, replicas: int) -> Any:
    """Each shard's outcome as a replica process finishes it; the processes end with the stage."""
    import gc
    import multiprocessing
    import traceback

    pool = multiprocessing.get_context("spawn").Pool(replicas, _start_replica, (stage, store))
    try:
        yield from pool.imap_unordered(_replica_shard, shards, chunksize=1)
        pool.close()
    except BaseException as exc:
        _end_pool(pool)  # an interrupt or a replica's error: no replica outlives the stage
        # The traceback's frames hold the pool (through its result iterator), and the pool and its
        # jobs refer to each other: their locals cleared and the cycle collected, the pool's queue
        # semaphores are released now, not reported leaked when the process exits.
        traceback.clear_frames(exc.__traceback__)
        raise
    finally:
        pool.join()
        del pool
        gc.collect()
