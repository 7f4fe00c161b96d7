"""Demo step: refusal of the base embedded model (and of a trained adapter) on the shipped prompts."""

from __future__ import annotations

import time
from pathlib import Path

from spl_hf.evaluation import (
    CACHE,
    DEFAULT_SETS,
    SAMPLE,
    EvalConfig,
    EvalTarget,
    evaluate_sets,
    load_prompt_set,
    plan_outputs,
    read_run,
)

DEMO_MAX_NEW_TOKENS = 48
DEMO_PROMPTS_PER_SET = 4


def demo_eval(
    out: Path, run_dir: Path | None = None, matcher: str = "default", base_model: str | None = None
) -> bool:
    """Evaluate the base model (and ``run_dir``'s adapter) on a few shipped Hard-1K and Toxic prompts.

    Writes ``out/eval/<policy>/<prompt_set>/{responses.jsonl,metrics.json}`` (cache in ``out/eval``,
    so a rerun generates nothing) and prints the refusal table with the matcher named. True when
    every prompt got a response. ``base_model`` replaces the embedded model (tests use a tiny one).
    """
    from spl_hf.backends import EMBEDDED_NAME
    from spl_hf.evaluation import load_policy
    from spl_hf.refusal import get_matcher

    t0 = time.perf_counter()
    print(
        f"\n== Refusal: base model{' and trained adapter' if run_dir else ''} on shipped OR-Bench-style prompts "
        f"(greedy, {DEMO_MAX_NEW_TOKENS} new tokens)",
        flush=True,
    )
    config = EvalConfig(max_new_tokens=DEMO_MAX_NEW_TOKENS, batch_size=DEMO_PROMPTS_PER_SET, matcher=matcher)
    prompt_sets = [load_prompt_set(name, SAMPLE, limit=DEMO_PROMPTS_PER_SET) for name in DEFAULT_SETS]
    root = Path(out) / "eval"
    policies: list[tuple[str, str | None, str | None]] = [("base", base_model, None)]
    if run_dir is not None:
        run = read_run(run_dir)
        policies.append(("adapter", run.model_name_or_path, str(run_dir)))
    rows, ok = [], True
    for label, model, adapter in policies:
        folders = plan_outputs(root / label, DEFAULT_SETS, overwrite=True, inputs=[adapter])
        backend = load_policy("hf", model, adapter, threads=1)
        run = read_run(adapter) if adapter else None
        if run:
            run.check_base(backend.info.revision)
        target = EvalTarget(model=model or "embedded", adapter=adapter, run=run)
        for s in evaluate_sets(backend, prompt_sets, folders, config, target, root / CACHE):
            ok &= s["failed"] == 0
            rows.append((label, s))
    m = get_matcher(matcher)
    print(f"matcher: {m.id} ({m.hash[:12]}) — {m.source}")
    print(f"policy: base = {base_model or EMBEDDED_NAME}" + (f"; adapter = {run_dir}" if run_dir else ""))
    print(f"{'policy':<8} {'prompt set':<18} {'refusals':>9} {'rate':>7} {'at limit':>9}")
    for label, s in rows:
        print(
            f"{label:<8} {s['prompt_set']:<18} {s['n_refusals']:>4} / {s['n']:<2} {100 * s['refusal_rate']:>6.1f}% "
            f"{s['at_limit']:>5} / {s['n']:<2}"
        )
    print(f"({time.perf_counter() - t0:.1f} s)")
    return ok
