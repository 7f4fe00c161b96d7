"""Composition tables of a built SPL dataset (the paper's Tables IV, VIII and IX).

Shared by the build (which prints them into the card) and the audit (`spl-hf tables`); pure Arrow.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass

import pyarrow as pa


@dataclass(frozen=True)
class VerdictPairRow:
    preferred_verdict: str
    rejected_verdict: str
    pairs: int


@dataclass(frozen=True)
class RulePairRow:
    preferred_verdict: str
    preferred_rules: str
    rejected_verdict: str
    rejected_rules: str
    rank_difference: int
    pairs: int


@dataclass(frozen=True)
class TopicRow:
    topic: str
    pairs: int
    prompts: int


@dataclass(frozen=True)
class InstructionPairRow:
    preferred_instruction: str | None
    rejected_instruction: str | None
    pairs: int
    prompts: int


@dataclass(frozen=True)
class CompositionTables:
    total_pairs: int
    labeled_pairs: int
    no_label: dict[str, int]
    verdict_pairs: list[VerdictPairRow]
    rule_pairs: list[RulePairRow]
    topics: list[TopicRow]
    instructions: list[InstructionPairRow]

    def to_dict(self) -> dict:
        return asdict(self)

    def to_markdown(self) -> str:
        if not self.labeled_pairs:  # every table below counts labeled pairs: none would have a row
            out = [
                f"No pair got a label ({self.total_pairs} pairs in all), so there are no tables of labeled pairs.",
                "",
            ]
        else:
            out = ["| preferred verdict | rejected verdict | pairs |", "|---|---|---:|"]
            out += [
                f"| {r.preferred_verdict} | {r.rejected_verdict} | {r.pairs} |" for r in self.verdict_pairs
            ]
            out += [f"| **total** | | {self.labeled_pairs} |", ""]
            out += _table(
                ["preferred verdict", "rule", "rejected verdict", "rule", "rank difference", "pairs"],
                "|---|---|---|---|---:|---:|",
                [
                    f"| {r.preferred_verdict} | {r.preferred_rules} | {r.rejected_verdict} | {r.rejected_rules} "
                    f"| {r.rank_difference} | {r.pairs} |"
                    for r in self.rule_pairs
                ],
                "No labeled pair records the rules that fired.",
            )
            out += _table(
                ["shared prompt topic", "pairs (distinct prompts)"],
                "|---|---:|",
                [f"| {r.topic} | {r.pairs} ({r.prompts}) |" for r in self.topics],
                "No labeled pair has a prompt topic.",
            )
            out += _table(
                ["preferred instruction", "rejected instruction", "pairs (distinct prompts)"],
                "|---|---|---:|",
                [
                    f"| {r.preferred_instruction} | {r.rejected_instruction} | {r.pairs} ({r.prompts}) |"
                    for r in self.instructions
                ],
                "No labeled pair has instructions.",
            )
        out += _table(
            ["no-label reason", "pairs"],
            "|---|---:|",
            [f"| {k} | {v} |" for k, v in self.no_label.items()],
            "Every pair got a label, so there is no no-label reason to count.",
        )
        return "\n".join(out).rstrip("\n") + "\n"


def _table(header: list[str], rule: str, rows: list[str], empty: str) -> list[str]:
    """A markdown table with a blank line after it, or the sentence ``empty`` when it has no row:
    a header with no row says nothing and reads as a rendering fault."""
    if not rows:
        return [empty, ""]
    return ["| " + " | ".join(header) + " |", rule, *rows, ""]


def composition_tables(table: pa.Table) -> CompositionTables:
    """Count labeled pairs by verdict pair, by applied rules, and by shared prompt topic."""
    der = table.column("derivation").to_pylist()
    topics = [p["topic"] if p else None for p in table.column("prompt_attributes").to_pylist()]
    prompt_ids = table.column("prompt_id").to_pylist()
    instructions = list(
        zip(table.column("instruction_a").to_pylist(), table.column("instruction_b").to_pylist(), strict=True)
    )
    instruction_pairs: defaultdict[tuple, list[str]] = defaultdict(list)
    verdicts: Counter = Counter()
    rules: Counter = Counter()
    no_label: Counter = Counter()
    topic_pairs: Counter = Counter()
    topic_prompts: defaultdict[str, set] = defaultdict(set)
    labeled = 0
    for d, topic, pid, (ia, ib) in zip(der, topics, prompt_ids, instructions, strict=True):
        if d["label"] is None:
            no_label[d["no_label_reason"]] += 1
            continue
        labeled += 1
        win, lose = ("a", "b") if d["label"] == "a" else ("b", "a")
        verdicts[(d[f"verdict_{win}"], d[f"verdict_{lose}"])] += 1
        rules[
            (
                d[f"verdict_{win}"],
                "+".join(d[f"rules_{win}"]),
                d[f"verdict_{lose}"],
                "+".join(d[f"rules_{lose}"]),
                abs(d["rank_diff"]),
            )
        ] += 1
        topic_pairs[topic] += 1
        topic_prompts[topic].add(pid)
        instruction_pairs[(ia, ib) if d["label"] == "a" else (ib, ia)].append(pid)

    def by_count(c: Counter) -> list:
        return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))

    return CompositionTables(
        total_pairs=len(der),
        labeled_pairs=labeled,
        no_label=dict(by_count(no_label)),
        verdict_pairs=[VerdictPairRow(p, r, n) for (p, r), n in by_count(verdicts)],
        rule_pairs=[RulePairRow(*k, n) for k, n in by_count(rules)],
        topics=[TopicRow(t, n, len(topic_prompts[t])) for t, n in by_count(topic_pairs)],
        instructions=[
            InstructionPairRow(p, r, len(ids), len(set(ids)))
            for (p, r), ids in sorted(instruction_pairs.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))
        ],
    )


@dataclass(frozen=True)
class JudgeVerdictRow:
    preferred_verdict: str
    rejected_verdict: str
    prompt_shared: int  # common-support pairs with this verdict pair under the SPL (prompt-shared) label
    judge: int  # ... under the verdict judge's label


@dataclass(frozen=True)
class SupportRow:
    name: str  # a source or a shared prompt topic
    labeled_pairs: int
    labeled_prompts: int
    common_pairs: int
    common_prompts: int


@dataclass(frozen=True)
class JudgeComparisonTables:
    """The judge comparison of an SPL build (the paper's Tables VI, IX and X, judge columns)."""

    total_pairs: int
    labeled_prompt_shared: int
    labeled_judge: int
    common_support: int
    same_choice: int  # common-support pairs where both labels prefer the same response
    judge_no_label: dict[str, int]
    verdicts: list[JudgeVerdictRow]
    sources: list[SupportRow]
    topics: list[SupportRow]
    instructions: list[SupportRow]  # "preferred / rejected" instruction under the prompt-shared label

    def to_dict(self) -> dict:
        return asdict(self)

    def to_markdown(self) -> str:
        out = [
            f"{self.total_pairs} pairs: {self.labeled_prompt_shared} labeled by the rules (prompt-shared "
            f"labels), {self.labeled_judge} by the verdict judge, {self.common_support} by both (common "
            f"support), of which {self.same_choice} prefer the same response.",
            "",
        ]
        out += _table(
            ["preferred verdict", "rejected verdict", "prompt-shared labels", "judge labels"],
            "|---|---|---:|---:|",
            [
                f"| {r.preferred_verdict} | {r.rejected_verdict} | {r.prompt_shared} | {r.judge} |"
                for r in self.verdicts
            ],
            "Neither the rules nor the judge labeled a pair, so there is no verdict-pair table.",
        )
        for title, rows in (
            ("source", self.sources),
            ("shared prompt topic", self.topics),
            ("instructions (preferred / rejected, prompt-shared label)", self.instructions),
        ):
            out += _table(
                [title, "labeled pairs (prompts)", "common-support pairs (prompts)"],
                "|---|---:|---:|",
                [
                    f"| {r.name} | {r.labeled_pairs} ({r.labeled_prompts}) | {r.common_pairs} ({r.common_prompts}) |"
                    for r in rows
                ],
                f"No pair labeled by the rules, so no table per {title.split(' (')[0]}.",
            )
        out += _table(
            ["judge no-label reason", "pairs"],
            "|---|---:|",
            [f"| {k} | {v} |" for k, v in self.judge_no_label.items()],
            "The judge labeled every pair, so there is no judge no-label reason to count.",
        )
        return "\n".join(out).rstrip("\n") + "\n"


def judge_comparison_tables(table: pa.Table, ranking: dict[str, int]) -> JudgeComparisonTables:
    """Count a table of every pair with both derivations (``derivation`` and ``judge`` columns)."""
    der = table.column("derivation").to_pylist()
    judge = table.column("judge").to_pylist()
    topics = [p["topic"] if p else None for p in table.column("prompt_attributes").to_pylist()]
    sources = table.column("source").to_pylist()
    prompts = table.column("prompt_id").to_pylist()
    instructions = list(
        zip(table.column("instruction_a").to_pylist(), table.column("instruction_b").to_pylist(), strict=True)
    )
    spl_c: Counter = Counter()
    judge_c: Counter = Counter()
    no_label: Counter = Counter()
    support: dict[str, dict[tuple[str, str], list[str]]] = {"source": {}, "topic": {}, "instruction": {}}
    same = labeled_judge = 0
    for d, j, topic, source, pid, (ia, ib) in zip(
        der, judge, topics, sources, prompts, instructions, strict=True
    ):
        labeled_judge += j["label"] is not None
        if j["label"] is None:
            no_label[j["no_label_reason"]] += 1
        if d["label"] is None:
            continue
        common = j["label"] is not None
        pair = f"{ia} / {ib}" if d["label"] == "a" else f"{ib} / {ia}"
        for kind, name in (("source", source), ("topic", topic), ("instruction", pair)):
            support[kind].setdefault((name, "labeled"), []).append(pid)
            if common:
                support[kind].setdefault((name, "common"), []).append(pid)
        if not common:
            continue
        same += j["label"] == d["label"]
        for counter, v in ((spl_c, d), (judge_c, j)):
            win, lose = ("a", "b") if v["label"] == "a" else ("b", "a")
            counter[(v[f"verdict_{win}"], v[f"verdict_{lose}"])] += 1

    def rows(kind: str) -> list[SupportRow]:
        got = support[kind]
        names = sorted({n for n, _ in got}, key=lambda n: (-len(got[(n, "labeled")]), str(n)))
        return [
            SupportRow(
                n,
                len(got[(n, "labeled")]),
                len(set(got[(n, "labeled")])),
                len(got.get((n, "common"), [])),
                len(set(got.get((n, "common"), []))),
            )
            for n in names
        ]

    keys = sorted(set(spl_c) | set(judge_c), key=lambda k: (-ranking.get(k[0], 0), -ranking.get(k[1], 0), k))
    return JudgeComparisonTables(
        total_pairs=len(der),
        labeled_prompt_shared=sum(d["label"] is not None for d in der),
        labeled_judge=labeled_judge,
        common_support=sum(judge_c.values()),
        same_choice=same,
        judge_no_label=dict(sorted(no_label.items(), key=lambda kv: (-kv[1], kv[0]))),
        verdicts=[JudgeVerdictRow(p, r, spl_c[(p, r)], judge_c[(p, r)]) for p, r in keys],
        sources=rows("source"),
        topics=rows("topic"),
        instructions=rows("instruction"),
    )
