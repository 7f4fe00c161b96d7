"""The model stages as runner :class:`~spl_hf.backends.worker.Stage` s: how each engine is built, what fixes results.

Every driver (the ``judge``/``label``/``generate`` commands, ``eval refusal``, the releases) builds
its stage here and calls :func:`spl_hf.backends.runner.run_stage`. A stage's ``make`` is a
``functools.partial`` of a module-level function, so the Ray executor can send it to replicas.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any

from spl_hf.backends.factory import load_backend
from spl_hf.backends.settings import engine_kwargs
from spl_hf.backends.worker import Stage, StageResult


def model_settings(model: Any) -> dict[str, Any]:
    """The model settings that change results (threads and vLLM memory do not)."""
    return {
        "model": model.model,
        "backend": model.backend,
        "max_length": model.max_length,
        **engine_kwargs(model),
    }


def _config(config: Any) -> dict[str, Any]:
    return {k: v for k, v in asdict(config).items() if k != "progress"}


# -- tenet judge ---------------------------------------------------------------------------------
def make_judge(model: Any, config: Any) -> Any:
    from spl_hf.backends.judge import JUDGE_LABELS, PairwiseJudge

    # The answer labels are checked against the tokenizer before the weights load.
    return PairwiseJudge(load_backend(model, chunk_size=config.chunk_size, labels=JUDGE_LABELS), config)


def judge_stage(model: Any, config: Any) -> Stage:
    from spl_hf.backends.judge import PairwiseJudge

    settings = {**model_settings(model), **_config(config)}
    return Stage(PairwiseJudge, partial(make_judge, model, config), settings, config.progress)


def judge_items(pairs: list[Any], tenets: list[Any]) -> Any:
    """(pair, tenet) items in output order: pairs as given, then tenets (a :class:`JudgeItems`, built on demand)."""
    from spl_hf.backends.judge import JudgeItems

    return JudgeItems(pairs, tenets)


def judge_outcome(result: StageResult, tenets: list[Any]) -> tuple[list[dict], list[dict], Any]:
    """Score rows, pairs refused before scoring (BadRow dicts), and the judgements below ``min_label_mass``
    (a :class:`~spl_hf.backends.judge.NotJudged`: counted once per tenet, each with its reason)."""
    from spl_hf.backends.judge import NotJudged

    not_judged = NotJudged(by_tenet={t.name: 0 for t in tenets})
    for f in result.not_judged:
        not_judged.add(f["pair_id"], f["tenet"], f["reason"])
    failures = [
        {"index": f["index"], "pair_id": f["pair_id"], "reason": f["reason"]} for f in result.failures
    ]
    return result.rows, failures, not_judged


# -- attribute labeler, verdict judge, candidate generator -----------------------------------------
def make_labeler(model: Any, schema: Any, config: Any) -> Any:
    from spl_hf.backends.labeler import AttributeLabeler

    return AttributeLabeler(load_backend(model), schema, config)


def label_stage(model: Any, schema: Any, config: Any) -> Stage:
    from spl_hf.backends.labeler import AttributeLabeler

    settings = {**model_settings(model), **_config(config), "schema": schema.hash}
    return Stage(AttributeLabeler, partial(make_labeler, model, schema, config), settings, config.progress)


def make_verdict_judge(model: Any, ranking: dict[str, int], progress: bool) -> Any:
    from spl_hf.backends.verdict import VerdictJudge

    return VerdictJudge(load_backend(model), dict(ranking), progress=progress)


def verdict_stage(model: Any, ranking: dict[str, int] | None, progress: bool = True) -> Stage:
    from spl_hf.backends.verdict import VerdictJudge, load_verdict_ranking

    ranking = load_verdict_ranking(ranking)
    settings = {**model_settings(model), "ranking": ranking}
    return Stage(VerdictJudge, partial(make_verdict_judge, model, ranking, progress), settings, progress)


def make_generator(model: Any, config: Any) -> Any:
    from spl_hf.backends.generate import CandidateGenerator

    return CandidateGenerator(load_backend(model), config)


def generate_stage(model: Any, config: Any) -> Stage:
    from spl_hf.backends.generate import CandidateGenerator

    settings = {**model_settings(model), **_config(config), "texts": config.texts()}
    return Stage(CandidateGenerator, partial(make_generator, model, config), settings, config.progress)


def generate_items(prompts: list[tuple[str, tuple]], config: Any) -> list[Any]:
    """(prompt, instruction, sample) items in output order."""
    from spl_hf.backends.generate import GenItem

    return [
        GenItem(pid, msgs, ins, k)
        for pid, msgs in prompts
        for ins in config.instructions
        for k in range(config.k)
    ]
