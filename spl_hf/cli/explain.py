"""`spl-hf explain`: why one row of a release says what it says, from the release alone."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import JsonArgs, RevisionArgs, add_config_parser
    from spl_hf.explain import ExplainArgs

    p = add_config_parser(
        sub,
        name,
        (ExplainArgs, RevisionArgs, JsonArgs),
        help=help_text,
        description="Show one row's derivation from the release's own files (no model, no solver). Tenet "
        "rows: the prompt and both responses, the tenet's statement, P(A) in each ordering and the label "
        "mass, the score formula with its numbers, the threshold, the pair's scores on the other tenets "
        "and the assignment certificate's potentials and reduced costs for its prompt. SPL rows: the "
        "prompt and response attributes with their producers, the rules that fired, verdicts, ranks and "
        "the label or the reason there is none. Ends with the audit's verdict on the row.",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spl_hf.configs import configs_from_args
    from spl_hf.explain import explain, render

    ex_args, rev, js = configs_from_args(args)
    out = explain(ex_args.path, ex_args.row, revision=rev.revision, clip=ex_args.clip, audit=ex_args.audit)
    print(
        json.dumps(out, indent=2, ensure_ascii=False) if js.json else render(out), end="\n" if js.json else ""
    )
    return 0
