"""Seed x condition sweeps: one ``train.py`` run per (condition, seed) under ``<root>/<condition>/seed<k>/``.

The layout lets evaluation pair runs by seed and condition (the paper's 15 runs: 5 seeds x 3
preference files). Runs are sequential subprocesses (each may itself be an ``accelerate launch``
over many GPUs); a run whose ``run.json`` exists is finished and skipped, so an interrupted sweep
resumes where it stopped.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spl_hf.errors import SplHfError
from spl_hf.files import write_json
from spl_hf.outputs import (
    OutputError,
    mark_output,
    marker_kind,
    refuse_dangerous,
    seal_output,
)
from spl_hf.train.layout import seed_dir
from spl_hf.train.record import RUN_FILE

_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")
SWEEP_FILE = "sweep.json"
SWEEP_KIND = "train-sweep"


@dataclass(frozen=True)
class Condition:
    name: str  # folder name under the sweep root
    config: str  # dataset config trained on (e.g. a tenet, `preferences`, a preference file's config)


@dataclass(frozen=True)
class SweepRun:
    condition: str
    seed: int
    out: Path
    argv: list[str]


@dataclass
class SweepReport:
    ran: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, int]] = field(default_factory=list)


def parse_seeds(seeds: Sequence[int]) -> list[int]:
    """The run seeds: distinct whole numbers, at least one."""
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise SplHfError(f"--seeds {seeds!r}: give whole numbers, e.g. --seeds 1 2 3 4 5")
    if len(set(seeds)) != len(seeds):
        raise SplHfError(f"--seeds {seeds!r}: give distinct seeds, e.g. --seeds 1 2 3 4 5")
    return seeds


def parse_conditions(entries: Sequence[str]) -> list[Condition]:
    """The conditions: NAME=CONFIG entries with plain, distinct folder names, at least one."""
    out: list[Condition] = []
    for item in (str(s).strip() for s in entries if str(s).strip()):
        name, sep, config = item.partition("=")
        if not sep or not config:
            raise SplHfError(f"--conditions: {item!r} is not NAME=CONFIG")
        if not _NAME.match(name):
            raise SplHfError(f"--conditions: condition name {name!r} must be a plain folder name")
        out.append(Condition(name, config))
    if not out:
        raise SplHfError("--conditions: give at least one NAME=CONFIG")
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise SplHfError(f"--conditions: duplicate names in {', '.join(names)}")
    return out


def launcher(accelerate_config: str | None = None) -> list[str]:
    """How each run is started: ``python -m spl_hf.train`` or ``accelerate launch --config_file F -m ...``."""
    if accelerate_config is None:
        return [sys.executable, "-m", "spl_hf.train"]
    return [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--config_file",
        accelerate_config,
        "-m",
        "spl_hf.train",
    ]


def plan(
    recipe: str,
    seeds: Sequence[int],
    conditions: Sequence[Condition],
    root: str | Path,
    extra: Sequence[str] = (),
    accelerate_config: str | None = None,
) -> list[SweepRun]:
    """Every (condition, seed) run in order, with the command line that trains it."""
    root = Path(root)
    runs = []
    for cond in conditions:
        for seed in seeds:
            out = seed_dir(root, cond.name, seed)
            argv = [
                *launcher(accelerate_config),
                "--config",
                recipe,
                "--dataset_config",
                cond.config,
                "--seed",
                str(seed),
                "--output_dir",
                str(out),
                *extra,
            ]
            runs.append(SweepRun(cond.name, seed, out, argv))
    return runs


def prepare_root(
    root: str | Path, recipe: str, seeds: Sequence[int], conditions: Sequence[Condition]
) -> Path:
    """Create or reuse the sweep root: new/empty, or an earlier sweep of the same plan (resume)."""
    out = refuse_dangerous(root, inputs=[recipe])
    if out.exists() and not out.is_dir():
        raise OutputError(f"{root}: exists and is not a folder")
    manifest = {"recipe": recipe, "seeds": list(seeds), "conditions": {c.name: c.config for c in conditions}}
    if out.is_dir() and any(out.iterdir()):
        # Resuming deletes nothing here (each run's own guard proves what it replaces), so the
        # marker's kind and the plan file are enough to know the folder is a sweep's.
        if marker_kind(out) != SWEEP_KIND or not (out / SWEEP_FILE).is_file():
            raise OutputError(
                f"{root}: holds files that are not an spl_hf sweep; choose a new or empty folder"
            )
        earlier = json.loads((out / SWEEP_FILE).read_text())
        clash = {
            k: (earlier["conditions"][k], v)
            for k, v in manifest["conditions"].items()
            if earlier.get("conditions", {}).get(k, v) != v
        }
        if clash:
            raise OutputError(
                f"{root}: an earlier sweep trained other configs under these condition names "
                f"(earlier, now): {clash}; use another folder or other names"
            )
        manifest["seeds"] = sorted(set(earlier.get("seeds", [])) | set(seeds))
        manifest["conditions"] = {**earlier.get("conditions", {}), **manifest["conditions"]}
    mark_output(out, SWEEP_KIND)
    write_json(out / SWEEP_FILE, manifest, sort_keys=True, ascii_only=True)
    seal_output(out)
    return out


def run_sweep(
    runs: Sequence[SweepRun],
    runner: Callable[[list[str]], int] | None = None,
    progress: bool = True,
) -> SweepReport:
    """Train each run in turn; finished runs (``run.json`` present) are skipped, failures reported."""
    from tqdm.auto import tqdm

    run = runner or (lambda argv: subprocess.run(argv, check=False).returncode)
    report = SweepReport()
    for r in tqdm(runs, desc="sweep runs", unit="run", disable=not progress):
        if (r.out / RUN_FILE).is_file():
            report.skipped.append(r.out)
            continue
        argv = list(r.argv)
        if r.out.is_dir() and any(r.out.iterdir()):
            # An interrupted run of this sweep: train.py's output guard still refuses anything it did not write.
            argv += ["--overwrite", "true"]
        code = run(argv)
        if code == 0 and (r.out / RUN_FILE).is_file():
            report.ran.append(r.out)
        else:
            report.failed.append((r.out, code))
    return report
