"""Build an SPL preference dataset folder.

    python builders/build_spl.py --config recipes/spl/sample.yaml
    python builders/build_spl.py --prompts prompts.jsonl --candidates candidates.jsonl --output_dir out/spl

Settings are the fields of ``SPLBuildConfig``; a ``--config`` recipe sets them and flags override it
(the same parsing as ``spl-hf derive``).
"""

from __future__ import annotations

import json
import sys

from spl_hf.build import SPLBuildConfig, build_spl
from spl_hf.configs import parse_config


def main(argv: list[str] | None = None) -> int:
    (cfg,) = parse_config(SPLBuildConfig, argv, prog="build_spl.py")
    print(json.dumps(build_spl(cfg).summary(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
