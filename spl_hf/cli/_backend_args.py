"""Arguments shared by the model-backed subcommands (model, judge, label, generate)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", default=None, help="Hub id or local folder (default: the embedded SmolLM2-135M)"
    )
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 measured fastest on 2 cores)")
    p.add_argument(
        "--max-length", type=int, default=None, help="token limit per input (default: model context)"
    )
    p.add_argument("--backend", choices=("hf", "vllm"), default="hf", help="vllm needs the [vllm] extra")


def add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", required=True, help="sqlite result cache; reruns skip what it already holds")
    p.add_argument("--out", required=True, help="output file (.parquet or .jsonl)")
    p.add_argument("--limit", type=int, default=None, help="only the first N input rows")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")


def load_backend(args: argparse.Namespace, **kw: Any) -> Any:
    from spl_hf.backends import make_backend

    return make_backend(args.backend, args.model, threads=args.threads, max_length=args.max_length, **kw)


def report(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        for k, v in summary.items():
            if not isinstance(v, (list, dict)):
                print(f"{k}: {v}")
        for f in summary.get("failures", [])[:20]:
            print(f"  failed: {f}", file=sys.stderr)


def failures_path(out: str) -> str:
    return f"{out}.failures.jsonl"


def write_outputs(out: str, rows: list[dict[str, Any]], failures: list[dict[str, Any]]) -> str | None:
    """Write the rows, and the failures beside them (removing a stale failures file when none)."""
    from pathlib import Path

    from spl_hf.backends.io import write_rows

    write_rows(out, rows)
    fpath = failures_path(out)
    if failures:
        write_rows(fpath, failures)
        return fpath
    Path(fpath).unlink(missing_ok=True)
    return None
