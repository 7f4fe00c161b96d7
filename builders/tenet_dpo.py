"""Build the per-tenet DPO release: pools -> decontaminate -> judge -> assign -> dataset -> audit -> publish.

    python builders/tenet_dpo.py --config recipes/tenets/demo.yaml
    python builders/tenet_dpo.py --config recipes/tenets/constitution_v3.yaml --dry_run
    accelerate launch --config_file recipes/accelerate/multi_gpu.yaml builders/tenet_dpo.py --config ...

A rerun skips every finished stage; a killed judge stage resumes from its cache.
"""

from __future__ import annotations

import sys

from spl_hf.cli import main

if __name__ == "__main__":
    sys.exit(main(["release", "tenets", *sys.argv[1:]]))
