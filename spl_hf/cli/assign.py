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
from dataclasses import fields

_DESCRIPTION = (
    "Split eligible judged pairs (|score| >= threshold) across tenets by maximum flow of minimum cost "
    "(cost -|score|): each pair in at most one tenet, each prompt at most once, exactly --capacity "
    "pairs per kept tenet. Writes the assignment to --out and its certificate to "
    "<out>.certificate.json. 'verify' re-checks an assignment and its certificate from the score file "
    "alone, without a solver (exit code 1 when the check fails)."
)


def _help(name: str) -> str:
    from spl_hf.assign.config import AssignConfig

    return next(f.metadata["help"] for f in fields(AssignConfig) if f.name == name)


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from spl_hf.assign.config import DEFAULT_STRATEGY, SOLVERS, STRATEGIES

    p = subparsers.add_parser(name, help=help_text, description=_DESCRIPTION)
    p.add_argument("action", nargs="?", choices=("solve", "verify"), default="solve", help="default: solve")
    p.add_argument(
        "--scores", required=True, help="score table (.parquet/.jsonl): pair_id, prompt_id, tenet, score"
    )
    p.add_argument("--capacity", type=int, help=_help("capacity") + " Required for solve.")
    p.add_argument("--threshold", type=float, default=0.5, help=_help("threshold"))
    p.add_argument("--solver", choices=SOLVERS, default="ortools", help=_help("solver"))
    p.add_argument("--seed", type=int, default=42, help=_help("seed"))
    p.add_argument("--scale", type=int, default=1_000_000, help=_help("scale"))
    p.add_argument("--strategy", choices=STRATEGIES, default=DEFAULT_STRATEGY, help=_help("strategy"))
    p.add_argument("--tie-range", type=int, default=None, help=_help("tie_range"))
    p.add_argument("--out", help="solve: output assignment (.parquet/.jsonl)")
    p.add_argument("--assignment", help="verify: assignment file to check")
    p.add_argument("--certificate", help="certificate file (default: <assignment>.certificate.json)")
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
        AssignConfig,
        assign_tenets,
        certificate_path,
        encode_scores,
        read_table,
        verify_certificate,
        write_certificate,
        write_table,
    )

    if args.capacity is None:
        raise ValueError("--capacity is required to solve")
    if not args.out:
        raise ValueError("--out is required to solve")
    config = AssignConfig(
        capacity=args.capacity,
        threshold=args.threshold,
        solver=args.solver,
        seed=args.seed,
        scale=args.scale,
        strategy=args.strategy,
        tie_range=args.tie_range,
    )
    t0 = time.perf_counter()
    scores = encode_scores(read_table(args.scores), source=args.scores)
    read_seconds = time.perf_counter() - t0
    result = assign_tenets(scores, config)
    t0 = time.perf_counter()
    check = verify_certificate(scores, result)
    verify_seconds = time.perf_counter() - t0
    cert_out = args.certificate or str(certificate_path(args.out))
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
