"""Build the SPL safety release: prompts -> decontaminate -> generate -> label -> derive -> audit -> publish.

    python builders/spl_safety.py --config recipes/spl/demo.yaml
    python builders/spl_safety.py --config recipes/spl/paper.yaml --dry_run

A rerun skips every finished stage; killed generation or labeling resumes from its cache.
"""

from __future__ import annotations

import sys

from spl_hf.cli import main

if __name__ == "__main__":
    sys.exit(main(["release", "spl", *sys.argv[1:]]))
