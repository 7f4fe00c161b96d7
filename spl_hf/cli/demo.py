"""`spl-hf demo`: the main job on the embedded defaults, everything under one output folder."""

from __future__ import annotations

import argparse
from pathlib import Path

DEMO_KIND = "demo"


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import OutputDirArgs, add_config_parser

    p = add_config_parser(
        sub,
        name,
        (OutputDirArgs,),
        defaults={"output_dir": "out/demo"},
        help=help_text,
        description=f"{help_text}. output_dir must be new, empty, or an earlier demo's (which it resumes).",
    )
    p.set_defaults(func=run)


def _earlier_demo(out: Path) -> bool:
    from spl_hf.outputs import marker_kind

    return marker_kind(out) == DEMO_KIND


def run(args: argparse.Namespace) -> int:
    from spl_hf.configs import configs_from_args
    from spl_hf.outputs import guard_dir, mark_output, refuse_dangerous, seal_output

    (output,) = configs_from_args(args)
    out = Path(output.output_dir)
    # A rerun resumes in the demo's own folder (its caches make it fast); any other folder must be
    # new or empty, so the demo never writes among a user's files. Resuming deletes nothing, and
    # what the marker does not vouch for when the demo starts is never claimed as the demo's.
    if _earlier_demo(out):
        refuse_dangerous(out)
    else:
        guard_dir(out)
    mark_output(out, DEMO_KIND)

    from spl_hf.demo import run_demo
    from spl_hf.outputs import OutputError

    try:
        code = run_demo(str(out))
    except OutputError as exc:
        # The release guards inside name --overwrite, which `spl-hf demo` does not take: a copied or
        # edited demo folder is not the demo's own any more.
        said = str(exc).split("; pass --overwrite", 1)[0]
        raise OutputError(
            f"{said}; spl-hf demo resumes only in the folder it wrote (it has no --overwrite): give it a new "
            f"--output_dir, or remove {out} first"
        ) from None
    seal_output(out)
    return code
