"""Applying a rule base to encoded attribute columns: which rules fire, and the verdict."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spl_hf.rules.compile import Columns, evaluate, row_evaluator
from spl_hf.rules.rulebase import RuleBase

NO_VERDICT = -1
CONFLICT = -2


@dataclass(frozen=True)
class RuleApplication:
    applied: np.ndarray  # (n, n_rules) bool: rule j fires on row i
    verdict: np.ndarray  # (n,) int16: index into rulebase.verdict_names, NO_VERDICT or CONFLICT


def verdict_index(rb: RuleBase) -> np.ndarray:
    """For each rule, the index of its verdict in ``rb.verdict_names``."""
    names = rb.verdict_names
    return np.array([names.index(r.verdict) for r in rb.rules], dtype=np.int16)


def apply_rules(rb: RuleBase, cols: Columns, n: int) -> RuleApplication:
    applied = np.zeros((n, len(rb.rules)), dtype=bool)
    memo: dict = {}
    for j, cond in enumerate(rb.expanded()):
        applied[:, j] = evaluate(cond, cols, rb.schema, memo)
    vidx = verdict_index(rb)
    big = np.int16(np.iinfo(np.int16).max)
    lo = np.where(applied, vidx, big).min(axis=1, initial=big)
    hi = np.where(applied, vidx, -1).max(axis=1, initial=-1)
    verdict = np.where(hi < 0, NO_VERDICT, np.where(lo != hi, CONFLICT, hi)).astype(np.int16)
    return RuleApplication(applied, verdict)


def apply_rules_row(rb: RuleBase, row: dict, _cache: dict = {}) -> tuple[list[str], str | None, bool]:  # noqa: B006
    """Reference per-row path: (applied rule ids, verdict or None, conflict?)."""
    key = rb.hash
    if key not in _cache:
        _cache[key] = [(r.id, r.verdict, row_evaluator(c)) for r, c in zip(rb.rules, rb.expanded())]
    fired = [(rid, v) for rid, v, f in _cache[key] if f(row)]
    verdicts = {v for _, v in fired}
    if len(verdicts) > 1:
        return [rid for rid, _ in fired], None, True
    return [rid for rid, _ in fired], (verdicts.pop() if verdicts else None), False
