"""Coverage analysis: apply a rule base to every assignment the schema allows."""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import numpy as np

from spl_hf.rules.apply import NO_VERDICT, apply_rules
from spl_hf.rules.rulebase import RuleBase


@dataclass(frozen=True)
class Overlap:
    rules: tuple[str, str]
    count: int


@dataclass(frozen=True)
class Conflict:
    rules: tuple[str, str]
    verdicts: tuple[str, str]
    count: int
    example: dict


@dataclass(frozen=True)
class CoverageReport:
    rulebase_id: str
    rulebase_hash: str
    assignments: int
    rule_counts: dict[str, int]
    verdict_counts: dict[str, int]
    overlaps: list[Overlap]
    conflicts: list[Conflict]
    no_verdict: int

    def to_dict(self) -> dict:
        return asdict(self)


def enumerate_assignments(rb: RuleBase) -> tuple[dict[str, np.ndarray], int]:
    """Every combination of attribute values as encoded columns (categories as codes)."""
    attrs = rb.schema.attributes
    grids = np.indices([len(a.options) for a in attrs]).reshape(len(attrs), -1)
    cols = {a.name: (g.astype(bool) if a.kind == "bool" else g.astype(np.int16)) for a, g in zip(attrs, grids)}
    return cols, grids.shape[1]


def decode_assignment(rb: RuleBase, cols: dict[str, np.ndarray], i: int) -> dict:
    out: dict = {}
    for a in rb.schema.attributes:
        v = cols[a.name][i]
        out[a.name] = bool(v) if a.kind == "bool" else a.values[int(v)]
    return out


def check_coverage(rb: RuleBase) -> CoverageReport:
    cols, n = enumerate_assignments(rb)
    app = apply_rules(rb, cols, n)
    ids = rb.rule_ids
    co = app.applied.T.astype(np.int64) @ app.applied.astype(np.int64)
    overlaps: list[Overlap] = []
    conflicts: list[Conflict] = []
    for i, j in itertools.combinations(range(len(ids)), 2):
        if co[i, j] == 0:
            continue
        overlaps.append(Overlap((ids[i], ids[j]), int(co[i, j])))
        vi, vj = rb.rules[i].verdict, rb.rules[j].verdict
        if vi != vj:
            first = int(np.flatnonzero(app.applied[:, i] & app.applied[:, j])[0])
            conflicts.append(Conflict((ids[i], ids[j]), (vi, vj), int(co[i, j]), decode_assignment(rb, cols, first)))
    names = rb.verdict_names
    verdict_counts = {v: int((app.verdict == k).sum()) for k, v in enumerate(names)}
    return CoverageReport(
        rulebase_id=rb.id,
        rulebase_hash=rb.hash,
        assignments=n,
        rule_counts={rid: int(c) for rid, c in zip(ids, app.applied.sum(axis=0))},
        verdict_counts=verdict_counts,
        overlaps=overlaps,
        conflicts=conflicts,
        no_verdict=int((app.verdict == NO_VERDICT).sum()),
    )
