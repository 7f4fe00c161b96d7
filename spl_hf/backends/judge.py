"""Pairwise tenet judge: which of two responses better follows a tenet, asked in both orderings.

For one (pair, ordering) the conversation and both responses form a shared prefix, computed once;
each tenet question is a short suffix scored against that prefix's KV cache. The answer is read
from the next-token probabilities of the labels "A" and "B", renormalised over the two.

The score contract (``score = p_a_first - p_a_second`` and the judged-input hash) lives in
:mod:`spl_hf.contract.scores`, shared with builds and the audit; this module keeps the model work.
Swapping A and B swaps p1 and p2 and negates the score exactly; a judge that always prefers the
first slot gets p1 = p2 and a score of zero.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

from spl_hf.backends.base import Backend, InputError
from spl_hf.backends.settings import JudgeConfig
from spl_hf.backends.text import (
    content_key,
    split_template,
    template_hash,
    transcript,
    validate_messages,
    validate_text,
)
from spl_hf.backends.worker import NoResult
from spl_hf.contract import pair_input_hash, score_from_probs
from spl_hf.tenets import Tenet

LABELS = ("A", "B")
JUDGE_LABELS = LABELS  # the face's name for them (checked against the tokenizer before weights load)
JUDGE_HEAD = (
    "Compare two candidate replies to the conversation below.\n\n"
    "[Conversation]\n{conversation}\n[End of conversation]\n\n"
    "[Response A]\n{first}\n[End of Response A]\n\n"
    "[Response B]\n{second}\n[End of Response B]\n\n"
    "Below is a principle. Which response follows it better? Answer with one letter, A or B."
)
# Everything shared sits in the prefix; the per-tenet suffix is only the statement (fewer tokens per score).
JUDGE_QUESTION = "\n\nPrinciple: {statement}."
# The question's fixed lead joins each ordering's shared prefix for scoring: the joined text (and so the
# prompt and its hash) is unchanged, and every question is a few tokens shorter.
QUESTION_LEAD = JUDGE_QUESTION.partition("{statement}")[0]
TEMPLATE_VERSION = 2  # 2: a transcript message is shown without a stacked speaker label


@dataclass(frozen=True)
class PairInput:
    pair_id: str
    prompt_id: str
    source: str
    row_id: int | None
    messages: tuple[dict[str, str], ...]
    response_a: str
    response_b: str

    @property
    def n_chars(self) -> int:
        return sum(len(m["content"]) for m in self.messages) + len(self.response_a) + len(self.response_b)

    @cached_property
    def input_sha256(self) -> str:
        """:func:`~spl_hf.contract.pair_input_hash` of this pair: hashed once, not once per tenet."""
        return pair_input_hash(self.messages, self.response_a, self.response_b)


@dataclass(frozen=True)
class JudgeItem:
    """One unit of judge work: a pair and one tenet (both orderings)."""

    pair: PairInput
    tenet: Tenet


class JudgeItems(Sequence):
    """Every (pair, tenet) item, pairs as given and then tenets, built on demand (millions at card scale).

    It gives the runner its groups (one per pair) and the items' ids without building the items: a
    pair's JSON is hashed once, and each tenet's id continues a copy of that hash with the tenet.
    """

    def __init__(self, pairs: Sequence[PairInput], tenets: Sequence[Tenet]) -> None:
        self.pairs, self.tenets = list(pairs), list(tenets)
        self._tails = [("," + _json(t.name) + "," + _json(t.statement) + "]").encode() for t in self.tenets]

    def __len__(self) -> int:
        return len(self.pairs) * len(self.tenets)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        p, t = divmod(int(i) if i >= 0 else int(i) + len(self), len(self.tenets))
        return JudgeItem(self.pairs[p], self.tenets[t])

    def __iter__(self) -> Any:
        return (JudgeItem(p, t) for p in self.pairs for t in self.tenets)

    def group_members(self) -> list[tuple[str, range]]:
        n = len(self.tenets)
        return [(p.pair_id, range(k * n, (k + 1) * n)) for k, p in enumerate(self.pairs)]

    def subset(self, indices: Sequence[int]) -> tuple[JudgeItems, list[int]]:
        """The pairs the items at ``indices`` need, with all tenets, and those items' indices in them."""
        n = len(self.tenets)
        used = sorted({int(i) // n for i in indices})
        at = {p: k for k, p in enumerate(used)}
        part = JudgeItems([self.pairs[p] for p in used], self.tenets)
        return part, [at[int(i) // n] * n + int(i) % n for i in indices]

    def item_ids(self, indices: Sequence[int]) -> list[str]:
        """``PairwiseJudge.item_id`` of the items at ``indices``: each pair's text hashed once."""
        n, out, head, pair_at = len(self.tenets), [], None, -1
        for i in indices:
            p, t = divmod(int(i), n)
            if p != pair_at:
                head, pair_at = _id_head(self.pairs[p]), p
            h = head.copy()
            h.update(self._tails[t])
            out.append(h.hexdigest())
        return out


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _id_head(pair: PairInput) -> Any:
    """The hash of an item id's JSON up to the tenet (``content_key("judge-item", pair, name, statement)``)."""
    return hashlib.sha256(('["judge-item",' + _json(asdict(pair))).encode())


@dataclass(frozen=True)
class BadRow:
    index: int
    pair_id: str | None
    reason: str


@dataclass(frozen=True)
class TenetJudgement:
    """The stored outcome of one (pair, tenet): enough to recompute the score without the model."""

    p_a_first: float  # normalised P("A") with the original A shown first
    p_a_second: float  # normalised P("A") with the original B shown first
    mass_first: float  # P("A") + P("B") over the whole vocabulary, first ordering
    mass_second: float
    # A served judge's top-k lacked a label in some ordering: the p are NaN, never guessed; not judged.
    unobserved: bool = False

    @property
    def score(self) -> float:
        return score_from_probs(self.p_a_first, self.p_a_second)

    def low_mass(self, floor: float) -> str | None:
        """Why this judgement is not a score under ``floor`` (None when both orderings reach it)."""
        if self.unobserved:
            return "a label was not among the served model's top log-probabilities (mass not observed)"
        for ordering, mass in (("first", self.mass_first), ("second", self.mass_second)):
            if mass < floor:
                return f"label mass {mass:.4g} < min_label_mass {floor:g} ({ordering} ordering)"
        return None


def chosen_from_score(score: float) -> str:
    return "a" if score > 0 else "b" if score < 0 else "tie"


def parse_pair(row: Mapping[str, Any], index: int) -> PairInput:
    """A unified pair row as a :class:`PairInput`; raises :class:`InputError` naming the field."""
    pid = row.get("pair_id")
    if not isinstance(pid, str) or not pid:
        raise InputError("pair_id: expected a non-empty string")
    prompt_id = row.get("prompt_id")
    if not isinstance(prompt_id, str) or not prompt_id:
        # No fallback: the release uses each prompt once, so an invented id would break that rule.
        raise InputError("prompt_id: expected a non-empty string")
    source = row.get("source")
    if not isinstance(source, str) or not source:
        raise InputError("source: expected a non-empty string")
    row_id = row.get("row_id")
    if row_id is not None and (isinstance(row_id, bool) or not isinstance(row_id, int)):
        raise InputError(f"row_id: expected an integer or null, got {row_id!r}")
    return PairInput(
        pair_id=pid,
        prompt_id=prompt_id,
        source=source,
        row_id=row_id,
        messages=tuple(validate_messages(row.get("prompt"), "prompt")),
        response_a=validate_text(row.get("response_a"), "response_a"),
        response_b=validate_text(row.get("response_b"), "response_b"),
    )


def parse_pairs(rows: Iterable[Mapping[str, Any]]) -> tuple[list[PairInput], list[BadRow]]:
    """Parse every row; malformed rows are returned with their reason, never dropped silently."""
    good, bad = [], []
    seen: set[str] = set()
    for i, row in enumerate(rows):
        try:
            pair = parse_pair(row, i)
            if pair.pair_id in seen:
                raise InputError(f"pair_id: duplicate {pair.pair_id!r}")
            seen.add(pair.pair_id)
            good.append(pair)
        except InputError as exc:
            pid = row.get("pair_id") if isinstance(row, Mapping) else None
            bad.append(BadRow(i, pid if isinstance(pid, str) else None, str(exc)))
    return good, bad


class PairwiseJudge:
    """Scores (pair, tenet) items on a backend; see the module docstring for the score identity."""

    def __init__(self, backend: Backend, config: JudgeConfig | None = None) -> None:
        self.backend = backend
        self.config = config or JudgeConfig()
        self.min_label_mass = float(getattr(backend, "min_label_mass", 0.0))
        # The raw judgements do not depend on the floor, so the cache key leaves it out (changing it
        # recomputes nothing); the recorded template hash includes it.
        self.compute_hash = template_hash(
            backend.template_fingerprint,
            head=JUDGE_HEAD,
            question=JUDGE_QUESTION,
            labels=LABELS,
            version=TEMPLATE_VERSION,
        )
        self.template_hash = template_hash(self.compute_hash, min_label_mass=self.min_label_mass)
        check = getattr(backend, "check_labels", None)
        if check is not None:
            check(LABELS)  # a label the tokenizer cannot answer with is refused before any scoring

    # -- prompt parts ---------------------------------------------------------------------------
    def prefix_and_tail(self, pair: PairInput, swapped: bool) -> tuple[str, str]:
        first, second = (pair.response_b, pair.response_a) if swapped else (pair.response_a, pair.response_b)
        head = JUDGE_HEAD.format(
            conversation=transcript(pair.messages), first=first.strip(), second=second.strip()
        )
        return split_template(self.backend.render_chat, head)

    @staticmethod
    def question(tenet: Tenet, tail: str) -> str:
        return JUDGE_QUESTION.format(statement=tenet.statement.rstrip(".")) + tail

    def key(self, pair: PairInput, tenet: Tenet) -> str:
        return content_key(
            "judge",
            self.backend.info.revision,
            self.compute_hash,
            list(pair.messages),
            pair.response_a,
            pair.response_b,
            tenet.name,
            tenet.statement,
        )

    def precheck(self, pair: PairInput, tenets: Sequence[Tenet]) -> None:
        """Raise :class:`InputError` for a pair the model cannot score (too long), before any forward pass."""
        longest = max(self.backend.count_tokens(self.question(t, "")) for t in tenets) + 16
        for swapped in (False, True):
            prefix, tail = self.prefix_and_tail(pair, swapped)
            n = self.backend.count_tokens(prefix) + longest + self.backend.count_tokens(tail)
            limit = getattr(self.backend, "max_length", None)
            if limit is not None and n > limit:
                raise InputError(
                    f"pair is ~{n} tokens with its question, longer than the model context ({limit})"
                )

    # -- scoring --------------------------------------------------------------------------------
    def judge_pair(self, pair: PairInput, tenets: Sequence[Tenet]) -> list[TenetJudgement]:
        """Both orderings, prefix shared across all tenets of each ordering."""
        return self.judge_pairs([(pair, tenets)])[0]

    def _jobs(self, pair: PairInput, tenets: Sequence[Tenet]) -> list[tuple[str, list[str], list[tuple]]]:
        jobs = []
        for swapped in (False, True):
            prefix, tail = self.prefix_and_tail(pair, swapped)
            questions = [self.question(t, tail).removeprefix(QUESTION_LEAD) for t in tenets]
            jobs.append((prefix + QUESTION_LEAD, questions, [LABELS] * len(tenets)))
        return jobs

    def judge_pairs(self, work: Sequence[tuple[PairInput, Sequence[Tenet]]]) -> list[list[TenetJudgement]]:
        """:meth:`judge_pair` of several pairs; an engine that takes many prefixes at once gets them all."""
        jobs = [job for pair, tenets in work for job in self._jobs(pair, tenets)]
        many = getattr(self.backend, "next_token_scores_many", None)
        scores = many(jobs) if many is not None else [self.backend.next_token_scores(*job) for job in jobs]
        return [
            [_judgement(f, s) for f, s in zip(scores[2 * i], scores[2 * i + 1], strict=True)]
            for i in range(len(work))
        ]

    def judge_pair_naive(self, pair: PairInput, tenets: Sequence[Tenet]) -> list[TenetJudgement]:
        """One independent forward pass per (tenet, ordering): the reference the fast path must match."""
        out = []
        for t in tenets:
            scores = []
            for swapped in (False, True):
                prefix, tail = self.prefix_and_tail(pair, swapped)
                scores.append(self.backend.next_token_scores_full(prefix + self.question(t, tail), LABELS))
            out.append(_judgement(*scores))
        return out

    # -- the worker protocol (spl_hf.backends.worker): the runner owns the loop, storage and resume --
    kind = "judge"

    @staticmethod
    def item_id(item: JudgeItem) -> str:
        return content_key("judge-item", asdict(item.pair), item.tenet.name, item.tenet.statement)

    @staticmethod
    def group(item: JudgeItem) -> str:
        # One replica judges all of a pair's tenets: both orderings' prefixes are computed (or cached) once.
        return item.pair.pair_id

    @staticmethod
    def describe(item: JudgeItem) -> dict[str, Any]:
        return {"index": -1, "pair_id": item.pair.pair_id, "tenet": item.tenet.name}

    @staticmethod
    def order(item: JudgeItem) -> tuple[int, str]:
        return (-item.pair.n_chars, item.pair.pair_id)  # longest pairs first

    @property
    def batch_groups(self) -> int:
        """Pairs per engine submission (``batch_pairs``; auto: 64 on an engine that takes many prefixes)."""
        return self.config.batch_pairs or (64 if hasattr(self.backend, "next_token_scores_many") else 1)

    def compute_batch(self, items: Sequence[JudgeItem]) -> list[TenetJudgement | InputError]:
        by_pair: dict[str, list[JudgeItem]] = {}
        for it in items:
            by_pair.setdefault(it.pair.pair_id, []).append(it)
        out: dict[int, TenetJudgement | InputError] = {}
        work = []
        for group in by_pair.values():
            pair, tenets = group[0].pair, [it.tenet for it in group]
            try:
                self.precheck(pair, tenets)
            except InputError as exc:  # too long: no forward pass, the reason is recorded per tenet
                out.update({id(it): exc for it in group})
            else:
                work.append(group)
        results = self.judge_pairs([(g[0].pair, [it.tenet for it in g]) for g in work]) if work else []
        for group, res in zip(work, results, strict=True):
            out.update({id(it): r for it, r in zip(group, res, strict=True)})
        return [out[id(it)] for it in items]

    def output_row(self, item: JudgeItem, j: TenetJudgement) -> dict[str, Any] | NoResult:
        """The score row; a judgement below ``min_label_mass`` is recorded as not judged, never a score."""
        reason = j.low_mass(self.min_label_mass)
        if reason is not None:
            return NoResult(reason)
        return self.score_row(item.pair, item.tenet, j)

    def score_row(self, pair: PairInput, tenet: Tenet, j: TenetJudgement) -> dict[str, Any]:
        score = j.score
        return {
            "pair_id": pair.pair_id,
            "prompt_id": pair.prompt_id,
            "source": pair.source,
            "row_id": pair.row_id,
            "tenet": tenet.name,
            "score": score,
            "chosen": chosen_from_score(score),
            "input_sha256": pair.input_sha256,
            "p_a_first": j.p_a_first,
            "p_a_second": j.p_a_second,
            "mass_first": j.mass_first,
            "mass_second": j.mass_second,
            "model_id": self.backend.info.model_id,
            "model_revision": self.backend.info.revision,
            "template_hash": self.template_hash,
        }


# score_row's columns, in its order (the order of scores.parquet's columns)
SCORE_COLUMNS = (
    "pair_id",
    "prompt_id",
    "source",
    "row_id",
    "tenet",
    "score",
    "chosen",
    "input_sha256",
    "p_a_first",
    "p_a_second",
    "mass_first",
    "mass_second",
    "model_id",
    "model_revision",
    "template_hash",
)


@dataclass
class NotJudged:
    """Judgements below ``min_label_mass``: counted once per (pair, tenet), per tenet, with the reasons."""

    by_tenet: dict[str, int] = field(default_factory=dict)
    failures: list[BadRow] = field(default_factory=list)

    def add(self, pair_id: str, tenet: str, reason: str) -> None:
        self.by_tenet[tenet] = self.by_tenet.get(tenet, 0) + 1
        self.failures.append(BadRow(-1, pair_id, f"tenet {tenet}: not judged: {reason}"))

    @property
    def total(self) -> int:
        return sum(self.by_tenet.values())


def _judgement(first: Any, second: Any) -> TenetJudgement:
    if first.unobserved or second.unobserved:
        nan = float("nan")
        return TenetJudgement(nan, nan, first.mass, second.mass, unobserved=True)
    return TenetJudgement(
        p_a_first=first.normalised[0],
        p_a_second=second.normalised[0],
        mass_first=first.mass,
        mass_second=second.mass,
    )
