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
class CompositionTables:
    total_pairs: int
    labeled_pairs: int
    no_label: dict[str, int]
    verdict_pairs: list[VerdictPairRow]
    rule_pairs: list[RulePairRow]
    topics: list[TopicRow]

    def to_dict(self) -> dict:
        return asdict(self)

    def to_markdown(self) -> str:
        out = ["| preferred verdict | rejected verdict | pairs |", "|---|---|---:|"]
        out += [f"| {r.preferred_verdict} | {r.rejected_verdict} | {r.pairs} |" for r in self.verdict_pairs]
        out += [f"| **total** | | {self.labeled_pairs} |", ""]
        out += [
            "| preferred verdict | rule | rejected verdict | rule | rank difference | pairs |",
            "|---|---|---|---|---:|---:|",
        ]
        out += [
            f"| {r.preferred_verdict} | {r.preferred_rules} | {r.rejected_verdict} | {r.rejected_rules} "
            f"| {r.rank_difference} | {r.pairs} |"
            for r in self.rule_pairs
        ]
        out += ["", "| shared prompt topic | pairs (distinct prompts) |", "|---|---:|"]
        out += [f"| {r.topic} | {r.pairs} ({r.prompts}) |" for r in self.topics]
        out += ["", "| no-label reason | pairs |", "|---|---:|"]
        out += [f"| {k} | {v} |" for k, v in self.no_label.items()]
        return "\n".join(out) + "\n"


def composition_tables(table: pa.Table) -> CompositionTables:
    """Count labeled pairs by verdict pair, by applied rules, and by shared prompt topic."""
    der = table.column("derivation").to_pylist()
    topics = [p["topic"] if p else None for p in table.column("prompt_attributes").to_pylist()]
    prompt_ids = table.column("prompt_id").to_pylist()
    verdicts: Counter = Counter()
    rules: Counter = Counter()
    no_label: Counter = Counter()
    topic_pairs: Counter = Counter()
    topic_prompts: defaultdict[str, set] = defaultdict(set)
    labeled = 0
    for d, topic, pid in zip(der, topics, prompt_ids):
        if d["label"] is None:
            no_label[d["no_label_reason"]] += 1
            continue
        labeled += 1
        win, lose = ("a", "b") if d["label"] == "a" else ("b", "a")
        verdicts[(d[f"verdict_{win}"], d[f"verdict_{lose}"])] += 1
        rules[
            (d[f"verdict_{win}"], "+".join(d[f"rules_{win}"]), d[f"verdict_{lose}"], "+".join(d[f"rules_{lose}"]),
             abs(d["rank_diff"]))
        ] += 1
        topic_pairs[topic] += 1
        topic_prompts[topic].add(pid)

    def by_count(c: Counter) -> list:
        return sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))

    return CompositionTables(
        total_pairs=len(der),
        labeled_pairs=labeled,
        no_label=dict(by_count(no_label)),
        verdict_pairs=[VerdictPairRow(p, r, n) for (p, r), n in by_count(verdicts)],
        rule_pairs=[RulePairRow(*k, n) for k, n in by_count(rules)],
        topics=[TopicRow(t, n, len(topic_prompts[t])) for t, n in by_count(topic_pairs)],
    )
