"""`spl-hf release`: each release from its sources to a published dataset, in resumable stages.

    spl-hf release tenets --config recipes/tenets/demo.yaml
    spl-hf release spl --config recipes/spl/paper.yaml --dry_run

``builders/tenet_dpo.py`` and ``builders/spl_safety.py`` run the same commands.
"""

from __future__ import annotations

import argparse
import json
import sys

RELEASES = {
    "tenets": (
        "spl_hf.release.tenets",
        "per-tenet judge-scored DPO: pools -> decontaminate -> judge -> "
        "assign -> dataset -> audit -> publish",
    ),
    "spl": (
        "spl_hf.release.spl",
        "SPL safety pairs: prompts -> decontaminate -> generate -> label -> "
        "derive -> audit -> publish (or recorded attributes -> derive -> audit -> publish)",
    ),
}


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str, action: str | None = None) -> None:
    from spl_hf.configs import add_config_parser
    from spl_hf.recipes import kind_classes

    p = sub.add_parser(name, help=help_text, description=help_text)
    rsub = p.add_subparsers(dest="release", metavar="RELEASE", required=True)
    for release, (module, description) in RELEASES.items():
        if action is not None and release != action:
            rsub.add_parser(release, help=description)  # listed; its settings are read only when it runs
            continue
        r = add_config_parser(
            rsub,
            release,
            kind_classes(release),  # the release's recipe kind has the same name
            help=description,
            description=f"{description}. A rerun skips finished stages (keyed by the content of their inputs "
            "and their settings); killed model work resumes from the run's caches. --dry_run validates the "
            "inputs and prints the stage plan without a model. With --repo_id the last stage publishes "
            "(to --revision, default main).",
        )
        r.set_defaults(func=run, _release_module=module)


def run(args: argparse.Namespace) -> int:
    import importlib

    from spl_hf.configs import configs_from_args

    module = importlib.import_module(args._release_module)
    release = module.make_release(*configs_from_args(args))
    try:
        report = release.run()
    except RuntimeError as exc:  # the build's own audit or certificate failed: nothing was published
        print(f"spl-hf release: {exc}", file=sys.stderr)
        return 1
    if release.cfg.dry_run or not report:  # a dry run printed its plan; ranks other than 0 print nothing
        return 0
    stages = {
        s["name"]: ("skipped" if s["skipped"] else f"{s['seconds']:.1f} s") for s in report.get("stages", [])
    }
    print(json.dumps({"output_dir": report.get("output_dir"), "stages": stages}, indent=2))
    return 0
