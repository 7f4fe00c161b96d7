"""One ``eval refusal`` job: guard the outputs, generate (resumably), write responses and metrics.

Layout: ``<out>/<prompt_set>/responses.jsonl`` (one row per prompt, with ``at_limit`` and the
matcher's verdict), ``<out>/<prompt_set>/metrics.json`` and, when any prompt failed,
``<out>/<prompt_set>/failures.jsonl``; the results folder (shard files) is ``<out>/results`` unless given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spl_hf.evaluation.config import EvalConfig
from spl_hf.evaluation.prompts import PromptSet
from spl_hf.evaluation.run_folder import RunInfo
from spl_hf.evaluation.runner import RefusalEvaluator, annotate_refusals, refusal_metrics

RESPONSES = "responses.jsonl"
METRICS = "metrics.json"
FAILURES = "failures.jsonl"
CACHE = "results"
OUTPUT_KIND = "eval-refusal"
ROOT_KIND = "eval-refusal sets"


@dataclass(frozen=True)
class EvalTarget:
    """What is evaluated, as recorded in metrics.json."""

    model: str  # as given (Hub id, folder, or "embedded")
    adapter: str | None
    run: RunInfo | None = None


def plan_outputs(
    out: str | Path, names: Sequence[str], overwrite: bool = False, inputs: Iterable[str | Path | None] = ()
) -> dict[str, Path]:
    """Check every output folder before any work; returns prompt set -> folder."""
    from spl_hf.outputs import guard_dir, refuse_dangerous

    given = [i for i in inputs if i]
    root = refuse_dangerous(out, given)
    return {name: guard_dir(root / name, overwrite=overwrite, inputs=given) for name in names}


def evaluate_sets(
    backend: Any,
    prompt_sets: Sequence[PromptSet],
    folders: dict[str, Path],
    config: EvalConfig,
    target: EvalTarget,
    cache_path: str | Path,
) -> list[dict[str, Any]]:
    """Generate, score and write each prompt set; returns one summary per set."""
    from spl_hf.backends import ShardStore, run_worker
    from spl_hf.outputs import mark_output, seal_output

    evaluator = RefusalEvaluator(backend, config)
    store = ShardStore(str(cache_path))
    settings = {
        "model_revision": backend.info.revision,
        "template_hash": evaluator.template_hash,
        "max_new_tokens": config.max_new_tokens,
    }
    summaries = []
    # The folder above the sets (a run's eval/) holds their results folder: recorded too, so a train
    # run replaced with --overwrite can prove it wrote everything under it.
    roots = {f.parent for f in folders.values()}
    root = roots.pop() if len(roots) == 1 else None
    if root is not None:
        mark_output(root, ROOT_KIND)
    for ps in prompt_sets:
        items, failures = evaluator.prepare(ps.prompts)
        # The model is loaded here already (with its adapter): the stage runs in this process.
        result = run_worker(evaluator, evaluator.works(ps.name, items), store, settings, config.progress)
        by_id = {r["prompt_id"]: r for r in result.rows}
        rows = annotate_refusals(
            [by_id[p.prompt_id] for p in ps.prompts if p.prompt_id in by_id], config.matcher
        )
        failures = failures + result.failures
        metrics = build_metrics(ps, rows, failures, config, target, backend, evaluator.template_hash)
        write_set(folders[ps.name], rows, failures, metrics)
        summaries.append(
            {
                "prompt_set": ps.name,
                "out": str(folders[ps.name]),
                "n": metrics["n"],
                "n_refusals": metrics["n_refusals"],
                "refusal_rate": metrics["refusal_rate"],
                "at_limit": metrics["at_limit"],
                "matcher": metrics["matcher"],
                "computed": result.computed,
                "cached": result.cached,
                "failed": len(failures),
            }
        )
    if root is not None:
        seal_output(root)
    return summaries


def build_metrics(
    ps: PromptSet,
    rows: Sequence[dict[str, Any]],
    failures: Sequence[dict[str, Any]],
    config: EvalConfig,
    target: EvalTarget,
    backend: Any,
    template_hash: str,
) -> dict[str, Any]:
    from spl_hf import __version__
    from spl_hf.evaluation.batch import stop_token_ids

    run = target.run
    head: dict[str, Any] = {
        "prompt_set": ps.name,
        "prompts": ps.location,
        "n_prompts": len(ps.prompts),
        "n_failed": len(failures),
        "n_quarantined": len(ps.quarantined),
        "max_new_tokens": config.max_new_tokens,
        "batch_size": config.batch_size,
        "system_prompt": config.system_prompt,
        "decoding": "greedy",
        "stop_token_ids": stop_token_ids(backend),
        "model": target.model,
        "model_id": backend.info.model_id,
        "model_revision": backend.info.revision,
        "adapter": target.adapter,
        "template_hash": template_hash,
        "seed": run.seed if run else None,
        "condition": run.condition if run else None,
        "run": str(run.path) if run else None,
        "run_dataset": run.dataset if run else None,
        "spl_hf_version": __version__,
    }
    return {**head, **refusal_metrics(rows, config.matcher), "failures": list(failures)}


def write_set(folder: Path, rows: Sequence[dict], failures: Sequence[dict], metrics: dict[str, Any]) -> None:
    from spl_hf.backends import write_rows
    from spl_hf.files import write_json
    from spl_hf.outputs import mark_output, seal_output

    mark_output(folder, OUTPUT_KIND, replace=True)  # the folder's guard passed before any work
    write_rows(folder / RESPONSES, rows)
    if failures:
        write_rows(folder / FAILURES, failures)
    write_json(folder / METRICS, metrics, sort_keys=True)
    seal_output(folder)
