"""The rehearsal engine: deterministic synthetic judge scores behind the real worker protocol.

It exists to rehearse the card-scale job (``benchmarks/bench_card.py``) on a machine without the
judge model: the real judge worker builds every prompt (both orderings' prefixes and each tenet's
question) and the real runner, executor and results store carry its results. Only the engine call
is replaced: each (pair, tenet) gets a card-shaped synthetic score from a hash of its pair id,
tenet and seed (about 13% of scores at |score| >= 0.5, as on the card).

It is never a judge. Every score row names it (``model_id`` is
:data:`~spl_hf.contract.scores.REHEARSAL_MODEL_ID`), every shard records the engine ``rehearsal``,
and ``publish`` refuses a build holding its scores (but to a local Hub on 127.0.0.1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from spl_hf.backends.base import LabelScores
from spl_hf.backends.judge import PairInput, PairwiseJudge, TenetJudgement, _judgement
from spl_hf.backends.loading import ModelInfo
from spl_hf.backends.worker import Stage
from spl_hf.contract import REHEARSAL_MODEL_ID

ENGINE = {"backend": "rehearsal", "dtype": "none"}
ELIGIBLE_SHARE = 0.13  # share of (pair, tenet) scores at |score| >= 0.5 (card shape: 2.08M of 16.4M)
CHARS_PER_TOKEN = 4.0  # the rehearsal counts tokens as characters / 4 (no tokenizer is loaded)


@dataclass
class RehearsalBackend:
    """What the judge asks of a backend, without a model: a plain chat template and token estimates."""

    seed: int = 0
    max_length: int | None = None
    min_label_mass: float = 0.0
    engine: Any = None

    def __post_init__(self) -> None:
        self.engine = dict(ENGINE)
        self.info = ModelInfo(REHEARSAL_MODEL_ID, f"rehearsal-seed-{self.seed}", "")
        self.template_fingerprint = hashlib.sha256(f"rehearsal:{self.seed}".encode()).hexdigest()

    def render_chat(self, messages: Sequence[dict[str, str]], add_generation_prompt: bool = True) -> str:
        turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return turns + ("<|im_start|>assistant\n" if add_generation_prompt else "")

    def count_tokens(self, text: str) -> int:
        return int(len(text) / CHARS_PER_TOKEN) + 1


class RehearsalJudge(PairwiseJudge):
    """The tenet judge with its engine call replaced by synthetic scores (see the module docstring).

    Its time in ``compute_batch`` (the real prompts, and the synthetic scores) is the engine's share
    that the runner measures for every worker (``engine_seconds`` in the stage's timing).
    """

    def judge_pairs(self, work: Sequence[tuple[PairInput, Sequence[Any]]]) -> list[list[TenetJudgement]]:
        out = []
        for pair, tenets in work:
            self._jobs(pair, tenets)  # the real prompts of both orderings, built as for a model
            out.append(synthetic_judgements(pair.pair_id, [t.name for t in tenets], self.backend.seed))
        return out


def synthetic_judgements(pair_id: str, tenets: Sequence[str], seed: int) -> list[TenetJudgement]:
    """Card-shaped judgements of one pair's tenets, fixed by (seed, pair id, tenet name)."""
    base = int.from_bytes(hashlib.sha256(f"{seed}:{pair_id}".encode()).digest()[:8], "little")
    salt = np.array(
        [int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little") for t in tenets],
        np.uint64,
    )
    u = _mix(np.uint64(base) ^ salt)  # three uniform draws per tenet from one 64-bit mix
    u1 = (u & np.uint64(0xFFFFF)).astype(np.float64) / 0x100000
    u2 = ((u >> np.uint64(20)) & np.uint64(0xFFFFF)).astype(np.float64) / 0x100000
    u3 = ((u >> np.uint64(40)) & np.uint64(0xFFFFF)).astype(np.float64) / 0x100000
    strong = u1 < ELIGIBLE_SHARE
    size = np.where(strong, 0.5 + 0.45 * u2, 0.49 * u2)
    d = np.where(u3 < 0.5, size, -size)
    bias = 0.02 * (u3 - 0.5)  # a slight first-slot bias, as judges have
    first, second = 0.5 + d / 2 + bias, 0.5 - d / 2 + bias
    mass = 0.9 + 0.09 * u3
    return [
        _judgement(
            LabelScores(("A", "B"), (f * m, (1 - f) * m)), LabelScores(("A", "B"), (s * m, (1 - s) * m))
        )
        for f, s, m in zip(first.tolist(), second.tolist(), mass.tolist(), strict=True)
    ]


def _mix(x: Any) -> Any:
    """splitmix64's finaliser, vectorised."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def make_rehearsal_judge(config: Any, seed: int) -> RehearsalJudge:
    return RehearsalJudge(RehearsalBackend(seed=seed), config)


def rehearsal_stage(config: Any, seed: int = 0, progress: bool = False) -> Stage:
    """The judge stage with the rehearsal engine: same kind and store layout, its own settings."""
    from dataclasses import asdict

    settings = {
        "engine": "rehearsal",
        "model": REHEARSAL_MODEL_ID,
        "seed": seed,
        **{k: v for k, v in asdict(config).items() if k != "progress"},
    }
    return Stage(RehearsalJudge, partial(make_rehearsal_judge, config, seed), settings, progress)
