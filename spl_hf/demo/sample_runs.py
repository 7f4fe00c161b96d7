"""An illustrative seed sweep from shipped counts, for the notebook and the demo (not measurements)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from spl_hf.files import write_json

SAMPLE = "seed_sweep_illustrative.json"


def illustrative_counts() -> dict:
    return json.loads(resources.files("spl_hf.data").joinpath("samples", SAMPLE).read_text())


def write_illustrative_runs(runs_dir: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``<condition>/seed<k>/eval/<prompt_set>/metrics.json`` from the shipped counts.

    Every file says ``"illustrative": true`` so nothing downstream can pass it off as a measurement.
    """
    from spl_hf.outputs import guard_dir, mark_output, seal_output

    root = guard_dir(runs_dir, overwrite=overwrite)
    data = illustrative_counts()
    mark_output(root, "illustrative-runs", replace=True)
    for cond, seeds in data["counts"].items():
        for seed, sets in seeds.items():
            for ps, (n_ref, at_limit) in sets.items():
                n = data["n"][ps]
                d = root / cond / f"seed{seed}" / "eval" / ps
                metrics = {
                    "prompt_set": ps,
                    "n": n,
                    "n_refusals": n_ref,
                    "refusal_rate": n_ref / n,
                    "at_limit": at_limit,
                    "at_limit_rate": at_limit / n,
                    "matcher": data["matcher"],
                    "seed": int(seed),
                    "illustrative": True,
                }
                write_json(d / "metrics.json", metrics, sort_keys=True, ascii_only=True)
    seal_output(root)
    return root
