"""`spl-hf assign`: min-cost-flow assignment of judged pairs to tenets, and its verification.

    spl-hf assign --scores scores.parquet --capacity 4000 --output_dir assignment.parquet --json
    spl-hf assign verify --scores scores.parquet --assignment assignment.parquet

The assignment (one row per assigned pair: pair_id, prompt_id, tenet, score) is written to --output_dir
(parquet or jsonl by extension) and its optimality certificate to ``<out>.certificate.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from spl_hf.errors import SplHfError

_DESCRIPTION = (
    "Split eligible judged pairs (|score| >= threshold) across tenets by maximum flow of minimum cost "
    "(cost -|score|): each pair in at most one tenet, each prompt at most once, exactly --capacity "
    "pairs per kept tenet. Writes the assignment to --output_dir (a .parquet or .jsonl file) and its "
    "certificate to <output_dir>.certificate.json. 'verify' re-checks an assignment and its certificate from the score file "
    "alone, without a solver (exit code 1 when the check fails)."
)


def add_parser(
    subparsers: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None
) -> None:
    from spl_hf.configs import add_config_parser
    from spl_hf.recipes import kind_classes

    p = add_config_parser(
        subparsers,
        name,
        kind_classes("assign"),  # AssignFiles, AssignConfig, OutputArgs, JsonArgs: what a recipe may set
        help=help_text,
        description=_DESCRIPTION,
    )
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
        ASSIGNMENT_SUFFIXES,
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

    if getattr(args, "capacity", None) is None:
        raise SplHfError("--capacity is required to solve")
    files, config, output, js = configs_from_args(args)
    out = output.output_dir
    if not out:
        raise SplHfError("--output_dir is required to solve: the assignment file (.parquet or .jsonl)")
    if Path(out).suffix.lower() not in ASSIGNMENT_SUFFIXES:
        raise SplHfError(f"--output_dir {out}: unsupported extension; use .parquet or .jsonl")
    cert_out = files.certificate or str(certificate_path(out))
    # Before any work: never replace an input or a file this command did not write.
    guard_file(out, overwrite=output.overwrite, inputs=[files.scores])
    guard_file(cert_out, overwrite=output.overwrite, inputs=[files.scores, out])
    t0 = time.perf_counter()
    scores = encode_scores(read_table(files.scores), source=files.scores)
    read_seconds = time.perf_counter() - t0
    result = assign_tenets(scores, config)
    t0 = time.perf_counter()
    check = verify_certificate(scores, result)
    verify_seconds = time.perf_counter() - t0
    write_table(result.assignment, out)
    write_certificate(result.certificate, cert_out)
    summary = {
        **result.summary(),
        "certificate_ok": check.ok,
        "certificate_failures": list(check.failures),
        "out": out,
        "certificate": cert_out,
        "seconds": {
            "read_validate": round(read_seconds, 3),
            **{k: round(v, 3) for k, v in result.timings.items() if k != "validate"},
            "verify": round(verify_seconds, 3),
        },
    }
    _print(summary, js.json)
    return 0 if check.ok else 1


def _verify(args: argparse.Namespace) -> int:
    from spl_hf.assign import (
        AssignFiles,
        certificate_path,
        encode_scores,
        read_certificate,
        read_table,
        verify_assignment,
    )
    from spl_hf.configs import JsonArgs, configs_from_args

    files, js = configs_from_args(args, [AssignFiles, JsonArgs])  # validates the file arguments
    if not files.assignment:
        raise SplHfError("--assignment is required to verify")
    cert_path = files.certificate or str(certificate_path(files.assignment))
    cert = read_certificate(cert_path)
    assignment = read_table(files.assignment)
    check = verify_assignment(encode_scores(read_table(files.scores), source=files.scores), assignment, cert)
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
    _print(summary, js.json)
    if not check.ok and not js.json:
        print("certificate check FAILED", file=sys.stderr)
    return 0 if check.ok else 1


def run(args: argparse.Namespace) -> int:
    return _verify(args) if args.action == "verify" else _solve(args)
