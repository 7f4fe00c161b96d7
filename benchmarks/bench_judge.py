"""Pairwise tenet judge throughput: one pass per (pair, tenet, ordering) versus a shared prefix.

Both methods run in this process on the same model and pairs, interleaved pair by pair; the naive
baseline scores only the first --naive_tenets tenets of each pair (its cost is linear in them), and the
printed ratio compares (pair, tenet) scores per second.
Usage: python benchmarks/bench_judge.py [--pairs 2] [--naive_tenets 4] [--chunk_size 8] [--threads 1]

With ``--backend vllm`` (in the vLLM venv, see docs/vllm.md) the comparison is instead vLLM against the
HF shared-prefix path on the same model at float32, one run: throughput of each, their ratio, the
agreement of their probabilities, and vLLM's requests and prompt tokens per score.

With ``--backend openai --base_url URL --model NAME`` (a running OpenAI-compatible server, e.g.
``vllm serve``; add ``--tokenizer`` for the completions endpoint) it judges the same pairs through the
server, one request at a time, and prints the client's overhead per request (building, sending and
parsing) beside the time spent waiting on the server.
"""

from __future__ import annotations

import argparse
import random
import time

from spl_hf.backends.hf import HFBackend
from spl_hf.backends.judge import QUESTION_LEAD, PairInput, PairwiseJudge
from spl_hf.tenets import default_tenets

_WORDS = [
    "the",
    "a",
    "garden",
    "recipe",
    "water",
    "light",
    "careful",
    "people",
    "should",
    "consider",
    "whether",
    "evidence",
    "supports",
    "plan",
    "because",
    "risk",
    "safety",
    "history",
    "river",
    "engine",
    "budget",
    "morning",
    "students",
    "practice",
    "simple",
    "clear",
    "step",
    "question",
    "answer",
    "reason",
    "example",
    "library",
    "medicine",
    "travel",
    "weather",
    "friend",
    "language",
    "music",
    "code",
    "data",
]


def synthetic_text(backend: HFBackend, n_tokens: int, rng: random.Random) -> str:
    """Plain sentences grown until they reach ``n_tokens`` tokens for this tokenizer."""
    sentences: list[str] = []
    while backend.count_tokens(" ".join(sentences)) < n_tokens:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 14))]
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model id or path (default: the embedded SmolLM2)")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument(
        "--naive_tenets", type=int, default=4, help="tenets per pair scored by the naive baseline"
    )
    ap.add_argument("--chunk_size", type=int, default=8)
    ap.add_argument(
        "--tenets", type=int, default=None, help="tenets per pair (default: all of the default set)"
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prompt_tokens", type=int, default=150)
    ap.add_argument("--response_tokens", type=int, default=250)
    ap.add_argument(
        "--backend", choices=("hf", "vllm", "openai"), default="hf", help="vllm: compare vLLM with HF"
    )
    ap.add_argument("--base_url", default=None, help="openai: the server's API root")
    ap.add_argument("--served_model", default=None, help="openai: the served model name")
    ap.add_argument("--tokenizer", default=None, help="openai: render here, completions endpoint")
    ap.add_argument("--enforce_eager", action="store_true", help="vllm: no torch.compile (faster start)")
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)")
    args = ap.parse_args()
    if args.tiny:
        args.pairs, args.naive_tenets, args.prompt_tokens, args.response_tokens = 1, 2, 30, 40
        args.tenets = 4

    backend = HFBackend.load(args.model, threads=args.threads, chunk_size=args.chunk_size, dtype="float32")
    judge = PairwiseJudge(backend)
    tenets = default_tenets().tenets[: args.tenets]
    rng = random.Random(0)
    pairs = [
        PairInput(
            pair_id=f"bench-{i}",
            prompt_id=f"bench-{i}",
            source="bench",
            row_id=i,
            messages=({"role": "user", "content": synthetic_text(backend, args.prompt_tokens, rng)},),
            response_a=synthetic_text(backend, args.response_tokens, rng),
            response_b=synthetic_text(backend, args.response_tokens, rng),
        )
        for i in range(args.pairs)
    ]
    prefix, tail = judge.prefix_and_tail(pairs[0], swapped=False)
    n_prompt = sum(backend.count_tokens(prefix + judge.question(t, tail)) for t in tenets) / len(tenets)
    # What is scored: the prefix with the question's fixed lead, then each question's own tokens.
    n_prefix = backend.count_tokens(prefix + QUESTION_LEAD)
    n_suffix = n_prompt - n_prefix
    print(f"model {backend.info.model_id} ({backend.info.revision[:28]}), threads {args.threads}")
    print(
        f"{len(pairs)} pairs x {len(tenets)} tenets; one-pass prompt ~{n_prompt:.0f} tokens = "
        f"shared prefix {n_prefix} + question ~{n_suffix:.0f}"
    )

    if args.backend == "vllm":
        compare_vllm(args, judge, pairs, tenets)
        return
    if args.backend == "openai":
        client_overhead(args, pairs, tenets)
        return
    judge.judge_pair(pairs[0], tenets[:2])  # warm-up (allocator, kernels) outside both timings

    # Interleave the two methods pair by pair so background load on a shared machine hits both alike.
    naive_tenets = tenets[: args.naive_tenets]
    # Wall time, and this process's CPU time: on a loaded shared machine (one torch thread) the CPU
    # time is what each method computed, the wall time also counts waiting for a core.
    naive_s = shared_s = naive_cpu = shared_cpu = 0.0
    n_naive = n_shared = 0
    diff = 0.0
    for pair in pairs:
        t0, c0 = time.perf_counter(), time.process_time()
        naive = judge.judge_pair_naive(pair, naive_tenets)
        naive_s, naive_cpu = naive_s + time.perf_counter() - t0, naive_cpu + time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        shared = judge.judge_pair(pair, tenets)
        shared_s, shared_cpu = shared_s + time.perf_counter() - t0, shared_cpu + time.process_time() - c0
        n_naive += len(naive)
        n_shared += len(shared)
        diff = max(diff, *(abs(a.score - b.score) for a, b in zip(naive, shared, strict=False)))
    naive_rate, shared_rate = n_naive / naive_s, n_shared / shared_s

    print(f"naive one pass per score : {n_naive} scores in {naive_s:.1f} s = {naive_rate:.3f} scores/s")
    print(
        f"shared prefix (chunk {args.chunk_size:>2})  : {n_shared} scores in {shared_s:.1f} s = {shared_rate:.3f} scores/s"
    )
    cpu = (n_shared / shared_cpu) / (n_naive / naive_cpu)
    print(
        f"speed-up: {shared_rate / naive_rate:.1f}x wall, {cpu:.1f}x CPU time   "
        f"max |score difference| on common items: {diff:.2e}"
    )
    print(f"ratio: shared prefix / one pass per score = {shared_rate / naive_rate:.1f}x")


def compare_vllm(args: argparse.Namespace, hf_judge: PairwiseJudge, pairs: list, tenets: tuple) -> None:
    from spl_hf.backends.vllm import VLLMBackend

    t0 = time.perf_counter()
    engine = VLLMBackend(args.model, dtype="float32", enforce_eager=args.enforce_eager)
    print(f"vLLM engine start: {time.perf_counter() - t0:.0f} s ({engine.identity['engine']})")
    judge = PairwiseJudge(engine)
    work = [(p, tenets) for p in pairs]
    judge.judge_pairs([(pairs[0], tenets[:2])])  # warm-up outside the timing
    hf_judge.judge_pair(pairs[0], tenets[:2])
    # Two rounds, each one vLLM submission of half the pairs then HF on the same half, so background
    # load on a shared machine hits both alike.
    calls, tokens, cached = engine.forward_calls, engine.prompt_tokens, engine.cached_tokens
    ours, ref, vllm_s, hf_s = [], [], 0.0, 0.0
    half = max(1, len(work) // 2)
    for part in (work[:half], work[half:]):
        if not part:
            continue
        t0 = time.perf_counter()
        ours += judge.judge_pairs(part)  # the engine batches the whole submission
        vllm_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        ref += [hf_judge.judge_pair(p, ts) for p, ts in part]
        hf_s += time.perf_counter() - t0
    calls, tokens = engine.forward_calls - calls, engine.prompt_tokens - tokens
    cached = engine.cached_tokens - cached
    n = sum(len(r) for r in ref)
    both = [(a, b) for ra, rb in zip(ours, ref, strict=True) for a, b in zip(ra, rb, strict=True)]
    dp = max(max(abs(a.p_a_first - b.p_a_first), abs(a.p_a_second - b.p_a_second)) for a, b in both)
    dm = max(max(abs(a.mass_first - b.mass_first), abs(a.mass_second - b.mass_second)) for a, b in both)
    signs = sum((a.score > 0) == (b.score > 0) for a, b in both)
    print(f"HF shared prefix (chunk {args.chunk_size}): {n} scores in {hf_s:.1f} s = {n / hf_s:.3f} scores/s")
    print(f"vLLM, 2 submissions   : {n} scores in {vllm_s:.1f} s = {n / vllm_s:.3f} scores/s")
    print(f"vLLM / HF throughput: {hf_s / vllm_s:.2f}x")
    print(
        f"requests per score: {calls / n:.1f}; prompt tokens per score: {tokens / n:.0f}, "
        f"of which {cached / n:.0f} from the prefix cache ({(tokens - cached) / n:.0f} computed)"
    )
    print(f"agreement: max |dp| {dp:.2e}, max |dmass| {dm:.2e}, same sign {signs}/{n}")


def client_overhead(args: argparse.Namespace, pairs: list, tenets: tuple) -> None:
    from spl_hf.backends.openai_api import OpenAIBackend

    served = OpenAIBackend(args.served_model, base_url=args.base_url, tokenizer=args.tokenizer, concurrency=1)
    judge = PairwiseJudge(served)
    judge.judge_pairs([(pairs[0], tenets[:2])])  # warm-up outside the timing
    calls, wait = served.forward_calls, served.client.wait_s
    t0 = time.perf_counter()
    judge.judge_pairs([(p, tenets) for p in pairs])
    wall = time.perf_counter() - t0
    n, wait = served.forward_calls - calls, served.client.wait_s - wait
    print(f"{served.engine['engine']} ({served.engine['endpoint']} endpoint), model {served.served_model}")
    print(f"{n} requests for {len(pairs) * len(tenets)} scores in {wall:.1f} s")
    print(
        f"per request: server {1000 * wait / n:.1f} ms, client overhead {1000 * (wall - wait) / n:.2f} ms "
        f"({(wall - wait) / wait:.1%} of the server's time)"
    )


if __name__ == "__main__":
    main()
