"""What the model-backed subcommands (judge, label, generate) share: their parser and their checks.

Every setting is a dataclass field, validated in ``__post_init__``; the subcommands also check
their output paths, the result cache and their inputs before a model is loaded, so a bad
argument never costs a model load.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from spl_hf.backends import ModelArgs, RunArgs, check_row_suffix
from spl_hf.configs import JsonArgs, OutputArgs
from spl_hf.errors import SplHfError


def add_backend_parser(
    sub: argparse._SubParsersAction, name: str, inputs: type, worker: type, **kwargs: Any
) -> argparse.ArgumentParser:
    """A model-backed subcommand: its inputs, its worker's own config (e.g. ``JudgeConfig``, whose
    ``progress`` field gives ``--no_progress``), the model and run settings, ``--config`` and ``--json``."""
    from spl_hf.backends import ExecutorArgs
    from spl_hf.configs import add_config_parser

    classes = (inputs, worker, ModelArgs, RunArgs, ExecutorArgs, OutputArgs, JsonArgs)
    return add_config_parser(sub, name, classes, **kwargs)


def failures_path(out: str) -> str:
    return f"{out}.failures.jsonl"


def prepare_run(
    run: RunArgs,
    output: OutputArgs,
    inputs: list[str | None],
    extra_outputs: tuple[str | None, ...] = (),
    executor: Any = None,
) -> tuple[str, Any]:
    """Check every output path, the results folder and the executor before any model loads.

    Returns the output file and the opened results folder (a :class:`~spl_hf.backends.ShardStore`).
    """
    from spl_hf.backends import ShardStore, check_executor
    from spl_hf.outputs import OutputError, guard_file

    if not output.output_dir:
        raise SplHfError("--output_dir is required: the output file (.parquet or .jsonl)")
    check_row_suffix("output_dir", output.output_dir)
    given = [i for i in inputs if i]
    outputs = [output.output_dir, failures_path(output.output_dir), *[o for o in extra_outputs if o]]
    for i, out in enumerate(outputs):
        guard_file(out, overwrite=output.overwrite, inputs=given + outputs[:i] + [run.cache])
    for other in given:
        if Path(other).resolve() == Path(run.cache).resolve():
            raise OutputError(
                f"--cache {run.cache}: the results folder is also an input; choose another path"
            )
    store = ShardStore(run.cache)
    if executor is not None:
        check_executor(executor, store)
    return output.output_dir, store


def report(as_json: bool, summary: dict[str, Any]) -> None:
    if as_json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        for k, v in summary.items():
            if isinstance(v, dict):  # counts per key (per tenet): one line, every count shown
                print(f"{k}: " + (", ".join(f"{a} {b}" for a, b in v.items()) or "none"))
            elif not isinstance(v, list):
                print(f"{k}: {v}")
        for f in summary.get("failures", [])[:20]:
            print(f"  failed: {f}", file=sys.stderr)


def write_outputs(out: str, rows: list[dict[str, Any]], failures: list[dict[str, Any]]) -> str | None:
    """Write the rows, and the failures beside them (removing a stale failures file when none).

    The paths were checked by :func:`prepare_run` before the run.
    """
    from spl_hf.backends import write_rows

    write_rows(out, rows)
    fpath = failures_path(out)
    if failures:
        write_rows(fpath, failures)
        return fpath
    Path(fpath).unlink(missing_ok=True)
    return None
