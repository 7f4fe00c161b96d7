"""Coverage analysis: apply a rule base to every assignment the schema allows."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from spl_hf.rules.apply import CONFLICT, NO_VERDICT, apply_rules, verdict_index
from spl_hf.rules.rulebase import RuleBase

MAX_PAIRS = 1000  # overlapping / conflicting rule pairs listed in a report
_PAIR_BUDGET = 5_000_000  # co-firing (row, pair) incidences enumerated exactly
_BLOCK = 32  # rules per block of the dense co-occurrence scan
_CHUNK = 4096  # columns per product in that scan


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
    overlaps: list[Overlap]  # in rule order, at most `max_pairs`
    conflicts: list[Conflict]  # in rule order, at most `max_pairs`
    no_verdict: int
    conflict_assignments: int = 0  # assignments on which rules of different verdicts fire (exact)
    overlaps_complete: bool = True  # False when more overlapping pairs exist than were listed
    conflicts_complete: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


def enumerate_assignments(rb: RuleBase) -> tuple[dict[str, np.ndarray], int]:
    """Every combination of attribute values as encoded columns (categories as codes)."""
    attrs = rb.schema.attributes
    grids = np.indices([len(a.options) for a in attrs]).reshape(len(attrs), -1)
    cols = {
        a.name: (g.astype(bool) if a.kind == "bool" else g.astype(np.int16)) for a, g in zip(attrs, grids)
    }
    return cols, grids.shape[1]


def decode_assignment(rb: RuleBase, cols: dict[str, np.ndarray], i: int) -> dict:
    out: dict = {}
    for a in rb.schema.attributes:
        v = cols[a.name][i]
        out[a.name] = bool(v) if a.kind == "bool" else a.values[int(v)]
    return out


def cofiring_pairs(m: np.ndarray, limit: int, differ: np.ndarray | None = None) -> tuple[list, bool]:
    """The first `limit` rule pairs (i < j, in rule order) that fire together on a row of `m`, with counts.

    ``differ`` (one label per rule) keeps only pairs with different labels (conflicts). Rows are
    first reduced to their distinct patterns of fired rules (with multiplicities). When few rules
    fire per pattern, pairs are enumerated per pattern (exact, no rules × rules matrix). Otherwise
    co-firing counts are computed one small block of rules at a time with dense products over the
    patterns, stopping as soon as `limit` pairs are found. Returns (pairs as (i, j, count), complete).
    """
    r = m.shape[1]
    if r < 2 or m.shape[0] == 0:
        return [], True
    packed, mult = np.unique(np.packbits(m, axis=1), axis=0, return_counts=True)
    pats = np.unpackbits(packed, axis=1, count=r).astype(bool)
    k = pats.sum(axis=1, dtype=np.int64)
    if int((k * (k - 1) // 2).sum()) <= _PAIR_BUDGET:
        keys, weights = [], []
        for pat, w in zip(pats, mult):
            idx = np.flatnonzero(pat)
            if len(idx) >= 2:
                a, b = np.triu_indices(len(idx), k=1)
                keys.append(idx[a].astype(np.int64) * r + idx[b])
                weights.append(np.full(len(a), w, dtype=np.int64))
        if not keys:
            return [], True
        uniq, inv = np.unique(np.concatenate(keys), return_inverse=True)
        counts = np.bincount(inv, weights=np.concatenate(weights)).astype(np.int64)
        i, j = uniq // r, uniq % r
        if differ is not None:
            keep = differ[i] != differ[j]
            i, j, counts = i[keep], j[keep], counts[keep]
        found = [(int(a), int(b), int(c)) for a, b, c in zip(i[:limit], j[:limit], counts[:limit])]
        return found, len(i) <= limit
    pf = pats.astype(np.float32)  # counts stay exact in float32 up to 2**24 rows
    weighted = pf * mult[:, None].astype(np.float32)
    out: list = []
    for start in range(0, r - 1, _BLOCK):
        stop = min(start + _BLOCK, r - 1)
        for cstart in range(start + 1, r, _CHUNK):
            co = weighted[:, start:stop].T @ pf[:, cstart : cstart + _CHUNK]
            i, j = np.nonzero(co)
            c = co[i, j]
            i, j = i + start, j + cstart
            keep = j > i
            if differ is not None:
                keep &= differ[i] != differ[j]
            out += [
                (int(a), int(b), int(x)) for a, b, x in zip(i[keep][:limit], j[keep][:limit], c[keep][:limit])
            ]
        out.sort()
        # pairs of later blocks start with a larger i, so everything up to here is final
        if len(out) > limit:
            return out[:limit], False
    return out, True


def check_coverage(rb: RuleBase, max_pairs: int = MAX_PAIRS) -> CoverageReport:
    """Apply the rule base to every assignment; list overlapping and conflicting rule pairs.

    Conflicts are exact per assignment (`conflict_assignments`, from the per-verdict grouping of
    rules); pair listings are capped at `max_pairs` each and say whether they are complete.
    """
    cols, n = enumerate_assignments(rb)
    app = apply_rules(rb, cols, n)
    ids = rb.rule_ids
    found, overlaps_complete = cofiring_pairs(app.applied, max_pairs)
    overlaps = [Overlap((ids[i], ids[j]), c) for i, j, c in found]
    conflict_rows = np.flatnonzero(app.verdict == CONFLICT)
    found, conflicts_complete = cofiring_pairs(app.applied[conflict_rows], max_pairs, verdict_index(rb))
    conflicts = []
    for i, j, c in found:
        first = conflict_rows[
            int(np.flatnonzero(app.applied[conflict_rows, i] & app.applied[conflict_rows, j])[0])
        ]
        vi, vj = rb.rules[i].verdict, rb.rules[j].verdict
        conflicts.append(Conflict((ids[i], ids[j]), (vi, vj), c, decode_assignment(rb, cols, int(first))))
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
        conflict_assignments=len(conflict_rows),
        overlaps_complete=overlaps_complete,
        conflicts_complete=conflicts_complete,
    )
