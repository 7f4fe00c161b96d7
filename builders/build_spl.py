"""Build an SPL preference dataset folder.

    python builders/build_spl.py --config recipes/spl/sample.yaml
    python builders/build_spl.py --prompts prompts.jsonl --candidates candidates.jsonl --output_dir out/spl
"""

from __future__ import annotations

import json
import sys

from transformers import HfArgumentParser

from spl_hf.build import SPLBuildConfig, build_spl


def main(argv: list[str] | None = None) -> int:
    parser = HfArgumentParser(SPLBuildConfig)
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "--config":
        (cfg,) = parser.parse_yaml_file(argv[1], allow_extra_keys=False)
    else:
        (cfg,) = parser.parse_args_into_dataclasses(argv)
    print(json.dumps(build_spl(cfg).summary(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
