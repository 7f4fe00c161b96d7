"""Digests of every (config, split) of a dataset as ``load_dataset`` returns it, local or on a Hub.

Run as ``python -m spl_hf.hub.roundtrip PATH_OR_REPO [--revision SHA]`` in a fresh process (with an
empty ``HF_HOME``) to see a published repo exactly as a new user would; compare with the same
digests of the local build folder.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field


def split_digests(
    path: str, revision: str | None = None, configs: list[str] | None = None
) -> dict[str, dict]:
    """``config/split`` -> its Features, row count and a SHA-256 over its rows in order."""
    from datasets import get_dataset_config_names, load_dataset

    out: dict[str, dict] = {}
    for config in configs or get_dataset_config_names(path, revision=revision):
        # force_redownload: a local folder's Arrow cache is keyed by its name, not its bytes.
        dd = load_dataset(path, config, revision=revision, download_mode="force_redownload")
        for split, ds in dd.items():
            h = hashlib.sha256()
            for row in ds:
                h.update(json.dumps(row, sort_keys=True, default=repr).encode() + b"\n")
            out[f"{config}/{split}"] = {
                "features": ds.features.to_dict(),
                "rows": ds.num_rows,
                "digest": h.hexdigest(),
            }
    return out


@dataclass
class RoundtripArgs:
    """What to read back"""

    path: str = field(metadata={"help": "Dataset folder or Hub repo id.", "positional": True})
    revision: str | None = field(default=None, metadata={"help": "Hub revision (commit sha) to read."})
    config_name: list[str] | None = field(
        default=None, metadata={"help": "Only these configs (default: every config)."}
    )


def main(argv: list[str] | None = None) -> int:
    from spl_hf.configs import parse_config

    (args,) = parse_config(RoundtripArgs, argv, prog="python -m spl_hf.hub.roundtrip")
    json.dump(split_digests(args.path, args.revision, args.config_name), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
