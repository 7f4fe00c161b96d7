"""Data parallelism over processes: each rank takes a shard, results meet in the shared cache.

Under ``accelerate launch`` (or torchrun) ``WORLD_SIZE`` > 1 and accelerate's ``PartialState`` splits
the work; a plain single process needs no process group at all.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, TypeVar

T = TypeVar("T")


class Ranks:
    def __init__(self) -> None:
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self._state: Any = None
        if self.world > 1:
            import torch
            from accelerate import PartialState

            # Without an accelerator accelerate only forms a (gloo) group when told it runs on CPU. A
            # rank waits for the slowest shard at the final barrier, hence the long timeout.
            cpu = (
                os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true")
                or not torch.cuda.is_available()
            )
            self._state = PartialState(cpu=cpu, timeout=timedelta(hours=72))

    @property
    def rank(self) -> int:
        return 0 if self._state is None else int(self._state.process_index)

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def shard(self, items: Sequence[T]) -> list[T]:
        """This rank's contiguous share (accelerate's split_between_processes; all items when alone)."""
        if self._state is None:
            return list(items)
        with self._state.split_between_processes(list(items)) as part:
            return list(part)

    def wait(self) -> None:
        if self._state is not None:
            self._state.wait_for_everyone()
