"""Judge quality of a tenet build, computed from the stored judge columns alone.

A reviewer of a judge-labelled preference set asks first how consistent the judge was. The LM-judge
literature measures it by *position consistency* (Shi et al., "Judging the Judges: A Systematic
Study of Position Bias in LLM-as-a-Judge", 2024): a judgement is position-consistent when swapping
the two responses leaves the same winner. The stored probabilities are those of the label shown
first: ``p_a_first`` is P("A") with the original A shown first, ``p_a_second`` is P("A") with the
original B shown first (so P(original A better) in that ordering is ``1 - p_a_second``, and the score
is ``p_a_first - p_a_second``). Hence:

- *consistent*: both orderings prefer the same original response:
  ``p_a_first > .5 > p_a_second`` (A twice) or ``p_a_first < .5 < p_a_second`` (B twice);
- *first slot*: both prefer whichever response is shown first: both probabilities above 0.5;
- *second slot*: both prefer the response shown second: both below 0.5;
- a probability of exactly 0.5 decides nothing, so such a judgement is in none of the three.

Everything here is a pure function of Arrow/numpy columns, so the build writes these figures and
the audit recomputes them from the released ``judge_scores`` with the same code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.held import first_seen_codes

QUANTILES = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class PositionCounts:
    """How the two orderings of each judgement relate (counts over ``judged`` judgements).
    ``inconsistent``: the orderings disagree in sign (first slot + second slot)."""

    judged: int
    consistent: int
    first_slot: int
    second_slot: int
    inconsistent: int = 0

    def rates(self) -> dict[str, float | None]:
        """Each count as a share of ``judged`` (None for an empty set, never NaN)."""
        if not self.judged:
            return {"consistent": None, "first_slot": None, "second_slot": None}
        n = self.judged
        return {
            "consistent": self.consistent / n,
            "first_slot": self.first_slot / n,
            "second_slot": self.second_slot / n,
        }


def position_counts(p_a_first: np.ndarray, p_a_second: np.ndarray) -> PositionCounts:
    """Position consistency of judgements from their two stored probabilities.

    >>> c = position_counts(np.array([0.9, 0.8, 0.2, 0.6]), np.array([0.3, 0.7, 0.1, 0.5]))
    >>> (c.judged, c.consistent, c.first_slot, c.second_slot)
    (4, 1, 1, 1)
    """
    p1 = np.asarray(p_a_first, dtype=np.float64)
    p2 = np.asarray(p_a_second, dtype=np.float64)
    first1, second1 = p1 > 0.5, p1 < 0.5  # ordering 1 prefers the first shown (A) / the second (B)
    first2, second2 = p2 > 0.5, p2 < 0.5  # ordering 2 prefers the first shown (B) / the second (A)
    return PositionCounts(
        judged=int(p1.size),
        consistent=int(np.count_nonzero((first1 & second2) | (second1 & first2))),
        first_slot=int(np.count_nonzero(first1 & first2)),
        second_slot=int(np.count_nonzero(second1 & second2)),
        inconsistent=int(np.count_nonzero((first1 & first2) | (second1 & second2))),
    )


def quantiles(values: np.ndarray, *, scratch: bool = False) -> dict[str, float | None]:
    """Mean and the 10/50/90 % quantiles (numpy's linear rule); None for an empty set.

    ``scratch``: ``values`` is the caller's to lose, so the quantiles partition it in place instead of a
    copy (the figures are the same; at the card, 16.4M judgements' copy is 131 MB per figure).

    >>> quantiles(np.array([0.0, 1.0]))
    {'mean': 0.5, 'q10': 0.1, 'q50': 0.5, 'q90': 0.9}
    """
    # Not sorted first (that doubled the cost on millions of judgements): the mean may differ in the
    # last bits with the row order, which the audit's tolerance absorbs; the quantiles do not.
    v = np.asarray(values, dtype=np.float64)
    keys = ["mean"] + [f"q{round(q * 100)}" for q in QUANTILES]
    if not v.size:
        return dict.fromkeys(keys)
    mean = float(v.mean())  # before a partition in place reorders the values
    out = [mean] + [float(x) for x in np.quantile(v, QUANTILES, overwrite_input=scratch)]
    return {k: round(x, 12) for k, x in zip(keys, out)}


def binary_kappa(judge_a: np.ndarray, source_a: np.ndarray) -> float | None:
    """Cohen's kappa of two boolean labelings of the same items (None when chance agreement is 1).

    >>> binary_kappa(np.array([True, True, False, False]), np.array([True, False, False, False]))
    0.5
    """
    x = np.asarray(judge_a, dtype=bool)
    y = np.asarray(source_a, dtype=bool)
    n = x.size
    if not n:
        return None
    observed = np.count_nonzero(x == y) / n
    px, py = np.count_nonzero(x) / n, np.count_nonzero(y) / n
    chance = px * py + (1 - px) * (1 - py)
    if chance >= 1.0:
        return None
    return round(float((observed - chance) / (1 - chance)), 12)


def wilson_interval(k: int, n: int, z: float = 1.959963984540054) -> tuple[float | None, float | None]:
    """The 95 % Wilson score interval of a share ``k / n`` (None, None for n = 0).

    >>> wilson_interval(18, 37)
    (0.33446404303, 0.641051033344)
    """
    if n <= 0:
        return None, None
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return round(max(0.0, centre - half), 12), round(min(1.0, centre + half), 12)


def kappa_note(judge_a: np.ndarray, source_a: np.ndarray) -> str | None:
    """Why Cohen's kappa says nothing here, or None when both sides vary: with one rater constant kappa
    is 0 for every judge that is not constant (and undefined for one that agrees throughout)."""
    if not np.asarray(source_a).size:
        return None
    if np.all(source_a) or not np.any(source_a):
        return f"degenerate: the pool prefers side {'a' if np.all(source_a) else 'b'} on every pair"
    if np.all(judge_a) or not np.any(judge_a):
        return "degenerate: the judge chose one side on every pair"
    return None


@dataclass(frozen=True)
class SourceAgreement:
    """How often the judge's chosen side equals the source's own preference, over eligible pairs:
    the share with its 95 % Wilson interval (defined when one side is constant, as in every pool read
    from chosen/rejected columns), and Cohen's kappa with the reason when it is degenerate."""

    source: str
    compared: int  # eligible pairs whose source states a side (ties and unstated left out)
    agree: int
    share: float | None
    kappa: float | None
    low: float | None = None  # Wilson 95 % interval of share
    high: float | None = None
    kappa_note: str | None = None


def source_agreement(
    sources: np.ndarray, chosen_a: np.ndarray, source_preference: np.ndarray
) -> list[SourceAgreement]:
    """Per source, the share of pairs whose judge-chosen side is the source's, with Cohen's kappa.

    ``source_preference`` holds ``"a"``, ``"b"``, ``"tie"`` or None per pair; only ``a``/``b`` count.

    >>> [tuple(asdict(s).values()) for s in source_agreement(
    ...     np.array(["hh", "hh", "hh", "pku"]), np.array([True, False, True, True]),
    ...     np.array(["a", "b", "b", None], dtype=object))]
    [('hh', 3, 2, 0.666666666667, 0.4, 0.207659600802, 0.93850805528, None), ('pku', 0, 0, None, None, None, None, None)]
    """
    names = sorted(set(np.asarray(sources).tolist()))
    codes = np.searchsorted(np.array(names, dtype=object), np.asarray(sources, dtype=object))
    pref = np.asarray(source_preference, dtype=object)
    return _coded_agreement(
        names, codes, np.asarray(chosen_a, dtype=bool), _preference_codes(pref == "a", pref == "b")
    )


def _preference_codes(is_a: np.ndarray, is_b: np.ndarray) -> np.ndarray:
    """1 where the source prefers a, 0 where b, -1 where it states no side (tie or none)."""
    return np.where(is_a, 1, np.where(is_b, 0, -1)).astype(np.int8)


def _coded_agreement(
    names: Sequence[str], codes: np.ndarray, chosen_a: np.ndarray, pref: np.ndarray
) -> list[SourceAgreement]:
    """:func:`source_agreement` on integer source codes (indices into ``names``) and preference codes,
    for every source present, in name order; integer masks keep it fast on millions of judgements."""
    stated = pref >= 0
    out = []
    for k in sorted(np.unique(codes).tolist(), key=lambda k: names[k]):
        m = (codes == k) & stated
        judge, src_a = chosen_a[m], pref[m] == 1
        n = int(np.count_nonzero(m))
        agree = int(np.count_nonzero(judge == src_a))
        share = round(agree / n, 12) if n else None
        low, high = wilson_interval(agree, n)
        kappa = binary_kappa(judge, src_a)
        out.append(SourceAgreement(names[k], n, agree, share, kappa, low, high, kappa_note(judge, src_a)))
    return out


@dataclass(frozen=True)
class TenetQuality:
    """Judge quality figures of one tenet (or of the whole build under the name ``"all"``)."""

    tenet: str
    position: PositionCounts
    abs_score_judged: dict[str, float | None]
    abs_score_released: dict[str, float | None]
    eligible: int
    released: int
    capacity: int
    off_label_mass: dict[str, float | None]
    # Judgements the judge stage gave up on (e.g. too little mass on the labels); 0 where the stage
    # records none (see ``not_judged_recorded`` of :func:`judge_quality_section`).
    not_judged: int = 0
    # Per source pool, agreement of the judge's side with the pool's own preference (eligible pairs).
    sources: tuple[SourceAgreement, ...] = ()

    def to_dict(self) -> dict:
        d = asdict(self)
        d["position"] = {**asdict(self.position), "rates": self.position.rates()}
        d["sources"] = [asdict(a) for a in self.sources]
        return d


def _column(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy(zero_copy_only=False)


def _codes(values: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """Distinct values and each row's index into them (a null is the value ``""``)."""
    names, codes = first_seen_codes(values.combine_chunks().fill_null(""))
    return names.to_pylist(), codes.to_numpy(zero_copy_only=False)


@dataclass(frozen=True)
class _Columns:
    """The judge columns as numpy arrays, sources and preferences as integer codes (None: absent)."""

    p1: np.ndarray
    p2: np.ndarray
    m1: np.ndarray
    m2: np.ndarray
    source_names: list[str] | None
    sources: np.ndarray | None
    preference: np.ndarray | None

    @classmethod
    def of(cls, scores: pa.Table) -> _Columns:
        names = codes = pref = None
        if "source_preference" in scores.column_names and "source" in scores.column_names:
            names, codes = _codes(scores.column("source"))
            p = scores.column("source_preference")
            pref = _preference_codes(
                np.asarray(pc.equal(p, "a").fill_null(False)), np.asarray(pc.equal(p, "b").fill_null(False))
            )
        cols = ("p_a_first", "p_a_second", "mass_first", "mass_second")
        # No copy where a column is float64 already (at the card, 4 x 131 MB): the arrays are only read.
        return cls(*(_column(scores, c).astype(np.float64, copy=False) for c in cols), names, codes, pref)


def _quality(
    name: str,
    c: _Columns,
    rows: np.ndarray | slice,
    released_scores: np.ndarray,
    threshold: float,
    capacity: int,
    not_judged: int,
) -> TenetQuality:
    """Figures of the judgements ``rows`` of ``c`` and the |score|s released for them."""
    p1, p2 = c.p1[rows], c.p2[rows]
    abs_score = p1 - p2
    chosen_a = abs_score > 0  # the judge's chosen side is "a" when the score is positive
    np.abs(abs_score, out=abs_score)  # in place: the overall row's scores are 131 MB at the card
    eligible = abs_score >= threshold
    # Off-label mass: the next-token probability the judge put on neither label, per ordering. Computed
    # in place (the overall row is every judgement: each temporary is 2 x 131 MB at the card).
    off = np.concatenate([c.m1[rows], c.m2[rows]])
    np.subtract(1.0, off, out=off)
    np.clip(off, 0.0, 1.0, out=off)
    agreement = ()
    if c.sources is not None and c.preference is not None and c.source_names is not None:
        agreement = tuple(
            _coded_agreement(
                c.source_names,
                c.sources[rows][eligible],
                chosen_a[eligible],
                c.preference[rows][eligible],
            )
        )
    return TenetQuality(
        tenet=name,
        position=position_counts(p1, p2),
        abs_score_judged=quantiles(abs_score, scratch=True),  # eligible is taken from it above
        abs_score_released=quantiles(np.abs(np.asarray(released_scores, dtype=np.float64))),
        eligible=int(np.count_nonzero(eligible)),
        released=int(np.asarray(released_scores).size),
        capacity=int(capacity),
        off_label_mass=quantiles(off, scratch=True),
        not_judged=int(not_judged),
        sources=agreement,
    )


def tenet_quality(
    name: str,
    scores: pa.Table,
    released_scores: np.ndarray,
    threshold: float,
    capacity: int,
    not_judged: int = 0,
) -> TenetQuality:
    """Figures of one tenet from its ``judge_scores`` rows and the |score|s it released."""
    return _quality(name, _Columns.of(scores), slice(None), released_scores, threshold, capacity, not_judged)


def judge_quality(
    scores: pa.Table,
    released: Mapping[str, Sequence[float]],
    *,
    threshold: float,
    capacity: int,
    not_judged: Mapping[str, int] | None = None,
) -> list[TenetQuality]:
    """Per-tenet figures (tenets in sorted order) and the overall row ``"all"``, from stored columns.

    ``scores`` is the build's ``judge_scores`` table (``tenet``, ``p_a_first``, ``p_a_second``,
    ``mass_first``, ``mass_second``, and for source agreement ``source`` and ``source_preference``);
    ``released`` maps each released tenet to its rows' scores; ``not_judged`` the judge stage's
    per-tenet count of judgements it gave up on, where it records one. The overall row's capacity is
    the sum over the released tenets.
    """
    cols = _Columns.of(scores)
    names, codes = _codes(scores.column("tenet"))
    order = np.argsort(codes, kind="stable")  # each tenet's rows, in table order, one slice each
    starts = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=len(names)))])
    skipped = dict(not_judged or {})
    rows, idx = [], order[:0]
    for k in sorted(range(len(names)), key=lambda k: names[k]):
        t = names[k]
        got = np.asarray(released.get(t, ()), dtype=np.float64)
        idx = order[starts[k] : starts[k + 1]]
        rows.append(_quality(t, cols, idx, got, threshold, capacity, skipped.get(t, 0)))
    del (
        order,
        codes,
        idx,
    )  # (idx is a view of order) 196 MB at the card, freed before the overall row's arrays
    every = np.concatenate([np.asarray(v, dtype=np.float64) for v in released.values()] or [np.array([])])
    total = sum(skipped.values())
    rows.append(_quality("all", cols, slice(None), every, threshold, capacity * len(released), total))
    return rows


def judge_quality_section(
    scores: pa.Table,
    released: Mapping[str, Sequence[float]],
    *,
    threshold: float,
    capacity: int,
    not_judged: Mapping[str, int] | None = None,
) -> dict:
    """The ``judge_quality`` entry of a tenet build's report and card inputs (JSON-ready).

    The build writes it and the audit recomputes it from the released columns with this function,
    so both sides agree by construction unless a stored column or the entry itself was changed.
    """
    rows = judge_quality(scores, released, threshold=threshold, capacity=capacity, not_judged=not_judged)
    return section_of(
        rows, threshold=threshold, capacity=capacity, not_judged_recorded=not_judged is not None
    )


def section_of(
    rows: Sequence[TenetQuality], *, threshold: float, capacity: int, not_judged_recorded: bool
) -> dict:
    """The JSON-ready section of :func:`judge_quality`'s rows (its last row is the overall one)."""
    return {
        "threshold": threshold,
        "capacity": capacity,
        "not_judged_recorded": not_judged_recorded,
        "tenets": [r.to_dict() for r in rows if r.tenet != "all"],
        "overall": rows[-1].to_dict(),
    }


def flat_figures(section: object, prefix: str = "") -> dict[str, object]:
    """Every leaf of a judge-quality section by its path (``overall.position.consistent``, ``tenets[t1]…``).

    List entries that carry a ``tenet``, ``source`` or ``setting`` (a quality gate) are named by it, so
    a difference names the tenet, source or gate it is about rather than a list index.
    """
    if isinstance(section, Mapping):
        out: dict[str, object] = {}
        for k, v in section.items():
            out.update(flat_figures(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(section, list):
        out = {}
        for i, v in enumerate(section):
            key = v.get("tenet", v.get("source", v.get("setting", i))) if isinstance(v, Mapping) else i
            out.update(flat_figures(v, f"{prefix}[{key}]"))
        return out
    return {prefix: section}
