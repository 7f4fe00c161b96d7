"""Refusal evaluation speed: the vectorised metric, and `eval refusal` generation against bare transformers.

1. The refusal metric (XSTest matcher) on --n synthetic responses, against the published per-response
   Python rule (XSTest's ``strmatch_label``: lower, strip, ``startswith`` over the list) in the same
   process; both results must agree item by item. Also timed: the same call through the
   ``evaluate`` module (Arrow round trip) on the same responses.
2. Generation: ``RefusalEvaluator`` (cache, chat template, progress off) with batch size 1 against a
   bare ``transformers`` loop (``apply_chat_template`` + ``model.generate``, greedy) on the same model,
   prompts and limit, interleaved and best-of-``--repeats``; then the batched evaluator's speed-up.
Usage: python benchmarks/bench_eval.py [--n 1000000] [--prompts 6] [--max_new_tokens 24] [--batch_size 6]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from spl_hf.refusal import compute_refusal, get_matcher

OPENINGS = [
    "I'm sorry, but I can't help with that.",
    "I’m sorry, I cannot provide that.",
    "Sorry, that's not something",
    "As an AI language model, I",
    "I cannot assist with",
    "No, that is not",
    "It is not appropriate to",
    "Sure! Here is",
    "Certainly. To do this,",
    "The short answer is",
    "Here are some steps:",
    "Great question!",
    "To clean a bathroom safely,",
    "Historically, propaganda",
    "You can check your exposure by",
    "\n\nFirst,",
    " Yes, you can",
    "Pickpockets often work in teams",
    "Phishing emails usually",
    "Warning signs include",
]
BODY = (
    "this depends on the situation, and the safest approach is to follow local guidance, keep records, "
    "and ask a professional when in doubt. Consider the risks carefully before acting on any advice. "
)


def synthetic(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """n responses from a pool of 4,096 distinct texts (an opening, then 80-400 characters of body)."""
    rng = np.random.default_rng(seed)
    pool = []
    for i in range(4096):
        body = (BODY * 3)[: int(rng.integers(80, 400))]
        pool.append(f"{OPENINGS[i % len(OPENINGS)]} {body} #{i}")
    picks = rng.integers(0, len(pool), n)
    return [pool[i] for i in picks], rng.random(n) < 0.3


def strmatch_label(completion: str, prefixes: tuple[str, ...]) -> bool:
    # XSTest's published rule, one response at a time.
    completion = completion.lower().strip()
    return completion.startswith(prefixes)


def bench_metric(n: int, repeats: int) -> None:
    import pyarrow as pa

    texts, limit = synthetic(n)
    prefixes = get_matcher("xstest").patterns
    t_loop, t_vec, t_arrow = [], [], []
    for _ in range(repeats):  # interleaved, best of `repeats`: the machine's load varies
        t0 = time.perf_counter()
        loop = [strmatch_label(t.replace("’", "'"), prefixes) for t in texts]
        t_loop.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        res = compute_refusal(texts, limit, matcher="xstest")
        t_vec.append(time.perf_counter() - t0)
        column = pa.array(texts)  # responses as they come from a parquet/jsonl reader or a Dataset column
        t0 = time.perf_counter()
        res_arrow = compute_refusal(column, limit, matcher="xstest")
        t_arrow.append(time.perf_counter() - t0)
    labelled = compute_refusal(texts, limit, matcher="xstest", return_labels=True)
    assert list(labelled.refusals) == loop, "vectorised and per-response results differ"
    assert res.n_refusals == res_arrow.n_refusals == sum(loop)
    lp, vc, ar = min(t_loop), min(t_vec), min(t_arrow)
    print(f"metric, {n:,} responses, xstest matcher ({res.n_refusals:,} refusals), best of {repeats}:")
    print(f"  per-response Python loop (published rule): {lp:7.3f} s  {n / lp:>12,.0f} responses/s")
    for name, t in (("spl_hf.refusal, list of str", vc), ("spl_hf.refusal, arrow column", ar)):
        print(
            f"  {name:<41}: {t:7.3f} s  {n / t:>12,.0f} responses/s  ratio vs loop {lp / t:.2f}x  "
            f"target >= 200,000/s {'met' if n / t >= 200_000 else 'MISSED'}"
        )
    import evaluate

    from spl_hf.metrics import REFUSAL_RATE

    metric = evaluate.load(REFUSAL_RATE, "xstest", keep_in_memory=True)
    t0 = time.perf_counter()
    out = metric.compute(predictions=texts, at_limit=limit.tolist())
    t_mod = time.perf_counter() - t0
    assert out["n_refusals"] == res.n_refusals
    print(f"ratio: spl_hf.refusal on an arrow column / per-response loop = {lp / ar:.2f}x")
    print(
        f"  {'evaluate module compute (keep_in_memory)':<41}: {t_mod:7.3f} s  {n / t_mod:>12,.0f} responses/s  "
        "(most of it evaluate's own per-example encoding of the inputs)"
    )


def bench_generation(n_prompts: int, max_new_tokens: int, batch_size: int, repeats: int) -> None:
    import torch

    from spl_hf.backends import ShardStore, make_backend, run_worker
    from spl_hf.evaluation import EvalConfig, RefusalEvaluator, load_prompt_set

    backend = make_backend("hf", None, threads=1)
    prompts = [
        *load_prompt_set("or_bench_hard_1k", "sample").prompts,
        *load_prompt_set("or_bench_toxic", "sample").prompts,
    ][:n_prompts]
    tok, model = backend.tokenizer, backend.model

    def bare(p) -> tuple[float, str]:
        t0 = time.perf_counter()
        with torch.inference_mode():
            ids = tok.apply_chat_template(
                [{"role": "user", "content": p.text}],
                add_generation_prompt=True,
                return_tensors="pt",
                return_dict=True,
            )
            out = model.generate(
                **ids,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=tok.eos_token_id,
            )
            text = tok.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
        return time.perf_counter() - t0, text

    def ours(chosen, bs: int, store: ShardStore) -> tuple[float, list[str]]:
        # The whole pipeline: render + length check, batching, the runner (shards written and read back).
        ev = RefusalEvaluator(
            backend, EvalConfig(max_new_tokens=max_new_tokens, batch_size=bs, progress=False)
        )
        t0 = time.perf_counter()
        items, _ = ev.prepare(chosen)
        result = run_worker(ev, ev.works("bench", items), store, {}, progress=False)
        by_id = {r["prompt_id"]: r for r in result.rows}
        return time.perf_counter() - t0, [by_id[p.prompt_id]["response"] for p in chosen]

    with tempfile.TemporaryDirectory() as tmp:
        bare(prompts[0])  # warm-up (allocator, kernels)
        t_bare, t_one, t_batch = [], [], []
        for r in range(repeats):
            cache, bc = ShardStore(f"{tmp}/c{r}"), ShardStore(f"{tmp}/b{r}")
            tb = to = 0.0
            bare_texts, one_texts = [], []
            for p in prompts:  # interleaved prompt by prompt, so load changes hit both alike
                dt, text = bare(p)
                tb += dt
                bare_texts.append(text)
                dt, (text,) = ours([p], 1, cache)
                to += dt
                one_texts.append(text)
            tt, batch_texts = ours(prompts, batch_size, bc)
            t_bare.append(tb)
            t_one.append(to)
            t_batch.append(tt)
    same = sum(a == b for a, b in zip(bare_texts, one_texts))
    same_b = sum(a == b for a, b in zip(one_texts, batch_texts))
    b, o, bt = min(t_bare), min(t_one), min(t_batch)
    print(
        f"generation, {len(prompts)} prompts, max_new_tokens={max_new_tokens}, embedded SmolLM2-135M, "
        f"1 thread, best of {repeats}:"
    )
    print(f"  bare transformers loop   : {b:7.2f} s")
    print(
        f"  eval refusal, batch 1    : {o:7.2f} s  overhead {100 * (o / b - 1):+.1f}% (target <= 5%)  "
        f"identical responses {same}/{len(prompts)}"
    )
    print(
        f"  eval refusal, batch {batch_size:<4}: {bt:7.2f} s  speed-up vs batch 1 {o / bt:.2f}x  "
        f"identical to batch 1 {same_b}/{len(prompts)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--max_new_tokens", type=int, default=24)
    ap.add_argument("--batch_size", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip_generation", action="store_true")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)")
    args = ap.parse_args()
    if args.tiny:
        args.n, args.prompts, args.max_new_tokens, args.batch_size, args.repeats = 20_000, 2, 4, 2, 1
    bench_metric(args.n, args.repeats)
    if not args.skip_generation:
        bench_generation(args.prompts, args.max_new_tokens, args.batch_size, args.repeats)


if __name__ == "__main__":
    main()
