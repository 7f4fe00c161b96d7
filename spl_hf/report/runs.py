"""Reading refusal metrics of a seed sweep: ``RUNS_DIR/<condition>/seed<k>/eval/<prompt_set>/metrics.json``."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from spl_hf.errors import SplHfError
from spl_hf.train import seed_dirs

METRIC_KEYS = (
    "prompt_set",
    "n",
    "n_refusals",
    "refusal_rate",
    "at_limit",
    "at_limit_rate",
    "matcher",
    "seed",
)


@dataclass(frozen=True)
class RunMetrics:
    """The refusal metric of one (condition, seed, prompt set) evaluation."""

    condition: str
    seed: int
    prompt_set: str
    n: int
    n_refusals: int
    refusal_rate: float  # proportion in [0, 1]
    at_limit: int
    at_limit_rate: float
    matcher: str
    path: str


def _int(data: dict, key: str, path: Path) -> int:
    v = data[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise SplHfError(f"{path}: {key!r} must be a non-negative integer, got {v!r}")
    return v


def _rate(data: dict, key: str, path: Path, count: int, n: int) -> float:
    v = data[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not 0.0 <= v <= 1.0:
        raise SplHfError(f"{path}: {key!r} must be a proportion in [0, 1], got {v!r}")
    if not math.isclose(float(v), count / n, rel_tol=1e-9, abs_tol=1e-12):
        raise SplHfError(f"{path}: {key!r} is {v} but its count gives {count}/{n} = {count / n}")
    return float(v)


def read_metrics(path: Path, condition: str, seed: int, prompt_set: str) -> RunMetrics:
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise SplHfError(f"{path}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise SplHfError(f"{path}: expected a JSON object")
    missing = [k for k in METRIC_KEYS if k not in data]
    if missing:
        raise SplHfError(f"{path}: missing key(s) {', '.join(missing)}")
    if data["prompt_set"] != prompt_set:
        raise SplHfError(f"{path}: prompt_set is {data['prompt_set']!r} but the folder says {prompt_set!r}")
    if data["seed"] != seed:
        raise SplHfError(f"{path}: seed is {data['seed']!r} but the folder says seed{seed}")
    n = _int(data, "n", path)
    if n == 0:
        raise SplHfError(f"{path}: 'n' is 0 (no responses evaluated)")
    n_ref, n_lim = _int(data, "n_refusals", path), _int(data, "at_limit", path)
    for key, count in (("n_refusals", n_ref), ("at_limit", n_lim)):
        if count > n:
            raise SplHfError(f"{path}: {key!r} ({count}) exceeds n ({n})")
    if not isinstance(data["matcher"], str) or not data["matcher"]:
        raise SplHfError(f"{path}: 'matcher' must name the refusal matcher")
    return RunMetrics(
        condition,
        seed,
        prompt_set,
        n,
        n_ref,
        _rate(data, "refusal_rate", path, n_ref, n),
        n_lim,
        _rate(data, "at_limit_rate", path, n_lim, n),
        data["matcher"],
        str(path),
    )


def load_runs(runs_dir: str | Path) -> list[RunMetrics]:
    """Every metrics file of the sweep; a (condition, seed) lacking a prompt set another run has is an error.

    Hidden folders and spl_hf outputs (a report written there) directly under ``runs_dir`` are skipped;
    any other folder without a ``seed<k>`` folder is an error, so a misnamed seed folder is not lost.
    """
    from spl_hf.outputs import MARKER

    root = Path(runs_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such runs folder")
    found: dict[tuple[str, int], dict[str, Path]] = {}
    seed_paths: dict[tuple[str, int], Path] = {}
    for cond_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if (cond_dir / MARKER).is_file():
            continue
        seeds = seed_dirs(cond_dir)
        if not seeds:
            raise SplHfError(
                f"{cond_dir}: a condition folder needs seed<k> subfolders (found "
                f"{sorted(p.name for p in cond_dir.iterdir())[:5]})"
            )
        for seed, seed_dir in seeds.items():
            seed_paths[(cond_dir.name, seed)] = seed_dir
            eval_dir = seed_dir / "eval"
            sets = sorted(p for p in eval_dir.iterdir() if p.is_dir()) if eval_dir.is_dir() else []
            found[(cond_dir.name, seed)] = {p.name: p / "metrics.json" for p in sets}
    if not found:
        raise FileNotFoundError(f"{root}: no <condition>/seed<k>/ run folders")
    prompt_sets = sorted({ps for sets in found.values() for ps in sets})
    if not prompt_sets:
        raise FileNotFoundError(f"{root}: no run has eval/<prompt_set>/metrics.json")
    missing = [
        str(seed_paths[key] / "eval" / ps / "metrics.json")
        for key, sets in sorted(found.items())
        for ps in prompt_sets
        if ps not in sets or not sets[ps].is_file()
    ]
    if missing:
        shown = "; ".join(missing[:10]) + (f"; and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise FileNotFoundError(f"{root}: missing metrics file(s): {shown}")
    runs = [read_metrics(found[key][ps], key[0], key[1], ps) for key in sorted(found) for ps in prompt_sets]
    for ps in prompt_sets:
        matchers = sorted({r.matcher for r in runs if r.prompt_set == ps})
        if len(matchers) > 1:
            raise SplHfError(
                f"{root}: prompt set {ps!r} was scored with different matchers {matchers}; "
                "rates are not comparable"
            )
    return runs
