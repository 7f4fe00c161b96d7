"""Entry points of the builder scripts: parse the recipe, run the stages, one clear error on bad input."""

from __future__ import annotations

import json
import sys


def _run(kind: str, argv: list[str] | None) -> int:
    from spl_hf.outputs import OutputError

    try:
        if kind == "tenet_dpo":
            from spl_hf.release.tenet_dpo import TenetRelease, parse_recipe

            cfg, assign, judge, decontam = parse_recipe(argv)
            release = TenetRelease(cfg, assign, judge, decontam)
        else:
            from spl_hf.release.spl_safety import SPLRelease, parse_recipe

            cfg, generation, decontam = parse_recipe(argv)
            release = SPLRelease(cfg, generation, decontam)
        report = release.run()
    except (ValueError, FileNotFoundError, KeyError, OutputError) as exc:
        print(f"{kind}: error: {exc}", file=sys.stderr)
        return 2
    if cfg.dry_run:
        return 0
    stages = {s["name"]: ("skipped" if s["skipped"] else f"{s['seconds']:.1f} s") for s in report.get("stages", [])}
    print(json.dumps({"output_dir": report.get("output_dir"), "stages": stages}, indent=2))
    return 0


def main_tenet_dpo(argv: list[str] | None = None) -> int:
    return _run("tenet_dpo", argv)


def main_spl_safety(argv: list[str] | None = None) -> int:
    return _run("spl_safety", argv)
