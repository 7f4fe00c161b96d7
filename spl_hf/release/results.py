"""Where a release's model stages keep their results, checked before any model loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_results(cfg: Any, executor: Any) -> tuple[Any, Any]:
    """The release's shard store (``results_dir``, default ``<run_dir>/results``) and executor settings.

    Raises a :class:`~spl_hf.errors.SplHfError` for a folder that cannot be written or holds files
    spl_hf did not write, an unreachable Ray cluster, more GPUs per replica than it has, or a folder
    some Ray node cannot write or the driver cannot read back. A dry run checks the folder could be
    written and the Ray address answers, and leaves nothing behind.
    """
    from spl_hf.backends import ExecutorArgs, ShardStore, check_executor

    executor = executor or ExecutorArgs()
    store = ShardStore(cfg.results_dir or str(Path(cfg.run_dir) / "results"), create=not cfg.dry_run)
    check_executor(executor, store, dry_run=cfg.dry_run)
    return store, executor
