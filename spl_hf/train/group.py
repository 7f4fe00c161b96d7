"""The process group of a multi-process CPU (gloo) run, made with the recipe's ``ddp_timeout``.

``TrainingArguments`` hands ``ddp_timeout`` to the process group on accelerators only: with
``use_cpu`` its device set-up creates the gloo group with torch's 30-minute default, so a rank
whose peer had exited waited half an hour in a collective or a store read (issue 34). Here the
arguments are parsed once with the launcher's rank variables hidden (no group is made then), and
for a CPU run the group is created with ``ddp_timeout`` before the real parse, whose device set-up
finds it initialized and keeps it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any

# What torchrun / accelerate launch set for each rank; without them accelerate makes no group.
_RANK_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def launched_ranks() -> int:
    """The world size the launcher announced (1 when not launched as several processes)."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 1


def init_cpu_group(parse: Callable[[], tuple[Any, Any, Any]]) -> None:
    """Create a CPU run's gloo group with ``ddp_timeout``; a no-op for one process, a GPU run, or
    when a group exists. ``parse`` returns (script, training, model) arguments."""
    import torch.distributed as dist
    from accelerate.state import AcceleratorState, PartialState

    if launched_ranks() <= 1 or dist.is_initialized():
        return
    hidden = {k: os.environ.pop(k) for k in _RANK_ENV if k in os.environ}
    try:
        _, training_args, _ = parse()
    finally:
        os.environ.update(hidden)
        AcceleratorState._reset_state(reset_partial_state=True)  # the one-process state of that parse
    if training_args.use_cpu:
        PartialState(
            cpu=True, backend=training_args.ddp_backend, timeout=timedelta(seconds=training_args.ddp_timeout)
        )


# A rank's trainer, kept past ``main`` (see :func:`end_rank`).
_KEPT: list[Any] = []


def keep_until_exit(trainer: Any) -> None:
    """Hold a launched rank's trainer until :func:`end_rank` ends the process. Freeing it frees the
    DDP reducer, whose gloo group (already destroyed by ``trainer.end()``, so the reducer holds the last
    reference) is then destroyed with the GIL held: its destructor joins gloo's worker thread, which
    may at that moment be freeing the last barrier's work, whose tensors need the GIL. Rank 1 of the
    two-rank test hung there about 1 run in 12 (py-spy: ``~ProcessGroupGloo`` -> ``thread::join`` in
    the main thread, ``~AsyncBarrierWork`` -> ``gil_scoped_acquire`` in the worker)."""
    if launched_ranks() > 1:
        _KEPT.append(trainer)


def end_rank(code: int) -> int:
    """``code`` for one process; a launched rank whose trainer was kept ends here with ``os._exit``
    (stdio flushed), after its outputs are written and sealed and every rank passed the last barrier,
    so the interpreter never frees the gloo group."""
    if not _KEPT:
        return code
    import logging
    import sys

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
