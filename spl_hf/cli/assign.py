"""`spl-hf assign`: min-cost-flow assignment of judged pairs to tenets, and its verification.

    spl-hf assign --scores scores.parquet --capacity 4000 --out assignment.parquet --json
    spl-hf assign verify --scores scores.parquet --assignment assignment.parquet

The assignment (one row per assigned pair: pair_id, prompt_id, tenet, score) is written to --out
(parquet or jsonl by extension) and its optimality certificate to ``<out>.certificate.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

_DESCRIPTION = (
    "Split eligible judged pairs (|score| >= threshold) across tenets by maximum flow of minimum cost "
    "(cost -|score|): each pair in at most one tenet, each prompt at most once, exactly --capacity "
    "pairs per kept tenet. Writes the assignment to --out and its certificate to "
    "<out>.certificate.json. 'verify' re-checks an assignment and its certificate from the score file "
    "alone, without a solver (exit code 1 when the check fails)."
)


OUTPUT_SUFFIXES = (".parquet", ".jsonl", ".ndjson")


@dataclass
class AssignFiles:
    """The files of `spl-hf assign` (its solver settings are :class:`spl_hf.assign.AssignConfig`)."""

    scores: str = field(metadata={"help": "Score table (.parquet/.jsonl): pair_id, prompt_id, tenet, score."})
    out: str | None = field(default=None, metadata={"help": "solve: output assignment (.parquet/.jsonl)."})
    assignment: str | None = field(default=None, metadata={"help": "verify: assignment file to check."})
    certificate: str | None = field(
        default=None, metadata={"help": "Certificate file (default: <assignment>.certificate.json)."}
    )
    overwrite: bool = field(
        default=False, metadata={"help": "Replace an existing --out and certificate (never an input)."}
    )

    def __post_init__(self) -> None:
        for name in ("out", "assignment"):
            value = getattr(self, name)
            if value is not None and Path(value).suffix.lower() not in OUTPUT_SUFFIXES:
                raise ValueError(f"--{name} {value}: unsupported extension; use .parquet or .jsonl")


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.assign.config import AssignConfig
    from spl_hf.configs import add_config_parser

    p = add_config_parser(
        subparsers, name, (AssignConfig, AssignFiles), help=help_text, description=_DESCRIPTION
    )
    p.add_argument("action", nargs="?", choices=("solve", "verify"), default="solve", help="default: solve")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def _print(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary, indent=2))
        return
    for key, value in summary.items():
        if isinstance(value, list) and len(value) > 8:
            value = f"{len(value)} items"
        print(f"{key}: {value}")


def _solve(args: argparse.Namespace) -> int:
    from spl_hf.assign import (
        assign_tenets,
        certificate_path,
        encode_scores,
        read_table,
        verify_certificate,
        write_certificate,
        write_table,
    )
    from spl_hf.configs import configs_from_args
    from spl_hf.outputs import guard_file

    if args.capacity is None:
        raise ValueError("--capacity is required to solve")
    if not args.out:
        raise ValueError("--out is required to solve")
    config, files = configs_from_args(args)
    cert_out = files.certificate or str(certificate_path(files.out))
    # Before any work: never replace an input or a file this command did not write.
    guard_file(files.out, overwrite=files.overwrite, inputs=[files.scores])
    guard_file(cert_out, overwrite=files.overwrite, inputs=[files.scores, files.out])
    t0 = time.perf_counter()
    scores = encode_scores(read_table(args.scores), source=args.scores)
    read_seconds = time.perf_counter() - t0
    result = assign_tenets(scores, config)
    t0 = time.perf_counter()
    check = verify_certificate(scores, result)
    verify_seconds = time.perf_counter() - t0
    write_table(result.assignment, args.out)
    write_certificate(result.certificate, cert_out)
    summary = {
        **result.summary(),
        "certificate_ok": check.ok,
        "certificate_failures": list(check.failures),
        "out": args.out,
        "certificate": cert_out,
        "seconds": {
            "read_validate": round(read_seconds, 3),
            **{k: round(v, 3) for k, v in result.timings.items() if k != "validate"},
            "verify": round(verify_seconds, 3),
        },
    }
    _print(summary, args.json)
    return 0 if check.ok else 1


def _verify(args: argparse.Namespace) -> int:
    from spl_hf.assign import certificate_path, encode_scores, read_certificate, read_table, verify_assignment
    from spl_hf.configs import configs_from_args

    configs_from_args(args, [AssignFiles])  # validates the file arguments
    if not args.assignment:
        raise ValueError("--assignment is required to verify")
    cert_path = args.certificate or str(certificate_path(args.assignment))
    cert = read_certificate(cert_path)
    assignment = read_table(args.assignment)
    check = verify_assignment(encode_scores(read_table(args.scores), source=args.scores), assignment, cert)
    summary = {
        "certificate_ok": check.ok,
        "failures": list(check.failures),
        "assigned": assignment.num_rows,
        "objective": cert.objective,
        "tenets_kept": list(cert.kept_tenets),
        "tenets_dropped": [{"tenet": d.tenet, "reason": d.reason} for d in cert.dropped_tenets],
        "capacity": cert.capacity,
        "threshold": cert.threshold,
        "seed": cert.seed,
        "scale": cert.scale,
        "strategy": cert.strategy,
        "solver": cert.solver,
        "residual_arcs_checked": check.residual_arcs,
        "min_reduced_cost": check.min_reduced_cost,
        "certificate": cert_path,
    }
    _print(summary, args.json)
    if not check.ok and not args.json:
        print("certificate check FAILED", file=sys.stderr)
    return 0 if check.ok else 1


def run(args: argparse.Namespace) -> int:
    return _verify(args) if args.action == "verify" else _solve(args)
