"""Build an SPL preference dataset folder from recorded attribute assignments (`spl-hf build spl`).

    python builders/build_spl.py --output_dir out/spl
    python builders/build_spl.py --prompts prompts.jsonl --candidates candidates.jsonl --output_dir out/spl

Settings are the fields of ``SPLBuildConfig`` (a ``--config`` YAML of them, flags override); the
recipes in ``recipes/spl/`` are release recipes, for ``builders/spl_safety.py``. The script is the
command itself, so errors are the command's: one line naming the file, exit 2.
"""

from __future__ import annotations

import sys

from spl_hf.cli import main as cli_main


def main(argv: list[str] | None = None) -> int:
    return cli_main(["build", "spl", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
